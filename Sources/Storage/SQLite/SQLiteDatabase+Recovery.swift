import CSQLite
import Glibc
import Synchronization

/// A file that SQLite finds corrupt while the daemon runs — an SD card losing a page — fails
/// every write that touches the damage, for as long as the process lives: events would pile
/// up in memory and no state would be saved until someone restarted the service (which sets
/// the file aside, `StateStore.open`). Instead the write that finds it empties the file in
/// place, as a restart would, and is done again on the empty one.
///
/// Why in place rather than renamed: the readers of other threads hold the file open, and
/// SQLite deletes a WAL by its path when its last connection closes — a renamed file's
/// readers would delete the new file's WAL. SQLite's own reset (`SQLITE_DBCONFIG_RESET_DATABASE`
/// and `VACUUM`) empties it under its usual locks, and works on a badly corrupt file.
extension SQLiteDatabase {
    /// What to keep when the file is emptied.
    public struct Recovery: Sendable {
        /// Tables whose rows are copied to the emptied file if they can still be read and
        /// number at most the given count (they are held in memory meanwhile); with a
        /// condition, only the rows it selects (it may name a table carried before, as
        /// `carried.<table>`).
        public var carried: [Carried]
        /// Where to keep a copy of the corrupt file, for a post-mortem (nil: none).
        public var copyPath: @Sendable () -> String?
        /// Told once the file has been emptied.
        public var report: @Sendable (Report) -> Void

        public struct Carried: Sendable {
            public var table: String
            public var limit: Int
            public var condition: String?

            public init(_ table: String, limit: Int = .max, where condition: String? = nil) {
                (self.table, self.limit, self.condition) = (table, limit, condition)
            }
        }

        public init(
            carried: [Carried], copyPath: @escaping @Sendable () -> String?,
            report: @escaping @Sendable (Report) -> Void
        ) {
            self.carried = carried
            self.copyPath = copyPath
            self.report = report
        }
    }

    public struct Report: Sendable {
        /// What the write that found the damage was told.
        public var error: SQLiteError
        /// Where the corrupt file was copied, or why it was not.
        public var copy: Result<String, CopyError>?
        /// Carried tables read and written back, and those that could not be read (or held
        /// more rows than their limit).
        public var carried: [String]
        public var lost: [String]
    }

    public struct CopyError: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// A value far above any sequence number a gateway reaches (a store's 900,000 events a day
    /// for 3,000 years), for AUTOINCREMENT tables whose old sequence could not be read: a
    /// webhook batch in flight acknowledges by sequence number, and must not acknowledge rows
    /// of the new file.
    static let sequenceFloor: Int64 = 1 << 40

    /// Empties the file after `error`, under the writer's lock, keeping what `recovery`
    /// says. False when no recovery is set or the file could not be emptied; true at once
    /// when another thread emptied it since generation `seen` (the damage met is gone).
    func startAfresh(_ connection: SQLiteConnection, after error: SQLiteError, seen: Int) -> Bool {
        guard let recovery = recovery.withLock({ $0 }) else { return false }
        guard generation == seen else { return true }
        try? connection.execute("ROLLBACK")
        let copy =
            copiedSinceRestart.exchange(true, ordering: .acquiringAndReleasing)
            ? nil : recovery.copyPath().map(copyFile)
        var carried: [String] = []
        var lost: [String] = []
        do {
            try connection.execute("ATTACH DATABASE ':memory:' AS carried")
            defer { try? connection.execute("DETACH DATABASE carried") }
            for item in recovery.carried {
                let table = item.table
                let rowsCarried = "FROM main.\(table)" + (item.condition.map { " WHERE " + $0 } ?? "")
                do {
                    let rows = try connection.scalarInt64("SELECT COUNT(*) " + rowsCarried) ?? 0
                    guard rows <= item.limit else {
                        lost.append(table)
                        continue
                    }
                    try connection.execute("CREATE TABLE carried.\(table) AS SELECT * " + rowsCarried)
                    carried.append(table)
                } catch {
                    lost.append(table)
                }
            }
            let sequences =
                (try? connection.execute(
                    "CREATE TABLE carried.sequences AS SELECT name, seq FROM main.sqlite_sequence")) != nil
            let cookie = (try? connection.scalarInt64("PRAGMA schema_version")) ?? 0
            guard beacond_sqlite3_reset_database(connection.handle, 1) == SQLITE_OK else { return false }
            defer { _ = beacond_sqlite3_reset_database(connection.handle, 0) }
            try connection.execute("VACUUM")
            _ = beacond_sqlite3_reset_database(connection.handle, 0)
            try connection.execute("PRAGMA journal_mode = WAL")
            // The schema and what is carried in one commit: a reader sees the file empty (and
            // waits, `read`) or whole, never without its rows.
            try connection.execute("BEGIN IMMEDIATE")
            do {
                for migration in migrations { try connection.execute(migration.sql) }
                try connection.execute("PRAGMA user_version = \(migrations.count)")
                for table in carried {
                    try connection.execute("INSERT INTO main.\(table) SELECT * FROM carried.\(table)")
                }
                try seedSequences(connection, carried: sequences)
                // Other connections know the old schema by its cookie; a new one that happened
                // to equal it would leave them reading the old tables' pages.
                if let now = try connection.scalarInt64("PRAGMA schema_version"), now <= cookie {
                    try connection.execute("PRAGMA schema_version = \(cookie + 1)")
                }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        } catch {
            return false
        }
        idleReaders.withLock { $0.removeAll() }
        restarts.add(1, ordering: .releasing)
        copiedSinceRestart.store(false, ordering: .releasing)
        recovery.report(Report(error: error, copy: copy, carried: carried, lost: lost))
        return true
    }

    /// What `verify` found.
    public enum Verification: Sendable, Equatable {
        /// Every page reads as SQLite wrote it.
        case whole
        /// Damage was found, and the file emptied in place (told through the recovery's report).
        case emptied
        /// The check could not run, or found damage that could not be mended.
        case failed(String)
    }

    /// Reads every page (`PRAGMA quick_check`, on a reader: writes go on meanwhile) and, when
    /// any is damaged, empties the file as a write meeting the damage would. Why: damage in
    /// pages that nothing reads for a while (old history, a quiet table) would otherwise wait
    /// for a restart, which sets the whole file aside — carrying nothing over.
    public func verify() -> Verification {
        let seen = generation
        let found: [String]
        do {
            found = try read { (db) throws(SQLiteError) in try db.rows("PRAGMA quick_check") { $0.string(0) } }
        } catch {
            return .failed("\(error)")
        }
        // A read that met the damage has emptied the file already.
        if generation != seen { return .emptied }
        guard found != ["ok"] else { return .whole }
        let damage = SQLiteError(
            code: SQLITE_CORRUPT, message: "quick_check: " + found.prefix(3).joined(separator: "; "),
            sql: "PRAGMA quick_check")
        return writer.withLock { startAfresh($0, after: damage, seen: seen) } ? .emptied : .failed(damage.description)
    }

    /// Every AUTOINCREMENT table continues from its old sequence, or from `sequenceFloor`.
    private func seedSequences(_ connection: SQLiteConnection, carried: Bool) throws(SQLiteError) {
        let tables = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%'"
        ) { $0.string(0) }
        for table in tables {
            let old =
                carried ? try connection.scalarInt64("SELECT seq FROM carried.sequences WHERE name = ?", [table]) : nil
            try connection.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [table, old ?? Self.sequenceFloor])
        }
    }

    /// Copies the file and its WAL, as they are, to `destination`; a partial copy is removed.
    /// Not when it would take more than half the free space: a copy that filled the disk would
    /// stop the emptied file from taking new events. Nor while an earlier copy (or a file set
    /// aside at start) is still there: a card that fails again and again would fill the disk
    /// with copies.
    private func copyFile(to destination: String) -> Result<String, CopyError> {
        if let earlier = Self.earlierCopy(of: path) {
            return .failure(CopyError(path: destination, reason: "not copied: \(earlier) is still there"))
        }
        var size = 0
        var status = stat()
        for tail in ["", "-wal"] where stat(path + tail, &status) == 0 { size += Int(status.st_size) }
        var fs = statvfs()
        if statvfs(path, &fs) == 0, size > Int(fs.f_bavail) * Int(fs.f_frsize) / 2 {
            return .failure(CopyError(path: destination, reason: "not copied: \(size) bytes, over half the free space"))
        }
        for tail in ["", "-wal"] where access(path + tail, F_OK) == 0 {
            if let reason = Self.copy(path + tail, destination + tail) {
                unlink(destination)
                unlink(destination + "-wal")
                return .failure(CopyError(path: destination + tail, reason: reason))
            }
        }
        return .success(destination)
    }

    /// A `<file>.corrupt-*` beside `file`, if any.
    static func earlierCopy(of file: String) -> String? {
        let slash = file.lastIndex(of: "/")
        let directory = slash.map { String(file[..<$0]) } ?? "."
        let prefix = (slash.map { String(file[file.index(after: $0)...]) } ?? file) + ".corrupt-"
        guard let dir = opendir(directory.isEmpty ? "/" : directory) else { return nil }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(prefix) && !name.hasSuffix("-wal") && !name.hasSuffix("-shm") { return name }
        }
        return nil
    }

    /// nil when copied, else why not.
    private static func copy(_ source: String, _ destination: String) -> String? {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { return String(cString: strerror(errno)) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard output >= 0 else { return String(cString: strerror(errno)) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if n == 0 { return nil }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            var done = 0
            while done < n {
                let w = buffer.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + done, n - done) }
                if w < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                done += w
            }
        }
    }
}
