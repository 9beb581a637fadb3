import CSQLite

/// One open SQLite connection. Opened without SQLite's own mutex: `SQLiteDatabase` hands
/// each connection to one thread at a time, which is what makes it safe to pass between
/// threads (hence `@unchecked Sendable`).
public final class SQLiteConnection: @unchecked Sendable {
    let handle: OpaquePointer

    init(path: String) throws(SQLiteError) {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let error = SQLiteError(code: code, connection: connection, sql: nil)
            sqlite3_close_v2(connection)
            throw error
        }
        handle = connection
        // Another process (an operator's sqlite3 shell) may hold a lock for a moment.
        setBusyTimeout(milliseconds: 5000)
    }

    /// How long a statement waits for a lock another process holds before it fails with
    /// SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements with no parameters (schema, pragmas, BEGIN/COMMIT).
    public func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle, sql: sql) }
    }

    /// Runs one statement with parameters.
    public func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(SQLiteError) {
        try prepare(sql).execute(arguments)
    }

    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try SQLiteStatement(connection: handle, sql: sql)
    }

    /// The rows a statement returns, converted by `row`.
    public func rows<T>(_ sql: String, _ arguments: [any SQLBindable] = [], _ row: (SQLiteRow) -> T)
        throws(SQLiteError) -> [T]
    {
        try prepare(sql).rows(arguments, row)
    }

    /// The first column of the first row, or nil when there is no row or it is NULL.
    public func scalarInt64(_ sql: String, _ arguments: [any SQLBindable] = []) throws(SQLiteError) -> Int64? {
        try rows(sql, arguments) { $0.optionalInt64(0) }.first ?? nil
    }

    public func scalarString(_ sql: String, _ arguments: [any SQLBindable] = []) throws(SQLiteError) -> String? {
        try rows(sql, arguments) { $0.optionalString(0) }.first ?? nil
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }
}
