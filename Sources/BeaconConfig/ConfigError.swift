/// One configuration mistake, located: `FILE:LINE:COL: key.path: what was expected, got what`.
///
/// The loader reports every mistake it finds, not just the first, so an operator fixes a
/// file in one pass. Secrets are never quoted back.
public struct ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    /// The key path, like `clients[0].regions[2].minor`; empty for file-level problems.
    public var path: String
    public var message: String
    /// A configuration that is valid but does something other than the operator likely meant
    /// (a glob that matches nothing, a webhook that can never fire): said, not refused.
    public var isWarning = false

    public init(file: String, line: Int, column: Int, path: String, message: String, isWarning: Bool = false) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
        self.isWarning = isWarning
    }

    public var description: String {
        let place = "\(file):\(line):\(column): " + (isWarning ? "warning: " : "")
        return path.isEmpty ? place + message : place + "\(path): \(message)"
    }
}

/// All the mistakes in one file. `beacond` prints each on its own line and exits 78.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ConfigError]
    public init(_ errors: [ConfigError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
