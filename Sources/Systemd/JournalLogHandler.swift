import CSystemd
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A swift-log backend for a daemon run by systemd: each message goes to the journal with its
/// syslog priority, `SYSLOG_IDENTIFIER=beacond`, the code location, and one `BEACOND_` field
/// per `key=value` (`BEACOND_EVENT`, `BEACOND_ADAPTER`, `BEACOND_WEBHOOK`, ...), so that
/// `journalctl -u beacond BEACOND_ADAPTER=hci0` finds what concerns one adapter. Outside
/// systemd the same text goes to standard error as one readable line.
///
/// Messages follow the daemon's convention, `event key=value ...`; metadata given through
/// swift-log is appended to the text as more `key=value` pairs (sorted by key, quoted when
/// they contain spaces), so that the line and the journal fields say the same thing.
public struct JournalLogHandler: LogHandler {
    /// Shared with the `JournalLog` that made this handler (and its other handlers): setting
    /// it here sets it for all of them.
    public var logLevel: Logger.Level {
        get { (JournalLog.Level(rawValue: threshold.threshold.load(ordering: .relaxed)) ?? .info).loggerLevel }
        set { threshold.threshold.store(JournalLog.Level(newValue).rawValue, ordering: .relaxed) }
    }
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    /// True when standard error is the journal's stream (see `JournalLog.stderrIsJournal`).
    public let toJournal: Bool
    private let threshold: SharedThreshold

    public init(level: Logger.Level, toJournal: Bool = JournalLog.stderrIsJournal()) {
        self.init(threshold: SharedThreshold(JournalLog.Level(level)), toJournal: toJournal)
    }

    init(threshold: SharedThreshold, toJournal: Bool) {
        self.threshold = threshold
        self.toJournal = toJournal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let given = event.metadata { merged.merge(given) { $1 } }
        let text = Self.text(level: event.level, message: event.message.description, metadata: merged)
        if toJournal {
            var fields = [
                "MESSAGE=\(text)", "PRIORITY=\(Self.priority(event.level))", "SYSLOG_IDENTIFIER=beacond",
                "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)", "CODE_FUNC=\(event.function)",
            ]
            fields += JournalLog.structuredFields(text)
            Self.send(fields)
        } else {
            var bytes = Array((text + "\n").utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                bytes = bytes.dropFirst(n)
            }
        }
    }

    /// `warning: bluez.gone adapter=hci0 reason="name lost"`: the level word, the message,
    /// then the metadata.
    static func text(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var text = "\(word(level)): \(message)"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            let rendered = "\(value)"
            text += rendered.contains(" ") ? " \(key)=\"\(rendered)\"" : " \(key)=\(rendered)"
        }
        return text
    }

    /// The word a line starts with; `JournalLog.level(of:)` reads it back.
    static func word(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// syslog priorities, as the journal stores them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    private static func send(_ fields: [String]) {
        let copies = fields.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        var vectors = copies.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        _ = sd_journal_sendv(&vectors, Int32(vectors.count))
    }
}
