import CSQLite

/// A failed SQLite call, with what an operator needs to act on it: SQLite's result code and
/// message, and the statement that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let sql: String?
    /// SQLite's extended result code where the connection has one that says more than `code`
    /// (a disk I/O error's 4874 is the shared-memory file that could not grow, 522 a short read).
    public var extended: Int32?

    init(code: Int32, connection: OpaquePointer?, sql: String?) {
        self.code = code
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
            let extended = sqlite3_extended_errcode(connection)
            if extended != code && extended & 0xFF == code & 0xFF { self.extended = extended }
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        self.sql = sql
    }

    init(code: Int32, message: String, sql: String?) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        "SQLite error \(code)" + (extended.map { " (extended \($0))" } ?? "") + ": \(message)"
            + (sql.map { " (in \($0))" } ?? "")
    }
}

extension SQLiteError {
    /// The file is damaged or is not a database (SQLITE_CORRUPT, SQLITE_NOTADB), as opposed
    /// to a failure of the disk or of permissions that a fix outside the file ends.
    public var isCorruption: Bool { code & 0xFF == 11 || code & 0xFF == 26 }

    /// Another process holds the file's lock (SQLITE_BUSY, SQLITE_LOCKED): a wait ends it,
    /// not a fix to the disk.
    public var isBusy: Bool { code & 0xFF == 5 || code & 0xFF == 6 }
}
