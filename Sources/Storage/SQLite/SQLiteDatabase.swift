import CSQLite
import Glibc
import Synchronization

/// A SQLite file in WAL mode shared by the daemon's threads: one writer connection, behind a
/// lock, and a small pool of readers, so the API and webhook threads read while the engine's
/// thread writes (WAL readers see the last commit and never wait for the writer).
public final class SQLiteDatabase: Sendable {
    public let path: String
    let writer: Mutex<SQLiteConnection>
    let idleReaders = Mutex<[SQLiteConnection]>([])
    /// Readers kept open between reads; more may exist for a moment under load.
    private static let keptReaders = 4
    let migrations: [Migration]
    /// What a write that finds the file corrupt does (`startAfresh`); nil: it only fails.
    let recovery = Mutex<Recovery?>(nil)
    let restarts = Atomic<Int>(0)
    /// Whether the damaged file was copied since it was last emptied: a file that cannot be
    /// emptied is found corrupt again by every write, and is copied once, not each time.
    let copiedSinceRestart = Atomic<Bool>(false)

    /// Opens (creating if needed) the file and applies the migrations it has not seen.
    public init(path: String, migrations: [Migration]) throws(SQLiteError) {
        self.path = path
        self.migrations = migrations
        let connection = try SQLiteConnection(path: path)
        // The page size takes only on a file that has no table yet: an older file keeps its own.
        try connection.execute(
            "PRAGMA page_size = \(Self.pageSize); PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                + "PRAGMA journal_size_limit = \(Self.walSizeLimit)")
        try Self.migrate(connection, migrations)
        connection.setBusyTimeout(milliseconds: Self.writerWaitMilliseconds)
        writer = Mutex(connection)
    }

    /// Pages of 1 KiB for a new file, not SQLite's 4 KiB: a commit writes each page it touches
    /// whole to the write-ahead log, and a turn of a small site touches about seven (its events'
    /// leaf, the id index's, the inner pages above them, the header, the AUTOINCREMENT counter,
    /// an asset's row) for a few kilobytes of events. With 1 KiB pages the simulated store's 20
    /// tags write about 42 % fewer bytes to the gateway's card (43.6 → 25.6 kB/s), 200 tags 14 %
    /// fewer; the outbox takes about a fifth fewer events a second, still four times what is
    /// asked of it (BENCHMARKS.md, "Writes to the state disk").
    public static let pageSize = 1024

    /// The write-ahead log is cut back to this size once it has been copied into the file.
    /// It grows past it only while another process holds a read open (the log cannot be
    /// copied past that reader's view), and SQLite would otherwise keep the grown file for
    /// good. A little over the 1,000 pages (4 MB) at which it is copied back normally.
    public static let walSizeLimit = 6 << 20

    /// How long a write waits for a lock another process holds (an operator's `sqlite3` shell
    /// with a transaction open) before it fails. Short, because the engine's thread writes:
    /// waiting SQLite's usual seconds on every batch would stall the engine until the radios'
    /// sightings overflowed its queue. A failed write is held and tried again by its caller
    /// (`EventPublisher`, the state saves, a webhook's acknowledgement); writes that cannot be
    /// held wait longer with `patient`.
    static let writerWaitMilliseconds: Int32 = 200
    /// How many times a `patient` write is tried while the lock is held (about 5 s).
    static let patientAttempts = 20

    /// How many times the file was emptied after it was found corrupt (`startAfresh`): what a
    /// cache of saved rows was written in, so that it knows when to write them all again.
    public var generation: Int { restarts.load(ordering: .acquiring) }

    /// Runs `body` in an immediate transaction: committed when it returns, rolled back when
    /// it throws.
    ///
    /// `synced`: the commit reaches the disk before this returns (`synchronous = FULL` for this
    /// transaction), so a power cut right after cannot take it back. Other commits use WAL's
    /// `NORMAL`: safe from corruption and from a crash of the process, but the last seconds of
    /// them may roll back when the power goes, which costs a position or a timestamp and
    /// saves an fsync on every one of them.
    ///
    /// `patient`: while another process holds the lock, tried again for about 5 s, letting go
    /// of the writer between tries so that the engine's own writes fail fast and are held
    /// meanwhile (an API change that must be saved before it is answered).
    public func write<T: Sendable>(
        synced: Bool = false, patient: Bool = false, _ body: (SQLiteConnection) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> T {
        var attempt = 1
        while true {
            let result = writeOnce(synced: synced, body)
            guard patient, case let .failure(error) = result, error.isBusy, attempt < Self.patientAttempts else {
                return try result.get()
            }
            attempt += 1
            usleep(50_000)
        }
    }

    private func writeOnce<T: Sendable>(synced: Bool, _ body: (SQLiteConnection) throws(SQLiteError) -> T)
        -> Result<T, SQLiteError>
    {
        writer.withLock { connection in
            let seen = generation
            let first = Self.transaction(connection, synced: synced, body)
            // Written again on the emptied file: what this write carries is not lost with it.
            guard case let .failure(error) = first, error.isCorruption,
                startAfresh(connection, after: error, seen: seen)
            else {
                return first
            }
            return Self.transaction(connection, synced: synced, body)
        }
    }

    private static func transaction<T>(
        _ connection: SQLiteConnection, synced: Bool, _ body: (SQLiteConnection) throws(SQLiteError) -> T
    ) -> Result<T, SQLiteError> {
        guard synced else { return transaction(connection, begin: "BEGIN IMMEDIATE", body) }
        do throws(SQLiteError) {
            try connection.execute("PRAGMA synchronous = FULL")
        } catch {
            return .failure(error)
        }
        defer { try? connection.execute("PRAGMA synchronous = NORMAL") }
        return transaction(connection, begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction, so that its statements see one snapshot. Not from
    /// inside `write`: a read that meets a corrupt file takes the writer's lock.
    public func read<T: Sendable>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        let seen = generation
        let connection: SQLiteConnection
        if let idle = idleReaders.withLock({ $0.popLast() }) {
            connection = idle
        } else {
            connection = try SQLiteConnection(path: path)
        }
        defer {
            // Not kept across an emptying of the file: it may know the old schema.
            idleReaders.withLock { readers in
                if readers.count < Self.keptReaders && generation == seen { readers.append(connection) }
            }
        }
        let first = Self.transaction(connection, begin: "BEGIN DEFERRED", body)
        guard case let .failure(error) = first else { return try first.get() }
        // A read can be the first to meet the damage (a webhook's backlog, the history): the
        // file is emptied as a write would. Or it met the file while another thread emptied
        // it (no tables for a moment): the writer's lock waits for that to end. Either way it
        // is read again, on a new connection.
        let emptied = writer.withLock { connection in
            error.isCorruption ? startAfresh(connection, after: error, seen: seen) : generation != seen
        }
        guard emptied else { throw error }
        return try Self.transaction(try SQLiteConnection(path: path), begin: "BEGIN DEFERRED", body).get()
    }

    private static func transaction<T>(
        _ connection: SQLiteConnection, begin: String, _ body: (SQLiteConnection) throws(SQLiteError) -> T
    ) -> Result<T, SQLiteError> {
        do {
            try connection.execute(begin)
            do {
                let value = try body(connection)
                try connection.execute("COMMIT")
                return .success(value)
            } catch {
                try? connection.execute("ROLLBACK")
                return .failure(error)
            }
        } catch {
            return .failure(error)
        }
    }

    /// A named schema step. Steps are applied in order, once; `PRAGMA user_version` counts
    /// those applied.
    public struct Migration: Sendable {
        public let name: String
        public let sql: String

        public init(_ name: String, _ sql: String) {
            self.name = name
            self.sql = sql
        }
    }

    private static func migrate(_ connection: SQLiteConnection, _ migrations: [Migration]) throws(SQLiteError) {
        let result = transaction(connection, begin: "BEGIN IMMEDIATE") { (db) throws(SQLiteError) in
            var applied = Int(try db.scalarInt64("PRAGMA user_version") ?? 0)
            if applied == 0 { applied = try appliedByGRDB(db, migrations) }
            // A file already up to date is not written to: opened on a full disk, it must open.
            guard applied < migrations.count else { return }
            for migration in migrations.dropFirst(applied) { try db.execute(migration.sql) }
            try db.execute("PRAGMA user_version = \(migrations.count)")
        }
        try result.get()
    }

    /// Files written by beacond 0.x, whose store used GRDB, record migrations by name in
    /// `grdb_migrations`: count the leading ones applied so they are not run twice.
    private static func appliedByGRDB(_ db: SQLiteConnection, _ migrations: [Migration]) throws(SQLiteError) -> Int {
        let hasTable = try db.scalarInt64(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
        guard hasTable == 1 else { return 0 }
        let names = Set(try db.rows("SELECT identifier FROM grdb_migrations") { $0.string(0) })
        return migrations.prefix { names.contains($0.name) }.count
    }
}
