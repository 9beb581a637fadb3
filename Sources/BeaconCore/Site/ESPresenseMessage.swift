/// What an ESPresense node publishes on `espresense/devices/<id>/<room>` (its firmware's
/// `BleFingerprint::fill`): `id` (`iBeacon:<uuid>-<major>-<minor>`, `irk:<key>`, `known:<mac>`,
/// a public address, fingerprints such as `apple:…` or `md:…`), `idType`, `rssi@1m`, `rssi`
/// (the median of its last three), `raw`, `distance`, `speed`, `mac` (twelve lower-case
/// digits), `interval`, and battery or climate fields for some devices.
///
/// Read into a `Sighting` of the room's receiver (SPEC §9): the `rssi` as heard, the identity
/// from the id when it is an iBeacon's (its advertisement rebuilt, `rssi@1m` as its measured
/// power) and from `mac` otherwise, so a `beacon: {address}` or `{irk}` asset matches it as
/// when beacond hears it itself. The node's own `distance` is not used: ranges come from the
/// RSSI with that receiver's calibration, like every receiver's.
public enum ESPresenseMessage: ForeignMessage {
    /// `devices/<id>/<room>` under the prefix: the room and the id, or nil.
    public static func parseTopic(_ topic: String, prefix: String) -> (id: String, room: String)? {
        guard topic.hasPrefix(prefix + "/devices/") else { return nil }
        let levels = topic.dropFirst(prefix.count + 9).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 2, !levels[0].isEmpty, !levels[1].isEmpty else { return nil }
        return (String(levels[0]), String(levels[1]))
    }

    static func sighting(_ json: JSONValue, rssi: Int, receiver: String, at time: Timestamp) -> Result<
        Sighting, ForeignMessageError
    > {
        let id = json["id"]?.stringValue ?? ""
        var address: String?
        if let mac = json["mac"]?.stringValue {
            guard let parsed = BluetoothAddress(mac) else {
                return .failure(.init("malformed", "\"mac\" is not twelve hex digits: \"\(mac.prefix(40))\""))
            }
            address = parsed.text
        }
        var sighting = Sighting(time: time, receiver: receiver, address: address ?? "", rssi: rssi)
        if let name = json["name"]?.stringValue, !name.isEmpty { sighting.name = String(name.prefix(64)) }
        if id.hasPrefix("iBeacon:") {
            guard let beacon = iBeacon(id.dropFirst(8)) else {
                return .failure(
                    .init("malformed", "an iBeacon id is iBeacon:<uuid>-<major>-<minor>, got \"\(id.prefix(80))\""))
            }
            let power = json["rssi@1m"]?.numberValue.flatMap { $0.isFinite && abs($0) < 128 ? Int($0.rounded()) : nil }
            sighting.manufacturerData = [
                ManufacturerDatum(company: 0x004C, payload: beacon.payload(measuredPower: power ?? -59))
            ]
            // An address is needed by no one for an iBeacon: its identity is in the frame.
            if address == nil { sighting.address = "00:00:00:00:00:00" }
        } else if address == nil {
            return .failure(.init("no_identity", "no \"mac\" and an id that is not an iBeacon's: \"\(id.prefix(80))\""))
        }
        return .success(sighting)
    }

    /// `<uuid>-<major>-<minor>` (decimal), as ESPresense writes an iBeacon's id.
    static func iBeacon(_ text: Substring) -> IBeaconID? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 7, let uuid = BeaconUUID(parts[0..<5].joined(separator: "-")),
            let major = UInt16(parts[5]), let minor = UInt16(parts[6])
        else { return nil }
        return IBeaconID(uuid: uuid, major: major, minor: minor)
    }

    /// The message an ESPresense node in `room` would publish for `sighting`, with its topic:
    /// what the simulator plays. An iBeacon by its id; anything else as an address the node
    /// was told (`known:<mac>`; the reader takes the `mac` alike for a phone's `irk:` id).
    public static func encode(_ sighting: Sighting, prefix: String, room: String) -> (topic: String, payload: String) {
        let mac = BluetoothAddress(sighting.address).map { Hex.encode(Self.bytes($0)) } ?? "000000000000"
        var id = "known:" + mac
        var power = -59
        if let m = sighting.manufacturerData.first(where: { $0.company == 0x004C }),
            case let .success(frame) = BeaconDecoder.decode(sighting), case let .ibeacon(b)? = frame.identity
        {
            id = "iBeacon:\(b.uuid.description.lowercased())-\(b.major)-\(b.minor)"
            if m.payload.count >= 23 { power = Int(Int8(bitPattern: m.payload[22])) }
        }
        var w = JSONTextWriter()
        w.openObject()
        w.key("id")
        w.string(id)
        w.key("rssi@1m")
        w.int(power)
        w.key("rssi")
        w.int(sighting.rssi)
        w.key("mac")
        w.string(mac)
        w.closeObject()
        return ("\(prefix)/devices/\(id)/\(room)", w.text)
    }

    static func bytes(_ a: BluetoothAddress) -> [UInt8] {
        stride(from: 40, through: 0, by: -8).map { UInt8(truncatingIfNeeded: a.value >> UInt64($0)) }
    }
}
