import BeaconCore
import Glibc
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
public final class UnsavedKeep: Sendable {
    public let directory: String
    private let log: @Sendable (String) -> Void
    private let state = Mutex(Contents())

    private struct Contents {
        var store: StateStore?
        var hasEvents = false
        var hasStates = false
        /// Told once until a write works again.
        var failing = false
        /// A write failed since the held events were last stored: some are not in the keep.
        var incomplete = false
    }

    public init(directory: String, log: @escaping @Sendable (String) -> Void) {
        self.directory = directory
        self.log = log
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

    /// What an earlier run kept, if anything. It stays here (this keep holds it) until the
    /// state store has taken it: `eventsStored` and `statesSaved`.
    ///
    /// `state` is nil when no states were kept, and otherwise the whole of them: an asset it
    /// does not list was in no zone (only assets inside one are saved), whatever the state
    /// store says.
    public func takeOver() -> (events: [StateStore.StoredEvent], state: EngineSnapshot?)? {
        guard access(directory + "/beacond.sqlite", F_OK) == 0 else { return nil }
        return state.withLock { c in
            do {
                let store = try StateStore(directory: directory)
                let events = try store.events(limit: .max)
                let regions = try store.loadRegions().snapshots
                let assets = try store.loadAssets().snapshots
                c.store = store
                c.hasEvents = !events.isEmpty
                // Saved states may be empty (every asset out of its zones): the mark tells.
                c.hasStates = access(statesMark, F_OK) == 0 || !regions.isEmpty || !assets.isEmpty
                log(
                    "info: state.unsaved_found events=\(events.count) regions=\(regions.count) assets=\(assets.count) "
                        + "states=\(c.hasStates ? "kept" : "none") from=\(directory) next=stored and delivered as soon "
                        + "as the state store writes")
                return (events, c.hasStates ? EngineSnapshot(regions: regions, assets: assets) : nil)
            } catch {
                log("error: state.unsaved_unreadable dir=\(directory) error=\(error) next=removed")
                c.store = nil
                Self.remove(directory)
                return nil
            }
        }
    }

    /// Events just held in memory, and those the hold's bound dropped.
    public func held(_ events: [StateStore.StoredEvent], dropped: [String]) {
        write { c, store in
            try store.append(events)
            try store.removeEvents(dropped)
            c.hasEvents = true
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
    }

    /// Whether every event held now is here (not after a failed write).
    public var isWhole: Bool { state.withLock { $0.store != nil && !$0.incomplete } }

    private func write(_ body: (inout Contents, StateStore) throws -> Void) {
        state.withLock { c in
            do {
                if c.store == nil { c.store = try StateStore(directory: directory) }
                try body(&c, c.store!)
                if c.failing { log("info: state.unsaved_kept_again dir=\(directory)") }
                c.failing = false
            } catch {
                if !c.failing {
                    log(
                        "error: state.unsaved_not_kept dir=\(directory) error=\(error) next=what the state store "
                            + "cannot write is in memory only: a crash before it can loses it")
                }
                c.failing = true
                c.incomplete = true
            }
        }
    }

    /// Runs `body` on the keep if there is one, and removes it once it holds nothing.
    private func clear(_ body: (inout Contents, StateStore) throws -> Void) {
        state.withLock { c in
            guard let store = c.store else { return }
            do { try body(&c, store) } catch { c.failing = true }  // left as it is, for the next start
            guard !c.hasEvents && !c.hasStates else { return }
            c = Contents()
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
