import BeaconCore
import CDBus
import Logging

/// One adapter as the scanner tracks it.
struct AdapterRecord {
    var path: String
    var status: AdapterState
    /// Our discovery session is running (SetDiscoveryFilter + StartDiscovery succeeded).
    var scanning = false
    /// Our session is a passive advertisement monitor rather than discovery.
    var passive = false
    /// We stopped discovery ourselves (silence watchdog): its Discovering=false is ours.
    var stoppedByUs = false
    var nextAttempt: Timestamp
    var failures = 0
    /// Latest advertisement, or when our discovery started: what the silence watchdog measures.
    var lastHeard: Timestamp
    /// 0: fine; 1: discovery restarted for silence; 2: power-cycled for silence.
    var silenceStage = 0
    var silenceStageAt: Timestamp
    /// The calibration advertisement BlueZ has taken from us on this adapter.
    var advertising: BeaconAdvertisement?
    /// A `RegisterAdvertisement` sent and not yet answered.
    var registering: (serial: UInt32, wanted: BeaconAdvertisement, at: Timestamp)?
    var advertiseRetryAt = Timestamp(nanoseconds: 0)
    var advertiseFailures = 0
    var advertisingUnavailableLogged = false
}

extension BlueZScanner {
    static func adapterName(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    func adapterAppeared(path: String, properties: MessageReader) {
        let name = Self.adapterName(path)
        if !wants(name) {
            logger.info("adapter.ignored", metadata: ["adapter": "\(name)", "reason": "not in bluetooth.adapters"])
            return
        }
        var powered = false
        var discovering = false
        properties.forEachStringKeyed { key, value in
            if key == "Powered" { powered = value.bool() ?? false }
            if key == "Discovering" { discovering = value.bool() ?? false }
        }
        let t = clock()
        let record = AdapterRecord(
            path: path, status: AdapterState(adapter: name, present: true, powered: powered, discovering: discovering),
            nextAttempt: t, lastHeard: t, silenceStageAt: t)
        adapters[path] = record
        logger.info("adapter.present", metadata: ["adapter": "\(name)", "powered": "\(powered)"])
        output(.adapter(record.status, at: t))
        if powered { startDiscovery(path) }
    }

    func adapterRemoved(path: String) {
        guard var record = adapters.removeValue(forKey: path) else { return }
        record.status = AdapterState(
            adapter: record.status.adapter, present: false, powered: false, discovering: false)
        logger.warning("adapter.removed", metadata: ["adapter": "\(record.status.adapter)", "next": "waiting for it"])
        output(.adapter(record.status, at: clock()))
        devices = devices.filter { $0.value.adapter != record.status.adapter }
    }

    func adapterChanged(path: String, properties: MessageReader) {
        guard var record = adapters[path] else { return }
        let before = record.status
        properties.forEachStringKeyed { key, value in
            if key == "Powered", let v = value.bool() { record.status.powered = v }
            if key == "Discovering", let v = value.bool() { record.status.discovering = v }
        }
        guard record.status != before else { return }
        let t = clock()
        adapters[path] = record
        output(.adapter(record.status, at: t))
        let name = record.status.adapter
        if record.status.powered != before.powered {
            logger.log(
                level: record.status.powered ? .info : .warning,
                "\(record.status.powered ? "adapter.powered_on" : "adapter.powered_off")",
                metadata: ["adapter": "\(name)"])
            adapters[path]!.scanning = false
            if record.status.powered { startDiscovery(path) }
        } else if before.discovering && !record.status.discovering && record.stoppedByUs {
            // The watchdog's own StopDiscovery; it has already started discovery again.
            adapters[path]!.stoppedByUs = false
        } else if before.discovering && !record.status.discovering && record.status.powered {
            // Someone (or bluetoothd itself) ended discovery: start our session again.
            logger.warning(
                "adapter.discovery_stopped", metadata: ["adapter": "\(name)", "next": "restarting discovery"])
            adapters[path]!.scanning = false
            startDiscovery(path)
        }
    }

    /// SetDiscoveryFilter({Transport: le, DuplicateData: true, RSSI}) then StartDiscovery.
    /// DuplicateData matters: without it BlueZ reports a beacon repeating the same payload once.
    func startDiscovery(_ path: String) {
        guard let c = connection, var record = adapters[path], record.status.powered else { return }
        let t = clock()
        if settings.passive, registerMonitor(path) {
            record.scanning = true
            record.passive = true
            record.failures = 0
            record.lastHeard = t
            adapters[path] = record
            return
        }
        do {
            _ = try c.call(
                destination: Self.service, path: path, interface: Self.adapterInterface, method: "SetDiscoveryFilter"
            ) {
                $0.appendDictionary([
                    ("Transport", .string("le")), ("DuplicateData", .bool(true)),
                    ("RSSI", .int16(Int16(clamping: settings.minRSSI))),
                ])
            }
            do {
                _ = try c.call(
                    destination: Self.service, path: path, interface: Self.adapterInterface, method: "StartDiscovery")
            } catch  where error.name == "org.bluez.Error.InProgress" {
                // Already discovering for us: fine.
            }
            record.scanning = true
            record.failures = 0
            record.lastHeard = t
            logger.info("adapter.discovery_started", metadata: ["adapter": "\(record.status.adapter)"])
        } catch {
            record.failures += 1
            let delay = TimeSpan.seconds(Int64(min(30, 1 << min(record.failures - 1, 5))))
            record.nextAttempt = t + delay
            logger.warning(
                "adapter.discovery_failed",
                metadata: ["adapter": "\(record.status.adapter)", "error": "\(error.description)", "retry": "\(delay)"])
        }
        adapters[path] = record
    }

    /// An advertisement arrived through this adapter: the watchdog is satisfied.
    func heard(adapter name: String, at t: Timestamp) {
        let path = "/org/bluez/" + name
        guard adapters[path] != nil else { return }
        adapters[path]!.lastHeard = t
        if adapters[path]!.silenceStage != 0 {
            adapters[path]!.silenceStage = 0
            logger.info("adapter.heard_again", metadata: ["adapter": "\(name)"])
        }
    }

    /// Once per loop turn: retries, the silence watchdog, the device-cache sweep.
    func maintain(now t: Timestamp) {
        for path in adapters.keys.sorted() {
            guard let record = adapters[path], record.status.powered else { continue }
            if !record.scanning {
                if record.nextAttempt <= t { startDiscovery(path) }
                continue
            }
            watchSilence(path, record, now: t)
        }
        if !settings.advertisements.isEmpty || adapters.values.contains(where: { $0.advertising != nil }) {
            for path in adapters.keys.sorted() { reconcileAdvertising(path, now: t) }
            publishAdvertising()
        }
        if t >= nextSweep {
            nextSweep = t + settings.sweepInterval
            sweepDevices(now: t)
        }
    }

    /// No advertisement for `silenceRestart` while discovering: restart discovery; still
    /// nothing `silencePowerCycle` later: power-cycle the adapter. Home Assistant's answer is
    /// a 90 s watchdog plus resets; bleak has none. Each step is logged.
    private func watchSilence(_ path: String, _ record: AdapterRecord, now t: Timestamp) {
        let silent = t - record.lastHeard
        let name = record.status.adapter
        switch record.silenceStage {
        case 0 where silent >= settings.silenceRestart:
            logger.warning(
                "adapter.silent",
                metadata: ["adapter": "\(name)", "for": "\(silent.seconds)s", "next": "restarting discovery"])
            endSession(path)
            startDiscovery(path)
            adapters[path]!.silenceStage = 1
            adapters[path]!.silenceStageAt = t
        case 1 where t - record.silenceStageAt >= settings.silencePowerCycle:
            logger.warning(
                "adapter.silent",
                metadata: ["adapter": "\(name)", "for": "\(silent.seconds)s", "next": "power-cycling"])
            setPowered(path, false)
            setPowered(path, true)
            adapters[path]?.silenceStage = 2
            adapters[path]?.silenceStageAt = t
        case 2 where t - record.silenceStageAt >= .minutes(30):
            adapters[path]?.silenceStage = 0
            adapters[path]?.lastHeard = t
        default:
            break
        }
    }

    private func setPowered(_ path: String, _ on: Bool) {
        do {
            _ = try connection?.call(
                destination: Self.service, path: path, interface: "org.freedesktop.DBus.Properties", method: "Set"
            ) {
                $0.append(Self.adapterInterface)
                $0.append("Powered")
                $0.appendVariant(.bool(on))
            }
        } catch {
            logger.error(
                "adapter.power_failed",
                metadata: ["adapter": "\(Self.adapterName(path))", "error": "\(error.description)"])
        }
    }

    /// BlueZ keeps a Device1 for every address it hears; with rotating addresses that grows
    /// forever. Devices not heard for `deviceTTL`, and never paired, trusted or connected,
    /// are removed through their adapter.
    private func sweepDevices(now t: Timestamp) {
        let stale = devices.filter { !$0.value.kept && t - $0.value.lastHeard > settings.deviceTTL }
        guard !stale.isEmpty, let c = connection else { return }
        var removed = 0
        for (device, record) in stale {
            do {
                _ = try c.call(
                    destination: Self.service, path: "/org/bluez/" + record.adapter, interface: Self.adapterInterface,
                    method: "RemoveDevice"
                ) { $0.appendObjectPath(device.text) }
                removed += 1
            } catch {
                // Already gone (BlueZ's own timeout won the race): nothing to do.
            }
            devices[device] = nil
        }
        if removed > 0 { logger.debug("bluez.devices_removed", metadata: ["count": "\(removed)"]) }
    }
}
