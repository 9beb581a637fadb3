import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log lines — `level: event key=value ...` — to the journal with their
/// priority and structured fields (`BEACOND_EVENT=`, `BEACOND_ADAPTER=`, ...) when standard
/// error is connected to the journal, and as plain lines on standard error otherwise.
public struct JournalLog: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = level
        }

        public static func < (a: Level, b: Level) -> Bool { a.rawValue > b.rawValue }
    }

    public let toJournal: Bool
    public let threshold: Level

    public init(threshold: Level) {
        self.threshold = threshold
        toJournal = JournalLog.stderrIsJournal()
    }

    /// systemd sets `JOURNAL_STREAM=dev:inode` for the stream it connected; if standard error
    /// is still that stream, our lines are going to the journal.
    static func stderrIsJournal() -> Bool {
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

    /// Writes one line, if its level passes the threshold.
    public func write(_ line: String) {
        let level = JournalLog.level(of: line)
        guard level >= threshold else { return }
        guard toJournal else {
            var bytes = Array((line + "\n").utf8)[...]
            while !bytes.isEmpty {
                let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                bytes = bytes.dropFirst(n)
            }
            return
        }
        var fields = ["MESSAGE=\(line)", "PRIORITY=\(level.rawValue)", "SYSLOG_IDENTIFIER=beacond"]
        fields += JournalLog.structuredFields(line)
        let copies = fields.map { strdup($0)! }
        defer { copies.forEach { free($0) } }
        var vectors = copies.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        _ = sd_journal_sendv(&vectors, Int32(vectors.count))
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
