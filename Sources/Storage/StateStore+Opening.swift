import BeaconCore
import Glibc
import Synchronization

/// Opening the file, now or whenever it can be.
///
/// Why later: a daemon whose state file could not be opened at start — a state directory it
/// may not write yet (a mount that comes late, a filesystem remounted read-only after an
/// error), a full disk on which a corrupt file cannot be replaced — used to run for the rest
/// of its life without a store: no history, no webhooks, no saved states, until someone
/// restarted it. A store that is not open yet fails each read and write with the reason, as
/// a full disk does, so the daemon's full-disk handling (events held in memory and copied
/// outside the disk, writes tried again every few seconds) carries it until the file opens.
extension StateStore {
    /// What happened when the file opened.
    public struct Opened: Sendable {
        /// Where a file found corrupt went (`beacond.sqlite.corrupt-SUFFIX`), if one was.
        public var setAside: String?
        /// Why it could not be opened before, if an earlier attempt failed.
        public var failedBefore: String?
    }

    struct Opening: Sendable {
        var database: SQLiteDatabase?
        var failure: String?
        /// Where a corrupt file went, when the new one could not be made at once.
        var setAside: String?
        var recovery: SQLiteDatabase.Recovery?
        let setAsideSuffix: (@Sendable () -> String)?
        let onOpen: (@Sendable (Opened) -> Void)?

        init(setAsideSuffix: (@Sendable () -> String)?, onOpen: (@Sendable (Opened) -> Void)?) {
            self.setAsideSuffix = setAsideSuffix
            self.onOpen = onOpen
        }
    }

    /// A store under `directory` that opens its file at the first use that can (`open()` tries
    /// at once). A file SQLite finds corrupt or not a database at all — an SD card failing, a
    /// power cut on a filesystem that reorders writes — is renamed beside it
    /// (`beacond.sqlite.corrupt-SUFFIX`, with its `-wal` and `-shm`), and a new one is
    /// started: its history and undelivered events were unreadable anyway. Any other failure
    /// (a directory it may not write, a full disk) leaves the file alone and is thrown by
    /// that use, and the next one tries again. `onOpen` is called once, when it opens.
    public static func opening(
        directory: String, retention: HistoryRetention = HistoryRetention(), deadLetterLimit: Int = 10_000,
        setAsideSuffix: @escaping @Sendable () -> String, onOpen: @escaping @Sendable (Opened) -> Void
    ) -> StateStore {
        StateStore(
            unopened: directory, retention: retention, deadLetterLimit: deadLetterLimit,
            setAsideSuffix: setAsideSuffix, onOpen: onOpen)
    }

    /// Opens the file if it is not open yet; throws why it cannot be.
    public func open() throws { _ = try db }

    /// Why the file could not be opened, while it is not open.
    public var openFailure: String? { opening.withLock { $0.database == nil ? $0.failure : nil } }

    /// The open file; opened here at the first use that can.
    var db: SQLiteDatabase {
        get throws {
            let (result, opened) = opening.withLock { o -> (Result<SQLiteDatabase, any Error>, Opened?) in
                if let database = o.database { return (.success(database), nil) }
                do {
                    let database = try openSettingAside(suffix: o.setAsideSuffix, setAside: &o.setAside)
                    if let recovery = o.recovery { database.recovery.withLock { $0 = recovery } }
                    let opened = Opened(setAside: o.setAside, failedBefore: o.failure)
                    o.setAside = nil
                    o.failure = nil
                    o.database = database
                    return (.success(database), opened)
                } catch {
                    o.failure = "\(error)"
                    return (.failure(error), nil)
                }
            }
            // Outside the lock: the callback may use the store.
            if let opened, let onOpen = opening.withLock({ $0.onOpen }) { onOpen(opened) }
            return try result.get()
        }
    }

    private func openSettingAside(suffix: (@Sendable () -> String)?, setAside: inout String?) throws -> SQLiteDatabase {
        try Self.makeDirectories(directory)
        let first: Result<SQLiteDatabase, SQLiteError> = Result { () throws(SQLiteError) in
            try SQLiteDatabase(path: path, migrations: Self.migrations)
        }
        guard case let .failure(error) = first, error.isCorruption, let suffix else { return try first.get() }
        let aside = path + ".corrupt-" + suffix()
        for tail in ["", "-wal", "-shm"] where access(path + tail, F_OK) == 0 {
            guard rename(path + tail, aside + tail) == 0 else { throw error }
        }
        setAside = aside
        return try SQLiteDatabase(path: path, migrations: Self.migrations)
    }
}
