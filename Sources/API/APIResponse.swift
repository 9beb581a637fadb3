import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// Small helpers so that every route answers the same way: JSON bodies, errors as
/// `{"error": {"code", "message"}}`.
enum Reply {
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPReply {
        .response(jsonResponse(value, status: status))
    }

    /// The same, for an answer given later (`HTTPReply.later`).
    static func jsonResponse(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: value.serialized + "\n")
    }

    static func error(_ status: Int, _ code: String, _ message: String) -> HTTPReply {
        .response(HTTPResponse.error(status: status, code: code, message: message))
    }

    static func noContent() -> HTTPReply { .response(HTTPResponse(status: 204)) }
}
