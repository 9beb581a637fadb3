import BeaconCore
import CDBus
import Logging

/// A reload's `bluetooth:` section, applied while the scanner runs. An operator who narrows
/// the adapters, raises the RSSI floor or switches to passive scanning expects
/// `systemctl reload` to do it, as it does for regions; a restart would leave the site
/// unheard for seconds and start every timer from the saved state.
extension BlueZScanner {
    /// Adapters no longer listed are let go (our session ended, their devices forgotten, an
    /// `adapter.state` with `present: false`); a changed RSSI floor or scan mode restarts the
    /// session on each adapter kept; adapters newly listed are looked up and started. The
    /// silence watchdog and the device cache take their new timings at their next check.
    func apply(_ new: ScannerSettings) {
        let old = settings
        guard new != old else { return }
        settings = new
        nextSweep = min(nextSweep, clock() + new.sweepInterval)
        let sessionChanged = new.minRSSI != old.minRSSI || new.passive != old.passive
        let known = Set(adapters.values.map(\.status.adapter))
        for path in adapters.keys.sorted() {
            guard let record = adapters[path] else { continue }
            let name = record.status.adapter
            if !wants(name) {
                endSession(path)
                adapters[path] = nil
                devices = devices.filter { $0.value.adapter != name }
                logger.info(
                    "adapter.released", metadata: ["adapter": "\(name)", "reason": "not in bluetooth.adapters"])
                output(
                    .adapter(
                        AdapterState(adapter: name, present: false, powered: false, discovering: false), at: clock())
                )
            } else if sessionChanged && record.scanning {
                endSession(path)
                startDiscovery(path)
            }
        }
        logger.info(
            "bluez.scanner.reconfigured",
            metadata: [
                "scan": "\(new.passive ? "passive" : "active")", "min_rssi": "\(new.minRSSI)",
                "adapters": "\(new.adapters.map { $0.sorted().joined(separator: ",") } ?? "all")",
            ])
        if new.adapters != old.adapters, let c = connection, bluezOwner != nil { adoptAdapters(c, besides: known) }
    }

    /// Whether `bluetooth.adapters` lets the scanner use this adapter.
    func wants(_ adapter: String) -> Bool { settings.adapters.map { $0.contains(adapter) } ?? true }

    /// Ends our session on an adapter: the passive monitor unregistered, or discovery stopped
    /// (marked as ours, so that its `Discovering: false` is not taken for someone else's).
    func endSession(_ path: String) {
        guard let record = adapters[path], record.scanning else { return }
        if record.passive {
            _ = try? connection?.call(
                destination: Self.service, path: path, interface: Self.monitorManagerInterface,
                method: "UnregisterMonitor"
            ) { $0.appendObjectPath(Self.monitorRoot) }
        } else {
            adapters[path]!.stoppedByUs = true
            _ = try? connection?.call(
                destination: Self.service, path: path, interface: Self.adapterInterface, method: "StopDiscovery")
        }
        adapters[path]!.scanning = false
        adapters[path]!.passive = false
    }

    /// Looks up BlueZ's objects and takes the adapters (and their cached devices) that the
    /// settings now want and the scanner did not have.
    private func adoptAdapters(_ c: DBusConnection, besides known: Set<String>) {
        do {
            try takeManagedObjects(c) { path in
                Self.adapterOf(path).map { wants($0) && !known.contains($0) } ?? false
            }
        } catch {
            // BlueZ went away meanwhile: its return is a full sync, which takes them.
            logger.warning("bluez.sync_failed", metadata: ["error": "\(error.description)", "retry": "at its return"])
        }
    }

    /// BlueZ's objects as they are now (`GetManagedObjects`), each whose path `taking` accepts
    /// handled as found (their RSSI is old news, not a sighting).
    func takeManagedObjects(_ c: DBusConnection, _ taking: (String) -> Bool) throws(DBusFailure) {
        let reply = try c.call(
            destination: Self.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
            method: "GetManagedObjects")
        reply.reader.forEachElement { entry in
            var kv = entry.recurse()
            guard let path = kv.string(), taking(path) else { return }
            kv.next()
            objectAdded(path: path, interfaces: kv, live: false)
        }
    }

    /// The adapter an object of BlueZ's belongs to (`/org/bluez/hci0`, `/org/bluez/hci0/dev_…`).
    static func adapterOf(_ path: String) -> String? {
        guard path.hasPrefix("/org/bluez/") else { return nil }
        return path.split(separator: "/").dropFirst(2).first.map(String.init)
    }
}
