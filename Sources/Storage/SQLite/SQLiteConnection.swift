import CSQLite

/// One open SQLite connection. Opened without SQLite's own mutex: `SQLiteDatabase` hands
/// each connection to one thread at a time, which is what makes it safe to pass between
/// threads (hence `@unchecked Sendable`).
public final class SQLiteConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// Statements prepared once and kept (`cached`): the engine's thread commits every turn,
    /// and preparing its inserts again each time was parsing and planning the same SQL
    /// thousands of times a minute (issue 53).
    private var statements: [String: SQLiteStatement] = [:]
    /// Kept statements at most: the writes' SQL is a few dozen fixed texts.
    static let cachedLimit = 64

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

    /// Runs one statement with parameters (prepared once: `cached`).
    public func execute(_ sql: String, _ arguments: [any SQLBindable]) throws(SQLiteError) {
        try cached(sql).execute(arguments)
    }

    /// The statement for `sql`, prepared at its first use on this connection and kept. For
    /// fixed SQL texts only (a text made per call would be prepared and kept each time; past
    /// `cachedLimit` the kept ones are let go). Not for a statement still stepping.
    public func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        if statements.count >= Self.cachedLimit { statements.removeAll() }
        statements[sql] = statement
        return statement
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
    /// The rowid the last successful INSERT on this connection gave its row.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}
