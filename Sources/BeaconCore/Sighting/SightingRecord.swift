/// Why a sighting record line was rejected. The line is skipped; nothing else is affected.
public struct SightingRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Sighting records (SPEC §1.2): one JSON object per line, as replay traces and
/// `POST /v1/sightings` carry them. Unknown keys are ignored so that newer receivers can add
/// fields; every known key is checked for its type.
public enum SightingRecord {
    /// The largest line accepted; a longer one is rejected before it is parsed.
    public static let maxLineBytes = 64 * 1024

    public static func parse(line: String) throws(SightingRecordError) -> Sighting {
        guard line.utf8.count <= maxLineBytes else {
            throw SightingRecordError("line longer than \(maxLineBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw SightingRecordError(error.description)
        }
        return try parse(value)
    }

    public static func parse(_ value: JSONValue) throws(SightingRecordError) -> Sighting {
        guard case .object = value else { throw SightingRecordError("expected a JSON object") }
        guard let tValue = value["t"] else { throw SightingRecordError("missing \"t\" (seconds since the Unix epoch)") }
        guard let seconds = tValue.numberValue, let time = Timestamp(unixSeconds: seconds) else {
            throw SightingRecordError("\"t\" must be a number of seconds since the Unix epoch")
        }
        let receiver = try requiredString(value, "receiver")
        if let problem = Identifier.problem(receiver) { throw SightingRecordError("\"receiver\": \(problem)") }
        let address = try requiredString(value, "address")
        guard let rssiValue = value["rssi"], let rssi = rssiValue.numberValue else {
            throw SightingRecordError("missing or non-numeric \"rssi\"")
        }
        guard rssi == rssi.rounded(), rssi >= -127, rssi <= 20 else {
            throw SightingRecordError("\"rssi\" must be an integer dBm between -127 and 20, got \(rssi)")
        }
        let txPower = try optionalInt(value, "tx_power", range: -127...127)
        return Sighting(
            time: time, receiver: receiver, address: address,
            addressType: try optionalString(value, "address_type"), rssi: Int(rssi), txPower: txPower,
            name: try optionalString(value, "name"),
            manufacturerData: try manufacturerData(value["manufacturer_data"]),
            serviceData: try serviceData(value["service_data"]))
    }

    private static func requiredString(_ object: JSONValue, _ key: String) throws(SightingRecordError) -> String {
        guard let s = object[key]?.stringValue, !s.isEmpty else {
            throw SightingRecordError("missing or non-string \"\(key)\"")
        }
        return s
    }

    private static func optionalString(_ object: JSONValue, _ key: String) throws(SightingRecordError) -> String? {
        guard let v = object[key], !v.isNull else { return nil }
        guard let s = v.stringValue else { throw SightingRecordError("\"\(key)\" must be a string or null") }
        return s
    }

    private static func optionalInt(
        _ object: JSONValue, _ key: String, range: ClosedRange<Int>
    ) throws(SightingRecordError) -> Int? {
        guard let v = object[key], !v.isNull else { return nil }
        guard let n = v.numberValue, n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound)
        else { throw SightingRecordError("\"\(key)\" must be an integer in \(range) or null") }
        return Int(n)
    }

    private static func manufacturerData(_ v: JSONValue?) throws(SightingRecordError) -> [ManufacturerDatum] {
        guard let v, !v.isNull else { return [] }
        guard case let .object(members) = v else {
            throw SightingRecordError("\"manufacturer_data\" must be an object of company id -> hex")
        }
        var out: [ManufacturerDatum] = []
        for (key, payload) in members {
            guard let company = UInt16(key) else {
                throw SightingRecordError("manufacturer_data key \"\(key)\" is not a company id 0...65535 in decimal")
            }
            guard let hex = payload.stringValue, let bytes = Hex.decode(hex) else {
                throw SightingRecordError("manufacturer_data[\"\(key)\"] is not an even-length hex string")
            }
            out.append(ManufacturerDatum(company: company, payload: bytes))
        }
        return out
    }

    private static func serviceData(_ v: JSONValue?) throws(SightingRecordError) -> [ServiceDatum] {
        guard let v, !v.isNull else { return [] }
        guard case let .object(members) = v else {
            throw SightingRecordError("\"service_data\" must be an object of service UUID -> hex")
        }
        var out: [ServiceDatum] = []
        for (key, payload) in members {
            guard let hex = payload.stringValue, let bytes = Hex.decode(hex) else {
                throw SightingRecordError("service_data[\"\(key)\"] is not an even-length hex string")
            }
            out.append(ServiceDatum(uuid: key, payload: bytes))
        }
        return out
    }

    /// The record form of a sighting, as `POST /v1/sightings`, traces and a site's batches
    /// carry it: one line, without its newline.
    public static func text(_ s: Sighting) -> String {
        var w = JSONTextWriter(capacity: 192)
        write(s, into: &w)
        return w.text
    }

    /// Written from the flat value: the address and the payloads' hex go straight into the
    /// line (a site's gateways send every sighting this way).
    public static func write(_ s: Sighting, into w: inout JSONTextWriter) {
        write(s, receiver: s.receiver, into: &w)
    }

    /// The same with the receiver's name already at hand (a batch writes a few receivers'
    /// sightings over and over: the names table is read once per receiver, not per line).
    public static func write(_ s: Sighting, receiver: String, into w: inout JSONTextWriter) {
        w.openObject()
        w.member("t", s.time.unixSeconds)
        w.member("receiver", receiver)
        w.key("address")
        if let address = s.bluetoothAddress {
            w.asciiString(count: 17) { address.write(into: $0) }
        } else {
            w.string(s.address)
        }
        if let at = s.addressType { w.member("address_type", at) }
        w.key("rssi")
        w.int(s.rssi)
        if let tx = s.txPower {
            w.key("tx_power")
            w.int(tx)
        }
        if let name = s.name { w.member("name", name) }
        var services = 0
        var manufacturers = 0
        _ = s.data.first { (e: AdvertisementData.Entry) -> Bool? in
            if e.isManufacturer {
                if manufacturers == 0 {
                    w.key("manufacturer_data")
                    w.openObject()
                }
                manufacturers += 1
                w.key(integer: Int(e.company))
                w.hexString(e.payload)
            } else {
                if manufacturers > 0 {
                    w.closeObject()
                    manufacturers = 0
                }
                if services == 0 {
                    w.key("service_data")
                    w.openObject()
                }
                services += 1
                w.key(e.serviceKey)
                w.hexString(e.payload)
            }
            return nil
        }
        if manufacturers > 0 || services > 0 { w.closeObject() }
        w.closeObject()
    }
}
