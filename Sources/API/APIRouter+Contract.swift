import BeaconCore
import HTTPServer

/// The API's contract, from the daemon itself: `GET /v1/openapi.json` (docs/openapi.json, as
/// built in) and `GET /v1/schemas/{type}`, the JSON Schema an event's `dataschema` names, with
/// its references resolved so that it stands alone for a receiver's validator.
extension APIRouter {
    func openAPI() -> HTTPReply {
        .response(HTTPResponse(status: 200, contentType: "application/json", body: OpenAPIDocument.text + "\n"))
    }

    func eventSchema(type: String) -> HTTPReply {
        let kind = type.hasPrefix("beacond.") ? String(type.dropFirst(8)) : type
        guard let schema = OpenAPIContract.shared.dataSchema(kind: kind) else {
            return Reply.error(
                404, "unknown_event_type",
                "no event type \"\(type)\"; the types are \(EventPayload.allKinds.joined(separator: ", ")), webhook.test"
            )
        }
        return Reply.json(schema)
    }
}

/// The built-in document, parsed once.
struct OpenAPIContract: Sendable {
    static let shared = OpenAPIContract(text: OpenAPIDocument.text)
    let schemas: [String: JSONValue]

    init(text: String) {
        var schemas: [String: JSONValue] = [:]
        if case let .object(members)? = (try? JSONParser.parse(text))?["components"]?["schemas"] {
            for (name, schema) in members { schemas[name] = schema }
        }
        self.schemas = schemas
    }

    /// The schema whose `$id` is the kind's `dataschema`, its `$ref`s inlined.
    func dataSchema(kind: String) -> JSONValue? {
        let id = CloudEvent.dataSchema(kind)
        guard let schema = schemas.values.first(where: { $0["$id"]?.stringValue == id }) else { return nil }
        guard case let .object(members) = resolved(schema, depth: 0) else { return nil }
        return .object([("$schema", .string("https://json-schema.org/draft/2020-12/schema"))] + members)
    }

    private func resolved(_ value: JSONValue, depth: Int) -> JSONValue {
        switch value {
        case let .object(members):
            if depth < 16, let target = value["$ref"]?.stringValue, target.hasPrefix("#/components/schemas/"),
                let schema = schemas[String(target.dropFirst(21))]
            {
                return resolved(schema, depth: depth + 1)
            }
            return .object(members.map { ($0.0, resolved($0.1, depth: depth)) })
        case let .array(items): return .array(items.map { resolved($0, depth: depth) })
        default: return value
        }
    }
}
