import Foundation

/// A real consumer of a site's topics: Debian's `mosquitto_sub`, as a WMS or a dashboard
/// would subscribe. Each message is kept as its retain flag, topic and payload, with when it
/// arrived. `session`: a persistent session under that client id (QoS 1 messages wait at
/// the broker while it is away, as a real consumer's do).
public final class MQTTSubscriber: @unchecked Sendable {
    public struct Message: Sendable {
        public var retained: Bool
        public var topic: String
        public var payload: String
        public var arrived: Date
    }

    private let process = Process()
    private let lines = LineCollector()

    /// `user`: one of the broker's users, logged in as (the read-only `wms` on a locked-down one).
    public init(
        _ broker: PrivateBroker, topics: [String], session: String? = nil, qos: Int = 1, user: String? = nil
    ) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        var arguments = ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "\(qos)", "-F", "%r %t %p", "-V", "mqttv5"]
        if let session { arguments += ["-c", "-i", session] }
        if let user { arguments += ["-u", user, "-P", broker.users[user] ?? ""] }
        for topic in topics { arguments += ["-t", topic] }
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        RunningDaemon.collect(out, into: lines)
        try process.run()
    }

    deinit { stop() }

    public func stop() {
        guard process.isRunning else { return }
        // SIGKILL: the test process may hand its children a mask that blocks SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public var messages: [Message] {
        lines.timedLines.compactMap { line, arrived in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2 else { return nil }
            return Message(
                retained: parts[0] == "1", topic: String(parts[1]), payload: parts.count > 2 ? String(parts[2]) : "",
                arrived: arrived)
        }
    }

    /// Messages on `topic`.
    public func on(_ topic: String) -> [Message] { messages.filter { $0.topic == topic } }

    /// Waits until `condition` holds for the messages so far; returns them.
    @discardableResult
    public func waitUntil(_ what: String, timeout: Double = 15, _ condition: ([Message]) -> Bool) throws -> [Message] {
        var seen: [Message] = []
        try eventually(
            what, timeout: timeout,
            detail: {
                "got:\n"
                    + self.messages.suffix(30).map { "\($0.topic) \($0.payload.prefix(160))" }.joined(separator: "\n")
            }
        ) {
            seen = messages
            return condition(seen)
        }
        return seen
    }
}
