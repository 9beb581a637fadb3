import CSystemd
import Logging
import Logs
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A swift-log backend for a daemon run by systemd: each message goes to the journal with its
/// syslog priority, `SYSLOG_IDENTIFIER=beacond`, the code location, `BEACOND_EVENT` (the
/// message: the event's name) and one `BEACOND_` field per metadata key, each value whole
/// (`BEACOND_NEXT=no BlueZ; sightings come from the site simulator`), so that
/// `journalctl -u beacond BEACOND_ADAPTER=hci0` finds what concerns one adapter. Outside
/// systemd the same event goes to standard error as one logfmt line (`Logfmt`).
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
    private let problems: (@Sendable (String) -> Void)?

    public init(level: Logger.Level, toJournal: Bool = JournalLog.stderrIsJournal()) {
        self.init(threshold: SharedThreshold(JournalLog.Level(level)), toJournal: toJournal, problems: nil)
    }

    init(threshold: SharedThreshold, toJournal: Bool, problems: (@Sendable (String) -> Void)?) {
        self.threshold = threshold
        self.toJournal = toJournal
        self.problems = problems
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let given = event.metadata { merged.merge(given) { $1 } }
        let name = event.message.description
        if event.level >= .warning { problems?(Logfmt.line(level: event.level, event: name, metadata: merged)) }
        if toJournal {
            var fields = [
                "MESSAGE=\(Logfmt.message(event: name, metadata: merged))", "PRIORITY=\(Self.priority(event.level))",
                "SYSLOG_IDENTIFIER=beacond", "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)",
                "CODE_FUNC=\(event.function)",
            ]
            fields += Self.fields(event: name, metadata: merged)
            Self.send(fields)
        } else {
            _ = writeAll(fd: 2, Logfmt.line(level: event.level, event: name, metadata: merged) + "\n")
        }
    }

    /// `BEACOND_EVENT=bluez.gone`, `BEACOND_REASON=name lost`, … : each value whole, its
    /// control characters written out; a key's other characters become `_` (`retry-in` →
    /// `BEACOND_RETRY_IN`), as journal field names allow only those.
    static func fields(event: String, metadata: Logger.Metadata) -> [String] {
        var out = ["BEACOND_EVENT=\(Logfmt.escapingControlCharacters(event))"]
        for key in Logfmt.orderedKeys(metadata) {
            let name = String(key.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
            out.append("BEACOND_\(name)=\(Logfmt.escapingControlCharacters(Logfmt.flat(metadata[key]!)))")
        }
        return out
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
