import CSystemd
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Talks to systemd for a `Type=notify` service: readiness, status lines, watchdog pings,
/// reload and stop notices. Without `NOTIFY_SOCKET` (not under systemd) every call is a
/// no-op, so the daemon has one code path.
public final class ServiceNotifier: Sendable {
    /// Half of `WATCHDOG_USEC`: how often the engine's loop must ping, or nil without a watchdog.
    public let watchdogInterval: Double?
    private let lastPing = Mutex<Double>(0)
    public let pings = Atomic<Int>(0)

    public init() {
        var usec: UInt64 = 0
        watchdogInterval = sd_watchdog_enabled(0, &usec) > 0 ? Double(usec) / 2e6 : nil
    }

    public var underSystemd: Bool { getenv("NOTIFY_SOCKET") != nil }

    public func notify(_ state: String) {
        guard underSystemd else { return }
        _ = sd_notify(0, state)
    }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { notify("STATUS=\(text)") }
    public func stopping() { notify("STOPPING=1\nSTATUS=stopping") }

    /// `RELOADING=1` with the monotonic time systemd 253+ asks for (older ones ignore it).
    public func reloading() {
        notify("RELOADING=1\nMONOTONIC_USEC=\(SystemClock.monotonic / 1000)")
    }

    /// Called from the engine's loop: pings when half the watchdog period has passed, so a
    /// wedged engine (not the process as a whole) is what systemd restarts.
    public func engineAlive() {
        guard let interval = watchdogInterval else { return }
        let now = Double(SystemClock.monotonic) / 1e9
        let due = lastPing.withLock { last -> Bool in
            guard now - last >= interval else { return false }
            last = now
            return true
        }
        if due {
            notify("WATCHDOG=1")
            pings.add(1, ordering: .relaxed)
        }
    }
}
