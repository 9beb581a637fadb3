import BeaconConfig
import BeaconCore
import Glibc
import Publishing
import Storage

/// What a stop could not save: the events held while the state store could not write (a full
/// disk) and the region and zone states of that moment, kept in the runtime directory
/// (`$RUNTIME_DIRECTORY`, `/run/beacond` under systemd; else the API socket's directory) in a
/// small store of the same shape, and taken back at the next start.
///
/// Why: an operator's first answer to a full disk is often a restart, and the held events
/// lived only in memory. Why the states too: the saves failed as well, so the next start
/// would restore states from before the disk filled — a region entered since would be
/// reported again. Why `/run`: it is a different filesystem (memory), so the full disk does
/// not stop it; it lasts until a reboot (the unit keeps it across stops).
extension LiveDaemon {
    /// Where the unsaved state goes.
    var unsavedDirectory: String {
        let runtime =
            getenv("RUNTIME_DIRECTORY").map { String(cString: $0).split(separator: ":").first.map(String.init) ?? "" }
            ?? ""
        if !runtime.isEmpty { return runtime + "/unsaved" }
        let socket = config.api.socket
        let parent = socket.lastIndex(of: "/").map { String(socket[..<$0]) } ?? "."
        return (parent.isEmpty ? "/" : parent) + "/unsaved"
    }

    /// Writes the held events and the states; true when all were written.
    func keepUnsaved(events: [StateStore.StoredEvent], state: EngineSnapshot) -> Bool {
        removeUnsaved()
        do {
            let store = try StateStore(directory: unsavedDirectory)
            try store.append(events, synced: true)
            try store.saveRegions(state.regions)
            try store.saveAssets(state.assets)
            return true
        } catch {
            log("error: state.unsaved_not_kept dir=\(unsavedDirectory) error=\(error)")
            removeUnsaved()
            return false
        }
    }

    /// What an earlier run kept, if anything (left in place until stored, `removeUnsaved`).
    func takeUnsaved() -> (events: [StateStore.StoredEvent], state: EngineSnapshot)? {
        let file = unsavedDirectory + "/beacond.sqlite"
        guard access(file, F_OK) == 0 else { return nil }
        do {
            let store = try StateStore(directory: unsavedDirectory)
            let events = try store.events(limit: .max)
            let regions = try store.loadRegions().snapshots
            let assets = try store.loadAssets().snapshots
            log(
                "info: state.unsaved_found events=\(events.count) regions=\(regions.count) assets=\(assets.count) "
                    + "from=\(unsavedDirectory) next=stored and delivered as soon as the state store writes")
            return (events, EngineSnapshot(regions: regions, assets: assets))
        } catch {
            log("error: state.unsaved_unreadable dir=\(unsavedDirectory) error=\(error)")
            return nil
        }
    }

    func removeUnsaved() {
        let file = unsavedDirectory + "/beacond.sqlite"
        for tail in ["", "-wal", "-shm"] { unlink(file + tail) }
        rmdir(unsavedDirectory)
    }
}
