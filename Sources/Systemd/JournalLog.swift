import CSystemd
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log lines — `level: event key=value ...` — through swift-log to
/// `JournalLogHandler`: the journal, with priority and `BEACOND_` fields, when standard error
/// is connected to it, and plain lines on standard error otherwise.
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

    public init(threshold: Level) {
        let toJournal = JournalLog.stderrIsJournal()
        self.toJournal = toJournal
        let shared = SharedThreshold(threshold)
        self.shared = shared
        logger = Logger(label: "beacond") { _ in JournalLogHandler(threshold: shared, toJournal: toJournal) }
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

    /// The level a line starts with (`warning: ...`), info when it names none.
    public static func level(of line: String) -> Level {
        guard let colon = line.firstIndex(of: ":") else { return .info }
        return Level(name: String(line[..<colon])) ?? .info
    }

    /// A log line with every control character written out (`\n`, `\u{1B}`): values in
    /// lines come from relays, API clients and files, and one with a newline or an escape
    /// sequence would otherwise forge a second log line or repaint an operator's terminal.
    public static func escapingControlCharacters(_ line: String) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return line }
        var out = ""
        for scalar in line.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (s.value >= 0x7F && s.value < 0xA0) || s.value == 0x2028 || s.value == 0x2029
    }

    /// Logs one line written as `level: event key=value ...` at its level, its control
    /// characters escaped.
    public func write(_ line: String, file: String = #fileID, function: String = #function, line number: UInt = #line) {
        let line = Self.escapingControlCharacters(line)
        let level = JournalLog.level(of: line)
        var message = Substring(line)
        if let colon = line.firstIndex(of: ":"), Level(name: String(line[..<colon])) != nil {
            message = line[line.index(after: colon)...].drop { $0 == " " }
        }
        logger.log(
            level: level.loggerLevel, "\(message)", source: "beacond", file: file, function: function, line: number)
    }

    /// `warning: bluez.gone reason=x adapter=hci0` → `BEACOND_EVENT=bluez.gone`,
    /// `BEACOND_REASON=x`, `BEACOND_ADAPTER=hci0`. Quoted values keep their spaces.
    public static func structuredFields(_ line: String) -> [String] {
        var rest = Substring(line)
        if let colon = rest.firstIndex(of: ":") { rest = rest[rest.index(after: colon)...] }
        var out: [String] = []
        var tokens: [String] = []
        var current = ""
        var quoted = false
        for c in rest {
            if c == "\"" {
                quoted.toggle()
            } else if c == " " && !quoted {
                if !current.isEmpty { tokens.append(current) }
                current = ""
            } else {
                current.append(c)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        guard let event = tokens.first, !event.contains("=") else { return out }
        out.append("BEACOND_EVENT=\(event)")
        for token in tokens.dropFirst() {
            guard let eq = token.firstIndex(of: "="), eq != token.startIndex else { continue }
            let key = token[..<eq].uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
            out.append("BEACOND_\(String(key))=\(token[token.index(after: eq)...])")
        }
        return out
    }
}

/// The threshold one `JournalLog` and all its handlers share, so that a change reaches loggers
/// already handed out.
final class SharedThreshold: Sendable {
    let threshold: Atomic<Int>
    init(_ level: JournalLog.Level) { threshold = Atomic(level.rawValue) }
}
