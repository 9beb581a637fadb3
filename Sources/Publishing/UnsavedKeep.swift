import BeaconCore
import Glibc
import Logging
import Storage
import Synchronization

/// What the state store cannot write while the disk is full — the events held in memory
/// (`HeldEvents`) and the region and zone states whose saves fail — copied, as it happens, to
/// a small store of the same shape in the runtime directory (`$RUNTIME_DIRECTORY`,
/// `/run/beacond` under systemd; else beside the API socket), and taken back at the next start.
///
/// Why: held events lived only in memory, so a crash, a watchdog kill or a restart while the
/// disk was full lost them, and the next start restored states from before the disk filled —
/// a region entered since would be reported again. Why as it happens and not at the stop: a
/// `kill -9` has no stop. Why `/run`: it is a different filesystem (memory), which the full
/// disk does not stop; it lasts until a reboot (the unit keeps it across restarts). Nothing
/// is written here while the state store writes.
///
/// The alerts among the held events, and the states, also go to the state directory's
/// `DiskReserve`, room taken on the full disk while it had room: what a reboot (a power cut)
/// would take from `/run` is there. Positions and ranging are not: each is superseded within
/// seconds, and the reserve is kept small.
public final class UnsavedKeep: Sendable {
    public let directory: String
    private let logger: Logger
    private let state: Mutex<Contents>

    private struct Contents {
        var store: StateStore?
        var hasEvents = false
        var hasStates = false
        /// Told once until a write works again.
        var failing = false
        /// A write failed since the held events were last stored: some are not in the keep.
        var incomplete = false
        /// The disk reserve, which outlives the copy: emptying the copy leaves it as it is.
        var reserved: Reserved?
    }

    /// The disk reserve and what it holds now.
    private struct Reserved {
        var file: DiskReserve
        /// Alerts in it now.
        var events = 0
        var hasStates = false
        /// Told once until a write to it works again; its being full, once until emptied.
        var failing = false
        var full = false
    }

    /// - Parameter reserve: the state directory's reserve, nil when it could not be made.
    public init(directory: String, reserve: DiskReserve? = nil, logger: Logger) {
        self.directory = directory
        self.logger = logger
        var contents = Contents()
        contents.reserved = reserve.map { Reserved(file: $0) }
        state = Mutex(contents)
    }

    /// `$RUNTIME_DIRECTORY/unsaved` under systemd, else `unsaved` beside the API socket.
    public static func directory(apiSocket socket: String) -> String {
        let runtime =
            getenv("RUNTIME_DIRECTORY").map { String(cString: $0).split(separator: ":").first.map(String.init) ?? "" }
            ?? ""
        if !runtime.isEmpty { return runtime + "/unsaved" }
        let parent = socket.lastIndex(of: "/").map { String(socket[..<$0]) } ?? "."
        return (parent.isEmpty ? "/" : parent) + "/unsaved"
    }

    /// What an earlier run kept, if anything: the runtime directory's copy, and what the disk
    /// reserve has that the copy lacks (all of it after a reboot). It stays kept until the
    /// state store has taken it: `eventsStored` and `statesSaved`.
    ///
    /// `state` is nil when no states were kept, and otherwise the whole of them: an asset it
    /// does not list was in no zone (only assets inside one are saved), whatever the state
    /// store says. The copy's states are the newer when both have them.
    public func takeOver() -> (events: [StateStore.StoredEvent], state: EngineSnapshot?)? {
        state.withLock { c in
            let copied = takeOverCopy(&c)
            let reserved = takeOverReserve(&c)
            guard copied != nil || reserved != nil else { return nil }
            var events = copied?.events ?? []
            let known = Set(events.map(\.id))
            let missing = reserved?.events.filter { !known.contains($0.id) } ?? []
            // Ids sort in the order events were made, across runs too.
            if !missing.isEmpty { events = (events + missing).sorted { $0.id < $1.id } }
            if let reserved, !missing.isEmpty || (copied?.state == nil && reserved.states != nil) {
                logger.info(
                    "state.reserve_found",
                    metadata: [
                        "events": "\(reserved.events.count)", "not_in_runtime_copy": "\(missing.count)",
                        "regions": "\(reserved.states?.regions.count ?? 0)",
                        "assets": "\(reserved.states?.assets.count ?? 0)",
                        "states": "\(copied?.state == nil && reserved.states != nil ? "taken" : "older")",
                        "from": "\(c.reserved!.file.path)",
                        "next": "stored and delivered as soon as the state store writes",
                    ])
            }
            return (events, copied?.state ?? reserved?.states)
        }
    }

    /// The runtime directory's copy.
    private func takeOverCopy(_ c: inout Contents) -> (events: [StateStore.StoredEvent], state: EngineSnapshot?)? {
        guard access(directory + "/beacond.sqlite", F_OK) == 0 else { return nil }
        do {
            let store = try StateStore(directory: directory)
            let events = try store.events(limit: .max)
            let regions = try store.loadRegions().snapshots
            let assets = try store.loadAssets().snapshots
            c.store = store
            c.hasEvents = !events.isEmpty
            // Saved states may be empty (every asset out of its zones): the mark tells.
            c.hasStates = access(statesMark, F_OK) == 0 || !regions.isEmpty || !assets.isEmpty
            logger.info(
                "state.unsaved_found",
                metadata: [
                    "events": "\(events.count)", "regions": "\(regions.count)", "assets": "\(assets.count)",
                    "states": "\(c.hasStates ? "kept" : "none")", "from": "\(directory)",
                    "next": "stored and delivered as soon as the state store writes",
                ])
            return (events, c.hasStates ? EngineSnapshot(regions: regions, assets: assets) : nil)
        } catch {
            logger.error(
                "state.unsaved_unreadable", metadata: ["dir": "\(directory)", "error": "\(error)", "next": "removed"])
            c.store = nil
            Self.remove(directory)
            return nil
        }
    }

    /// The disk reserve's contents, nil when it holds nothing.
    private func takeOverReserve(_ c: inout Contents) -> DiskReserve.Contents? {
        guard let contents = c.reserved?.file.read(), !contents.events.isEmpty || contents.states != nil else {
            return nil
        }
        c.reserved?.hasStates = contents.states != nil
        c.reserved?.events = contents.events.count
        return contents
    }

    /// Events just held in memory, and those the hold's bound dropped.
    public func held(_ events: [StateStore.StoredEvent], dropped: [String]) {
        write { c, store in
            try store.append(events)
            try store.removeEvents(dropped)
            c.hasEvents = true
        }
        let alerts = events.filter { !EventClass(type: $0.type).isSuperseded }
        guard !alerts.isEmpty else { return }
        reserve { r in
            let fitted = try r.file.append(alerts)
            r.events += fitted
            if fitted < alerts.count && !r.full {
                r.full = true
                logger.error(
                    "state.reserve_full",
                    metadata: [
                        "path": "\(r.file.path)",
                        "next":
                            "later alerts held while the disk is full are in memory and the runtime directory only: a reboot before the state store writes loses them",
                    ])
            }
        }
    }

    /// The states the state store could not save.
    public func statesUnsaved(_ snapshot: EngineSnapshot) {
        write { c, store in
            try store.saveRegions(snapshot.regions)
            try store.saveAssets(snapshot.assets)
            let mark = open(statesMark, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
            guard mark >= 0 else { throw MarkFailed(reason: String(cString: strerror(errno))) }
            close(mark)
            c.hasStates = true
        }
        reserve { r in
            try r.file.write(snapshot)
            r.hasStates = true
        }
    }

    struct MarkFailed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "cannot mark the states kept: \(reason)" }
    }

    /// Present while the keep holds states, which may be none at all.
    private var statesMark: String { directory + "/states" }

    /// The state store took the held events.
    public func eventsStored() {
        // What could not be copied is stored now too.
        state.withLock { $0.incomplete = false }
        clear { c, store in
            if c.hasEvents { try store.removeAllEvents() }
            c.hasEvents = false
        }
        reserve { r in
            guard r.events > 0 else { return }
            try r.file.clearEvents()
            r.events = 0
            r.full = false
        }
    }

    /// The state store saved the states.
    public func statesSaved() {
        clear { c, store in
            if c.hasStates {
                try store.saveRegions([])
                try store.saveAssets([])
                unlink(statesMark)
            }
            c.hasStates = false
        }
        reserve { r in
            guard r.hasStates else { return }
            try r.file.clearStates()
            r.hasStates = false
        }
    }

    /// The disk reserve, its size and how many alerts it keeps now; nil when there is none.
    public var reserveStatus: (file: String, bytes: Int, alerts: Int)? {
        state.withLock { c in c.reserved.map { ($0.file.path, $0.file.size, $0.events) } }
    }

    /// Whether every event held now is here (not after a failed write).
    public var isWhole: Bool { state.withLock { $0.store != nil && !$0.incomplete } }

    private func write(_ body: (inout Contents, StateStore) throws -> Void) {
        state.withLock { c in
            do {
                if c.store == nil { c.store = try StateStore(directory: directory) }
                try body(&c, c.store!)
                if c.failing { logger.info("state.unsaved_kept_again", metadata: ["dir": "\(directory)"]) }
                c.failing = false
            } catch {
                if !c.failing {
                    logger.error(
                        "state.unsaved_not_kept",
                        metadata: [
                            "dir": "\(directory)", "error": "\(error)",
                            "next":
                                "what the state store cannot write is in memory only: a crash before it can loses it",
                        ])
                }
                c.failing = true
                c.incomplete = true
            }
        }
    }

    /// Runs `body` on the reserve; a failure is told once until a write works again.
    private func reserve(_ body: (inout Reserved) throws -> Void) {
        state.withLock { c in
            guard let path = c.reserved?.file.path else { return }
            do {
                try body(&c.reserved!)
                if c.reserved!.failing { logger.info("state.reserve_written_again", metadata: ["path": "\(path)"]) }
                c.reserved!.failing = false
            } catch {
                if !c.reserved!.failing {
                    logger.error(
                        "state.reserve_not_written",
                        metadata: [
                            "path": "\(path)", "error": "\(error)",
                            "next":
                                "alerts held while the disk is full survive a restart (runtime directory) but not a reboot",
                        ])
                }
                c.reserved!.failing = true
            }
        }
    }

    /// Runs `body` on the keep if there is one, and removes it once it holds nothing.
    private func clear(_ body: (inout Contents, StateStore) throws -> Void) {
        state.withLock { c in
            guard let store = c.store else { return }
            do { try body(&c, store) } catch { c.failing = true }  // left as it is, for the next start
            guard !c.hasEvents && !c.hasStates else { return }
            c = Contents(reserved: c.reserved)
            Self.remove(directory)
        }
    }

    /// Deletes the keep's file and directory.
    static func remove(_ directory: String) {
        let file = directory + "/beacond.sqlite"
        for tail in ["", "-wal", "-shm"] { unlink(file + tail) }
        unlink(directory + "/states")
        rmdir(directory)
    }
}
