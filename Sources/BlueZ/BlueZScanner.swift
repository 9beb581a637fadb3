import BeaconCore
import CDBus
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Hears advertisements from BlueZ on the system bus and hands them to the runtime as
/// batches of sightings, keeping discovery running through everything a gateway meets:
/// bluetoothd restarting (`NameOwnerChanged`), adapters unplugged, powered off or re-added,
/// discovery stopped by someone else, and adapters that go silent. The daemon starts, and
/// stays up, with no BlueZ and even no system bus: it waits them out.
///
/// Everything happens on the scanner's own thread: reading, decoding of D-Bus messages,
/// and BlueZ method calls. Only finished batches cross to the engine, so a flood of signals
/// costs the engine one lock per batch and never delays its timers.
/// `@unchecked Sendable`: its D-Bus connections and device tables live on the scanner's thread;
/// `stop` and the settings a reload gives cross under locks.
public final class BlueZScanner: @unchecked Sendable {
    static let service = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"

    /// Touched by the scanner's thread only; a reload's settings wait in `requested`.
    var settings: ScannerSettings
    private let requested = Mutex<ScannerSettings?>(nil)
    let clock: @Sendable () -> Timestamp
    let output: @Sendable (ScannerOutput) -> Void
    let logger: Logger
    /// The name an adapter's sightings go under: its receiver's id in the site (SPEC §6.1),
    /// asked once when a device record is made, so a sighting leaves the scanner under the
    /// name the engine knows and is never renamed on the way.
    let receiverName: @Sendable (_ adapter: String) -> String

    private let stopRequested = Atomic<Bool>(false)
    /// D-Bus signals handled (the engine summary, the ingest benchmark).
    public let signalsReceived = Atomic<Int>(0)
    /// Whether bluetoothd owns org.bluez now, for status and metrics.
    public let bluezReachable = Atomic<Bool>(false)
    /// System-bus connections made after the first (the bus or the daemon went away).
    public let reconnects = Atomic<Int>(0)
    /// BlueZ has been tried once (found or not): the daemon reports readiness after this.
    public let attempted = Atomic<Bool>(false)
    private var connectedBefore = false

    // State below is touched by the scanner thread only.
    var connection: DBusConnection?
    /// Device1 PropertiesChanged, read in large chunks (nil: they come on `connection`).
    var stream: SignalStream?
    var needsSync = true
    var bluezOwner: String?
    var busUnavailableLogged = false
    var adapters: [String: AdapterRecord] = [:]
    /// Adapters that offer org.bluez.AdvertisementMonitorManager1 (passive scanning).
    var monitorManagers: Set<String> = []
    /// Adapters that offer org.bluez.LEAdvertisingManager1 (calibration advertisements).
    var advertisingManagers: Set<String> = []
    /// The receivers this gateway's adapters advertise as now (`calibration.advertise`).
    public let advertisingReceivers = Mutex<[String]>([])
    var devices: [DevicePath: DeviceRecord] = [:]
    /// The adapter behind each receiver name the records give (for the silence watchdog).
    var adapterOfReceiver: [String: String] = [:]
    var batch: [Sighting] = []
    /// When the current batch was started (the last flush).
    var batchStarted: Timestamp
    var nextSweep: Timestamp

    /// - Parameter receiverName: the name of each adapter's receiver (by default its own).
    public init(
        settings: ScannerSettings, clock: @escaping @Sendable () -> Timestamp,
        receiverName: @escaping @Sendable (_ adapter: String) -> String = { $0 },
        output: @escaping @Sendable (ScannerOutput) -> Void, logger: Logger
    ) {
        self.settings = settings
        self.receiverName = receiverName
        self.clock = clock
        self.output = output
        self.logger = logger
        self.nextSweep = clock() + settings.sweepInterval
        self.batchStarted = clock()
    }

    /// New `bluetooth:` settings from a reload, applied by the scanner's thread at its next
    /// turn (`apply`); safe from any thread.
    public func reconfigure(_ new: ScannerSettings) { requested.withLock { $0 = new } }

    private func takeRequested() -> ScannerSettings? {
        requested.withLock { pending in
            defer { pending = nil }
            return pending
        }
    }

    /// Asks `run()` to return; safe from any thread. It returns within about 100 ms.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }

    var stopping: Bool { stopRequested.load(ordering: .relaxed) }

    /// Connects and learns BlueZ's objects without starting to read: signals that arrive
    /// meanwhile wait in the bus for `run()`. Benchmarks use it to measure a queued backlog.
    @discardableResult
    public func prepare() -> Bool {
        guard let c = connection ?? connect() else { return false }
        if needsSync { sync(c) }
        return bluezOwner != nil
    }

    /// The scanner's loop. Blocks until `stop()`; call it on a thread of its own.
    public func run() {
        logger.info("bluez.scanner.start", metadata: ["scan": "\(settings.passive ? "passive" : "active")"])
        while !stopping {
            if let new = takeRequested() { apply(new) }
            guard let connection = connection ?? connect() else {
                attempted.store(true, ordering: .relaxed)
                pause(milliseconds: 1000)
                continue
            }
            if needsSync { sync(connection) }
            attempted.store(true, ordering: .relaxed)
            guard turn(connection) else {
                lost(connection)
                continue
            }
            // Hand the batch over when it is large or 5 ms old: a flood crosses to the engine
            // in few large batches, not thousands of small ones.
            if batch.count >= 4096 || (!batch.isEmpty && clock() - batchStarted >= .milliseconds(5)) {
                flush()
            }
            maintain(now: clock())
        }
        // Stopping: take in what the bus has already delivered, so advertisements heard
        // before SIGTERM still reach the engine.
        if let connection {
            var rounds = 0
            while rounds < 256, turn(connection, waitMs: 0) { rounds += 1 }
            // Our advertisements end with us (BlueZ would drop them when we leave the bus).
            for path in adapters.keys.sorted() { unregisterAdvertisement(path) }
        }
        flush()
        logger.info("bluez.scanner.stop")
    }

    private func connect() -> DBusConnection? {
        do {
            let c = try DBusConnection()
            try c.addMatch(
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'"
            )
            try c.addMatch("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager'")
            let properties =
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
            do {
                stream = try SignalStream(rule: properties + ",arg0='org.bluez.Device1'")
                try c.addMatch(properties + ",arg0='org.bluez.Adapter1'")
            } catch {
                // Everything on the libdbus connection then: slower under a flood, still correct.
                logger.notice("dbus.signal_stream_unavailable", metadata: ["error": "\(error.description)"])
                stream = nil
                try c.addMatch(properties)
            }
            connection = c
            if connectedBefore { reconnects.add(1, ordering: .relaxed) }
            connectedBefore = true
            needsSync = true
            busUnavailableLogged = false
            logger.info("dbus.connected")
            return c
        } catch {
            if !busUnavailableLogged {
                logger.warning("dbus.unavailable", metadata: ["error": "\(error.description)", "retry": "1s"])
                busUnavailableLogged = true
            }
            return nil
        }
    }

    /// One turn of reading: waits (up to 100 ms, 1 ms while a batch is pending) for either
    /// connection, then handles what both have. False when a connection is lost.
    /// With `waitMs: 0` it returns false when nothing was waiting (used to drain at stop).
    private func turn(_ c: DBusConnection, waitMs: Int32? = nil) -> Bool {
        var fds = [pollfd(fd: c.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        if let stream { fds.append(pollfd(fd: stream.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
        let ready = poll(&fds, nfds_t(fds.count), waitMs ?? (batch.isEmpty ? 100 : 1))
        guard ready >= 0 || errno == EINTR else { return false }
        if waitMs == 0 && ready <= 0 { return false }
        // The control connection: libdbus reads and parses; its traffic is small.
        guard c.readWrite(timeoutMs: 0) else { return false }
        while let message = c.pop() { handle(message) }
        if let stream, fds.count > 1, fds[1].revents != 0 {
            guard
                stream.receive({ signal in
                    signalsReceived.add(1, ordering: .relaxed)
                    deviceChanged(device: signal.device, update: signal.update)
                })
            else { return false }
        }
        return true
    }

    private func lost(_ c: DBusConnection) {
        logger.warning("dbus.disconnected", metadata: ["next": "reconnecting"])
        connection = nil
        stream = nil
        bluezGone(reason: "system bus connection lost")
    }

    /// Learns BlueZ's current objects: after connecting, and whenever bluetoothd (re)starts.
    func sync(_ c: DBusConnection) {
        needsSync = false
        let owner: String?
        do {
            let reply = try c.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "GetNameOwner"
            ) { $0.append(Self.service) }
            owner = reply.reader.string()
        } catch {
            owner = nil
        }
        guard let owner else {
            if bluezOwner != nil || adapters.isEmpty { bluezGone(reason: "org.bluez has no owner") }
            return
        }
        bluezOwner = owner
        bluezReachable.store(true, ordering: .relaxed)
        do {
            try takeManagedObjects(c) { _ in true }
            logger.info("bluez.present", metadata: ["owner": "\(owner)", "adapters": "\(adapters.count)"])
        } catch {
            logger.warning("bluez.sync_failed", metadata: ["error": "\(error.description)", "retry": "1s"])
            needsSync = true
            pause(milliseconds: 1000)
        }
    }

    /// bluetoothd went away (or the bus did): every adapter is gone until it comes back.
    func bluezGone(reason: String) {
        if bluezOwner != nil || !adapters.isEmpty {
            logger.warning("bluez.gone", metadata: ["reason": "\(reason)", "next": "waiting for org.bluez"])
        } else {
            logger.notice("bluez.absent", metadata: ["next": "waiting for org.bluez"])
        }
        bluezOwner = nil
        bluezReachable.store(false, ordering: .relaxed)
        let t = clock()
        for path in adapters.keys.sorted() {
            guard var record = adapters.removeValue(forKey: path) else { continue }
            record.status.present = false
            record.status.powered = false
            record.status.discovering = false
            output(.adapter(record.status, at: t))
        }
        devices.removeAll()
        monitorManagers.removeAll()
        advertisingManagers.removeAll()
        publishAdvertising()
    }

    func flush() {
        let t = clock()
        batchStarted = t
        guard !batch.isEmpty else { return }
        // The silence watchdog needs to know each adapter was heard: once per run of
        // sightings from one adapter, not once per sighting.
        for run in Sighting.receiverRuns(batch) {
            if let adapter = adapterOfReceiver[run.name] { heard(adapter: adapter, at: t) }
        }
        output(.sightings(batch))
        batch.removeAll(keepingCapacity: true)
    }

    func pause(milliseconds: Int) {
        var left = milliseconds
        while left > 0 && !stopping {
            usleep(50_000)
            left -= 50
        }
    }
}
