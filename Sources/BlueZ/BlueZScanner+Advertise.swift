import BeaconCore
import CDBus
import Logging
import Synchronization

/// One adapter's calibration advertisement (`calibration.advertise`): an iBeacon whose major
/// and minor say which receiver sends it (`AutoCalibration.identity`).
public struct BeaconAdvertisement: Sendable, Equatable {
    public var receiver: String
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// The transmit power asked of the controller (BlueZ's `TxPower`, dBm).
    public var txPower: Int16

    public init(receiver: String, uuid: BeaconUUID, major: UInt16, minor: UInt16, txPower: Int16) {
        self.receiver = receiver
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.txPower = txPower
    }

    /// The iBeacon frame, its measured power −59 dBm at 0 dBm sent (the usual figure).
    var payload: [UInt8] {
        IBeaconID(uuid: uuid, major: major, minor: minor).payload(measuredPower: Int(txPower) - 59)
    }
}

/// Advertising through org.bluez.LEAdvertisingManager1: beacond exports one
/// org.bluez.LEAdvertisement1 object per adapter and registers it. BlueZ answers
/// `RegisterAdvertisement` only after it has read the object's properties from us, so the
/// call is sent without waiting and its answer is taken by the scanner's loop like any other
/// message: a blocking call would wait for an answer BlueZ cannot give until we answer it.
extension BlueZScanner {
    static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"
    static let advertisementRoot = "/org/beacond/advertisement"

    static func advertisementPath(_ adapter: String) -> String { advertisementRoot + "/" + adapter }

    /// Once per loop turn for each adapter: registers the advertisement the settings want on
    /// it (powered, with the manager), or unregisters one no longer wanted.
    func reconcileAdvertising(_ path: String, now t: Timestamp) {
        guard var record = adapters[path] else { return }
        let name = record.status.adapter
        if let pending = record.registering {
            // BlueZ never answered (it hung mid-call): ask again.
            guard t - pending.at > .seconds(30) else { return }
            adapters[path]!.registering = nil
            record.registering = nil
        }
        let wanted = record.status.powered ? settings.advertisements[name] : nil
        guard record.advertising != wanted else { return }
        if record.advertising != nil { unregisterAdvertisement(path) }
        guard let wanted, t >= record.advertiseRetryAt, let c = connection else { return }
        guard advertisingManagers.contains(path) else {
            if !record.advertisingUnavailableLogged {
                logger.notice(
                    "adapter.advertising_unavailable",
                    metadata: [
                        "adapter": "\(name)", "reason": "no LEAdvertisingManager1", "receiver": "\(wanted.receiver)",
                    ])
                adapters[path]!.advertisingUnavailableLogged = true
            }
            return
        }
        guard
            let message = dbus_message_new_method_call(
                Self.service, path, Self.advertisingManagerInterface, "RegisterAdvertisement")
        else { return }
        defer { dbus_message_unref(message) }
        var writer = MessageWriter(message)
        writer.appendObjectPath(Self.advertisementPath(name))
        writer.appendDictionary([])
        var serial: dbus_uint32_t = 0
        guard dbus_connection_send(c.raw, message, &serial) != 0 else { return }
        dbus_connection_flush(c.raw)
        adapters[path]!.registering = (serial, wanted, t)
    }

    /// The answer to a `RegisterAdvertisement` sent by `reconcileAdvertising` (a reply to
    /// anything else is ignored).
    func registrationAnswered(_ message: DBusMessageRef) {
        let serial = dbus_message_get_reply_serial(message.raw)
        guard serial != 0,
            let path = adapters.first(where: { $0.value.registering?.serial == serial })?.key,
            let (_, wanted, _) = adapters[path]!.registering
        else { return }
        adapters[path]!.registering = nil
        let name = adapters[path]!.status.adapter
        let failure =
            dbus_message_get_type(message.raw) == DBUS_MESSAGE_TYPE_ERROR
            ? dbus_message_get_error_name(message.raw).map { String(cString: $0) } ?? "error" : nil
        // AlreadyExists: BlueZ kept our registration through a power cycle.
        if failure == nil || failure == "org.bluez.Error.AlreadyExists" {
            adapters[path]!.advertising = wanted
            adapters[path]!.advertiseFailures = 0
            logger.info(
                "adapter.advertising",
                metadata: [
                    "adapter": "\(name)", "receiver": "\(wanted.receiver)", "uuid": "\(wanted.uuid)",
                    "major": "\(wanted.major)", "minor": "\(wanted.minor)",
                ])
        } else {
            var reader = message.reader
            let detail = reader.string() ?? ""
            _ = reader.next()
            adapters[path]!.advertiseFailures += 1
            let delay = TimeSpan.seconds(Int64(min(60, 1 << min(adapters[path]!.advertiseFailures - 1, 6))))
            adapters[path]!.advertiseRetryAt = clock() + delay
            logger.warning(
                "adapter.advertising_failed",
                metadata: ["adapter": "\(name)", "error": "\(failure ?? ""): \(detail)", "retry": "\(delay)"])
        }
    }

    func unregisterAdvertisement(_ path: String) {
        guard let record = adapters[path], record.advertising != nil else { return }
        let name = record.status.adapter
        _ = try? connection?.call(
            destination: Self.service, path: path, interface: Self.advertisingManagerInterface,
            method: "UnregisterAdvertisement"
        ) { $0.appendObjectPath(Self.advertisementPath(name)) }
        adapters[path]!.advertising = nil
        logger.info("adapter.advertising_stopped", metadata: ["adapter": "\(name)"])
    }

    /// The receivers advertising now, for `/v1/status` and `/v1/calibration`.
    func publishAdvertising() {
        let now = adapters.values.compactMap(\.advertising?.receiver).sorted()
        advertisingReceivers.withLock { if $0 != now { $0 = now } }
    }

    /// BlueZ reads our advertisement object: `Properties.GetAll` (its proxy) or
    /// `GetManagedObjects`; `Release` when it drops it (the adapter went away).
    func answerAdvertisement(_ call: DBusMessageRef, path: String, connection c: DBusConnection) {
        let adapterPath = "/org/bluez/" + path.dropFirst(Self.advertisementRoot.count + 1)
        let record = adapters[adapterPath]
        if call.member == "Release" {
            adapters[adapterPath]?.advertising = nil
            // Not at once: BlueZ releasing it again and again must not become a loop.
            adapters[adapterPath]?.advertiseRetryAt = clock() + .seconds(5)
            logger.notice(
                "adapter.advertising_released",
                metadata: ["adapter": "\(Self.adapterName(adapterPath))", "next": "registering again in 5 s"])
        }
        let readable = call.member == "GetAll" || call.member == "GetManagedObjects"
        guard let ad = record?.registering?.wanted ?? record?.advertising, readable else {
            let reply =
                call.member == "Release"
                ? dbus_message_new_method_return(call.raw)
                : readable
                    ? dbus_message_new_error(call.raw, "org.freedesktop.DBus.Error.UnknownObject", "not advertising")
                    : dbus_message_new_error(
                        call.raw, "org.freedesktop.DBus.Error.UnknownMethod", "GetAll or GetManagedObjects only")
            if let reply {
                c.send(reply)
                dbus_message_unref(reply)
            }
            return
        }
        guard let reply = dbus_message_new_method_return(call.raw) else { return }
        defer { dbus_message_unref(reply) }
        var root = MessageWriter(reply)
        if call.member == "GetManagedObjects" {
            root.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{oa{sa{sv}}}") { objects in
                objects.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { entry in
                    entry.appendObjectPath(path)
                    entry.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sa{sv}}") { interfaces in
                        interfaces.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { i in
                            i.append(Self.advertisementInterface)
                            Self.writeAdvertisementProperties(&i, ad)
                        }
                    }
                }
            }
        } else {
            Self.writeAdvertisementProperties(&root, ad)
        }
        c.send(reply)
    }

    /// {Type: broadcast, ManufacturerData: {0x004C: iBeacon}, TxPower}: 30 of the 31 bytes of
    /// a legacy advertisement with BlueZ's flags, so nothing else (a name, tx-power) is included.
    static func writeAdvertisementProperties(_ w: inout MessageWriter, _ ad: BeaconAdvertisement) {
        w.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{sv}") { props in
            props.appendEntry("Type", "s") { $0.append("broadcast") }
            props.appendEntry("ManufacturerData", "a{qv}") { v in
                v.openContainer(BEACOND_DBUS_TYPE_ARRAY, "{qv}") { dict in
                    dict.openContainer(BEACOND_DBUS_TYPE_DICT_ENTRY, nil) { entry in
                        entry.appendUInt16(0x004C)
                        entry.openContainer(BEACOND_DBUS_TYPE_VARIANT, "ay") { $0.appendBytes(ad.payload) }
                    }
                }
            }
            props.appendEntry("TxPower", "n") { $0.append(.int16(ad.txPower)) }
        }
    }
}
