/// A message of another system's receivers (ESPresense, OpenMQTTGateway) that beacond takes
/// as sightings: both send one JSON object with an `rssi` per message, read here once.
protocol ForeignMessage {
    /// The sighting the message's `json` describes, its `rssi` already read.
    static func sighting(_ json: JSONValue, rssi: Int, receiver: String, at time: Timestamp) -> Result<
        Sighting, ForeignMessageError
    >
}

/// Why a message of another system's receiver was not taken: a counter's reason and a line
/// for the log.
public struct ForeignMessageError: Error, Sendable, Equatable {
    public var reason: String
    public var detail: String
    public init(_ reason: String, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }
}

extension ForeignMessage {
    /// The sighting `payload` describes, heard by `receiver` at `time`, or why not. Both
    /// systems send one JSON object per message with its `rssi` (ESPresense's a median,
    /// possibly fractional: rounded; -127…20 dBm); each reads the rest its own way.
    static func sighting(_ payload: UnsafeRawBufferPointer, receiver: String, at time: Timestamp) -> Result<
        Sighting, ForeignMessageError
    > {
        let json: JSONValue
        do { json = try JSONParser.parse(Array(payload)) } catch {
            return .failure(.init("malformed", error.description))
        }
        guard case .object = json else { return .failure(.init("malformed", "expected a JSON object")) }
        guard let rssi = json["rssi"]?.numberValue, rssi.isFinite, (-127...20).contains(rssi) else {
            return .failure(.init("no_rssi", "expected \"rssi\", a number from -127 to 20"))
        }
        return sighting(json, rssi: Int(rssi.rounded()), receiver: receiver, at: time)
    }
}
