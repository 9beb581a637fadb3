import CSystemd
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's logger and its level: swift-log with `JournalLogHandler` behind it, which
/// writes to the journal (priority and one `BEACOND_` field per metadata key) when standard
/// error is connected to it, and logfmt lines on standard error otherwise.
public struct JournalLog: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = level
        }

        public static func < (a: Level, b: Level) -> Bool { a.rawValue > b.rawValue }

        init(_ level: Logger.Level) {
            switch level {
            case .trace, .debug: self = .debug
            case .info: self = .info
            case .notice: self = .notice
            case .warning: self = .warning
            case .error, .critical: self = .error
            }
        }

        var loggerLevel: Logger.Level {
            switch self {
            case .error: .error
            case .warning: .warning
            case .notice: .notice
            case .info: .info
            case .debug: .debug
            }
        }
    }

    public let toJournal: Bool
    /// The lowest level logged. It can change while the daemon runs (`gateway.log_level` on a
    /// reload); every copy of `logger` follows it.
    public var threshold: Level { Level(rawValue: shared.threshold.load(ordering: .relaxed)) ?? .info }
    /// The daemon's logger; libraries given a `Logger` log through the same handler.
    public let logger: Logger
    private let shared: SharedThreshold

    /// `problems` gets each warning and error as its logfmt line (for `/v1/status`'s recent
    /// errors: an operator asking "what is wrong" should not need the journal).
    public init(threshold: Level, problems: (@Sendable (String) -> Void)? = nil) {
        let toJournal = JournalLog.stderrIsJournal()
        self.toJournal = toJournal
        let shared = SharedThreshold(threshold)
        self.shared = shared
        logger = Logger(label: "beacond") { _ in
            JournalLogHandler(threshold: shared, toJournal: toJournal, problems: problems)
        }
    }

    /// Logs from now on at `level` and above, through every copy of `logger`.
    public func setThreshold(_ level: Level) {
        shared.threshold.store(level.rawValue, ordering: .relaxed)
    }

    /// systemd sets `JOURNAL_STREAM=dev:inode` for the stream it connected; if standard error
    /// is still that stream, our lines are going to the journal.
    public static func stderrIsJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == dev && UInt64(info.st_ino) == ino
    }

}

/// The threshold one `JournalLog` and all its handlers share, so that a change reaches loggers
/// already handed out.
final class SharedThreshold: Sendable {
    let threshold: Atomic<Int>
    init(_ level: JournalLog.Level) { threshold = Atomic(level.rawValue) }
}
