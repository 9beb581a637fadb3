import Logs
import Synchronization

/// The lines a component logs, as the daemon would print them (logfmt), through a real
/// swift-log `Logger`: tests read them back with `LogfmtReader`.
public final class CapturedLog: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var all: [String] { lines.withLock { $0 } }
    public func write(_ line: String) { lines.withLock { $0.append(line) } }
    public var logger: Logger { LineLogHandler.logger { [self] in write($0) } }
}
