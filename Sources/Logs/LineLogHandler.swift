import Logging

/// A swift-log backend that hands each line, rendered as `Logfmt`, to a function: what a
/// tool or a test gives a library that wants a `Logger`. The daemon's own backend is the
/// journal's (`JournalLogHandler`), which renders the same lines.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let sink: @Sendable (String) -> Void

    public init(level: Logger.Level = .debug, sink: @escaping @Sendable (String) -> Void) {
        logLevel = level
        self.sink = sink
    }

    /// A logger whose lines go to `sink`.
    public static func logger(level: Logger.Level = .debug, _ sink: @escaping @Sendable (String) -> Void) -> Logger {
        Logger(label: "beacond") { _ in LineLogHandler(level: level, sink: sink) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let given = event.metadata { merged.merge(given) { $1 } }
        sink(Logfmt.line(level: event.level, event: event.message.description, metadata: merged))
    }
}

extension Logger {
    /// A logger that drops everything: for code run where nobody reads its log (benchmarks).
    public static let silent = Logger(label: "beacond") { _ in SwiftLogNoOpLogHandler() }
}
