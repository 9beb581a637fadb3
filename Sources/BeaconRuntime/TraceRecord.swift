import BeaconCore

/// One line of a replay trace: a sighting record (SPEC §1.2), or a recorded API request.
///
/// Requests let a trace reproduce what the API did during a recorded day — regions added
/// at run time, removed, or asked for their state — so replay covers the region limit and
/// replacement too. Their shape mirrors the API:
/// `{"t": …, "request": "monitor", "client": "c", "region": {"id": "r", "uuid": "…"}}`,
/// `{"t": …, "request": "unmonitor", "client": "c", "region": "r"}`,
/// `{"t": …, "request": "request_state", "client": "c", "region": "r"}`.
public enum TraceRecord: Sendable {
    case sighting(Sighting)
    case request(TraceRequest, time: Timestamp)

    public enum TraceRequest: Sendable {
        case monitor(client: String, region: RegionSpec)
        case unmonitor(client: String, region: String)
        case requestState(client: String, region: String)
    }

    public var time: Timestamp {
        switch self {
        case let .sighting(s): return s.time
        case let .request(_, t): return t
        }
    }

    public static func parse(line: String) throws(SightingRecordError) -> TraceRecord {
        guard line.utf8.count <= SightingRecord.maxLineBytes else {
            throw SightingRecordError("line longer than \(SightingRecord.maxLineBytes) bytes")
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw SightingRecordError(error.description)
        }
        guard let requestValue = value["request"] else { return .sighting(try SightingRecord.parse(value)) }
        guard let t = value["t"]?.numberValue, let time = Timestamp(unixSeconds: t) else {
            throw SightingRecordError("missing or non-numeric \"t\"")
        }
        guard let client = value["client"]?.stringValue, !client.isEmpty else {
            throw SightingRecordError("request needs a \"client\"")
        }
        switch requestValue.stringValue {
        case "monitor":
            guard let regionValue = value["region"] else {
                throw SightingRecordError("monitor needs a \"region\" object")
            }
            do {
                return .request(.monitor(client: client, region: try RegionSpec(json: regionValue)), time: time)
            } catch {
                throw SightingRecordError("region.\(error.description)")
            }
        case "unmonitor", "request_state":
            guard let region = value["region"]?.stringValue else {
                throw SightingRecordError("request needs a \"region\" id")
            }
            return .request(
                requestValue.stringValue == "unmonitor"
                    ? .unmonitor(client: client, region: region) : .requestState(client: client, region: region),
                time: time)
        default:
            throw SightingRecordError(
                "unknown request \(requestValue.serialized); expected monitor, unmonitor or request_state")
        }
    }
}
