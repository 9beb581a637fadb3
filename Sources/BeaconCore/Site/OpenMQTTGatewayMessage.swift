/// What OpenMQTTGateway and Theengs Gateway publish on `home/<gateway>/BTtoMQTT/<MAC>`: `id`
/// (the address, with colons), `rssi`, and where the advertisement has them
/// `manufacturerdata` (hex, the company id first, little-endian: `4c00…` for Apple),
/// `servicedata` (hex) with `servicedatauuid` (`0xfeaa` from OpenMQTTGateway, `feaa` from
/// Theengs Gateway, or a 128-bit UUID), `txpower`, `name`. Read into a `Sighting` of the
/// gateway's receiver as a §1.2 record would be (SPEC §9).
public enum OpenMQTTGatewayMessage: ForeignMessage {
    /// `<gateway>/BTtoMQTT/<MAC>` under the prefix: the gateway's name, or nil.
    public static func parseTopic(_ topic: String, prefix: String) -> String? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[1] == "BTtoMQTT", !levels[0].isEmpty, !levels[2].isEmpty else { return nil }
        return String(levels[0])
    }

    static func sighting(_ json: JSONValue, rssi: Int, receiver: String, at time: Timestamp) -> Result<
        Sighting, ForeignMessageError
    > {
        guard let id = json["id"]?.stringValue, let address = BluetoothAddress(id) else {
            return .failure(.init("no_identity", "expected \"id\", an address like \"AA:BB:CC:DD:EE:FF\""))
        }
        var sighting = Sighting(time: time, receiver: receiver, address: address.text, rssi: rssi)
        if let tx = json["txpower"]?.numberValue, tx.isFinite, abs(tx) < 128 { sighting.txPower = Int(tx.rounded()) }
        if let name = json["name"]?.stringValue, !name.isEmpty { sighting.name = String(name.prefix(64)) }
        if let hex = json["manufacturerdata"]?.stringValue {
            guard let bytes = Hex.decode(hex), bytes.count >= 2, bytes.count <= 255 else {
                return .failure(.init("bad_data", "\"manufacturerdata\" is not hex of a company id and its data"))
            }
            sighting.manufacturerData = [
                ManufacturerDatum(company: UInt16(bytes[0]) | UInt16(bytes[1]) << 8, payload: Array(bytes[2...]))
            ]
        }
        if let hex = json["servicedata"]?.stringValue {
            guard let bytes = Hex.decode(hex), bytes.count <= 255 else {
                return .failure(.init("bad_data", "\"servicedata\" is not hex"))
            }
            guard let text = json["servicedatauuid"]?.stringValue, let uuid = serviceUUID(text) else {
                return .failure(.init("bad_data", "\"servicedata\" without a \"servicedatauuid\" beacond can read"))
            }
            sighting.serviceData = [ServiceDatum(uuid: uuid, payload: bytes)]
        }
        return .success(sighting)
    }

    /// `0xfeaa`, `feaa` or a 128-bit UUID, as the 128-bit form in lower case.
    static func serviceUUID(_ text: String) -> String? {
        let short = text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : text
        if short.utf8.count == 4, Hex.decode(short) != nil {
            return "0000\(short.lowercased())-0000-1000-8000-00805f9b34fb"
        }
        return BeaconUUID(text).map { $0.description.lowercased() }
    }

    /// The message a gateway named `gateway` would publish for `sighting`, with its topic: what
    /// the simulator plays.
    public static func encode(_ sighting: Sighting, prefix: String, gateway: String) -> (topic: String, payload: String)
    {
        let address = BluetoothAddress(sighting.address) ?? BluetoothAddress(value: 0)
        var w = JSONTextWriter()
        w.openObject()
        w.key("id")
        w.string(address.text)
        w.key("rssi")
        w.int(sighting.rssi)
        if let m = sighting.manufacturerData.first {
            w.key("manufacturerdata")
            w.string(Hex.encode([UInt8(m.company & 0xFF), UInt8(m.company >> 8)] + m.payload))
        }
        if let s = sighting.serviceData.first {
            w.key("servicedata")
            w.string(Hex.encode(s.payload))
            w.key("servicedatauuid")
            let u = s.uuid.lowercased()
            w.string(
                u.hasPrefix("0000") && u.hasSuffix("-0000-1000-8000-00805f9b34fb") ? "0x" + u.dropFirst(4).prefix(4) : u
            )
        }
        w.closeObject()
        let mac = address.text.filter { $0 != ":" }
        return ("\(prefix)/\(gateway)/BTtoMQTT/\(mac)", w.text)
    }
}
