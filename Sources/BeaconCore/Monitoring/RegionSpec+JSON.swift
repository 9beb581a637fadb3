/// A region as JSON, with the config's keys (`id`, `uuid`, `major`, `minor`,
/// `notify_on_entry`, `notify_on_exit`, `dwell`, `ranging`): the body of
/// `PUT /v1/clients/{c}/regions/{r}` and of `monitor` requests in a replay trace.
extension RegionSpec {
    public static let jsonKeys = [
        "id", "uuid", "major", "minor", "notify_on_entry", "notify_on_exit", "dwell", "ranging",
    ]

    /// Parses and validates like the config does; the error names the key.
    public init(json: JSONValue, id defaultID: String? = nil) throws(RegionSpecError) {
        guard case let .object(members) = json else { throw RegionSpecError("", "expected a JSON object") }
        for (key, _) in members where !RegionSpec.jsonKeys.contains(key) {
            throw RegionSpecError(key, "unknown key")
        }
        guard let id = json["id"]?.stringValue ?? defaultID, !id.isEmpty else {
            throw RegionSpecError("id", "missing region id")
        }
        guard let uuidText = json["uuid"]?.stringValue else { throw RegionSpecError("uuid", "missing uuid") }
        guard let uuid = BeaconUUID(uuidText) else {
            throw RegionSpecError(
                "uuid", "expected a UUID like \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\", got \"\(uuidText)\"")
        }
        self.init(id: id, uuid: uuid)
        major = try RegionSpec.uint16(json, "major")
        minor = try RegionSpec.uint16(json, "minor")
        if minor != nil && major == nil { throw RegionSpecError("minor", "needs major (minor alone cannot match)") }
        notifyOnEntry = try RegionSpec.bool(json, "notify_on_entry") ?? true
        notifyOnExit = try RegionSpec.bool(json, "notify_on_exit") ?? true
        ranging = try RegionSpec.bool(json, "ranging") ?? false
        if let dwellValue = json["dwell"], !dwellValue.isNull {
            guard case let .array(items) = dwellValue else {
                throw RegionSpecError("dwell", "expected a list of durations")
            }
            var spans: [TimeSpan] = []
            for item in items {
                guard let text = item.stringValue, let span = TimeSpan(parsing: text) else {
                    throw RegionSpecError("dwell", "expected a duration like \"2m\", got \(item.serialized)")
                }
                guard span >= .seconds(1), span <= .hours(2) else {
                    throw RegionSpecError("dwell", "each dwell must be between 1s and 2h, got \"\(text)\"")
                }
                spans.append(span)
            }
            dwell = Array(Set(spans)).sorted()
        }
    }

    private static func uint16(_ json: JSONValue, _ key: String) throws(RegionSpecError) -> UInt16? {
        guard let v = json[key], !v.isNull else { return nil }
        guard let n = v.numberValue, n == n.rounded(), n >= 0, n <= 65535 else {
            throw RegionSpecError(key, "expected an integer 0...65535, got \(v.serialized)")
        }
        return UInt16(n)
    }

    private static func bool(_ json: JSONValue, _ key: String) throws(RegionSpecError) -> Bool? {
        guard let v = json[key], !v.isNull else { return nil }
        guard case let .bool(b) = v else { throw RegionSpecError(key, "expected true or false, got \(v.serialized)") }
        return b
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("id", .string(id)), ("uuid", .string(uuid.description))]
        if let major { members.append(("major", .number(Double(major)))) }
        if let minor { members.append(("minor", .number(Double(minor)))) }
        members.append(("notify_on_entry", .bool(notifyOnEntry)))
        members.append(("notify_on_exit", .bool(notifyOnExit)))
        members.append(("dwell", .array(dwell.map { .string($0.description) })))
        members.append(("ranging", .bool(ranging)))
        return .object(members)
    }
}

/// A region body that cannot be monitored, naming the key at fault.
public struct RegionSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    public var key: String
    public var message: String
    public init(_ key: String, _ message: String) {
        self.key = key
        self.message = message
    }
    public var description: String { key.isEmpty ? message : "\(key): \(message)" }
}
