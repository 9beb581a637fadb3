import CSQLite

/// A prepared statement. Used by one thread at a time, like its connection; prepare once per
/// transaction and execute it for every row.
public final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private let connection: OpaquePointer

    init(connection: OpaquePointer, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(code: code, connection: connection, sql: sql)
        }
        self.connection = connection
        self.sql = sql
        handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    /// Runs the statement to completion with these parameters, ignoring any rows.
    public func execute(_ arguments: [any SQLBindable] = []) throws(SQLiteError) {
        try forEachRow(arguments) { _ in true }
    }

    /// Runs the statement and hands each row to `body` until it returns false.
    public func forEachRow(_ arguments: [any SQLBindable] = [], _ body: (SQLiteRow) throws(SQLiteError) -> Bool)
        throws(SQLiteError)
    {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        try bind(arguments)
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw SQLiteError(code: code, connection: connection, sql: sql) }
            guard try body(SQLiteRow(statement: handle)) else { return }
        }
    }

    /// Every row, converted by `row`.
    public func rows<T>(_ arguments: [any SQLBindable] = [], _ row: (SQLiteRow) -> T) throws(SQLiteError) -> [T] {
        var out: [T] = []
        try forEachRow(arguments) { r in
            out.append(row(r))
            return true
        }
        return out
    }

    private func bind(_ arguments: [any SQLBindable]) throws(SQLiteError) {
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.sqlValue {
            case let .integer(value): code = sqlite3_bind_int64(handle, index, value)
            case .null: code = sqlite3_bind_null(handle, index)
            case let .text(value):
                code = value.utf8CString.withUnsafeBufferPointer {
                    beacond_sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count - 1))
                }
            }
            guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: connection, sql: sql) }
        }
    }
}

/// The current row of a stepping statement, read by column index (the order of the SELECT).
public struct SQLiteRow {
    let statement: OpaquePointer

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(statement, column)) }

    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    public func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
}
