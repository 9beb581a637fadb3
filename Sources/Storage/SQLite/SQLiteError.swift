import CSQLite

/// A failed SQLite call, with what an operator needs to act on it: SQLite's result code and
/// message, and the statement that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let sql: String?

    init(code: Int32, connection: OpaquePointer?, sql: String?) {
        self.code = code
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        self.sql = sql
    }

    public var description: String {
        "SQLite error \(code): \(message)" + (sql.map { " (in \($0))" } ?? "")
    }
}
