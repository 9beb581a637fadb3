import Glibc

/// The devices a type of service is announced by on the local network, as Avahi (the mDNS
/// daemon of Debian's desktops and many gateways) resolves them over the system bus.
///
/// Why here: it is the daemon's other D-Bus client, on the same libdbus connection code as
/// BlueZ's. `beaconctl doctor` uses it to list the ESPHome devices (`_esphomelib._tcp`) a store
/// has, with the `esphome:` entry to paste; without Avahi it says so and lists nothing.
public enum AvahiBrowser {
    /// One announced service, resolved.
    public struct Service: Sendable, Equatable {
        public var name: String
        public var host: String
        public var address: String
        public var port: Int
        /// The TXT record's `key=value` entries (ESPHome's: `mac`, `version`, `friendly_name`,
        /// `platform`, `board`, `api_encryption` …).
        public var txt: [String: String]
    }

    /// Browses `type` for up to `waitMs` (until Avahi says it has sent all it knows), then
    /// resolves each service. Throws when Avahi is not on the system bus.
    public static func browse(type: String, waitMs: Int32 = 3000) throws(DBusFailure) -> [Service] {
        let bus = try DBusConnection()
        try bus.addMatch("type='signal',interface='org.freedesktop.Avahi.ServiceBrowser'")
        let created = try bus.call(
            destination: "org.freedesktop.Avahi", path: "/", interface: "org.freedesktop.Avahi.Server",
            method: "ServiceBrowserNew"
        ) { w in
            w.append(.int32(-1))  // every interface
            w.append(.int32(-1))  // IPv4 and IPv6
            w.append(type)
            w.append("")  // the default domain, .local
            w.append(.uint32(0))
        }
        guard let browser = created.reader.string() else { return [] }
        var found: [(interface: Int32, protocol: Int32, name: String, type: String, domain: String)] = []
        let deadline = SystemClockMillis.now + Int64(waitMs)
        browsing: while SystemClockMillis.now < deadline {
            guard bus.readWrite(timeoutMs: 100) else { break }
            while let message = bus.pop() {
                guard message.path == browser else { continue }
                if message.isSignal("org.freedesktop.Avahi.ServiceBrowser", "AllForNow") { break browsing }
                if message.isSignal("org.freedesktop.Avahi.ServiceBrowser", "Failure") { break browsing }
                guard message.isSignal("org.freedesktop.Avahi.ServiceBrowser", "ItemNew") else { continue }
                var r = message.reader
                guard let interface = r.int32(), r.next(), let proto = r.int32(), r.next(), let name = r.string(),
                    r.next(), let kind = r.string(), r.next(), let domain = r.string()
                else { continue }
                found.append((interface, proto, name, kind, domain))
            }
        }
        return found.compactMap { item in
            guard
                let reply = try? bus.call(
                    destination: "org.freedesktop.Avahi", path: "/", interface: "org.freedesktop.Avahi.Server",
                    method: "ResolveService",
                    arguments: { w in
                        w.append(.int32(item.interface))
                        w.append(.int32(item.protocol))
                        w.append(item.name)
                        w.append(item.type)
                        w.append(item.domain)
                        w.append(.int32(-1))
                        w.append(.uint32(0))
                    })
            else { return nil }
            return service(reply.reader)
        }
    }

    /// `ResolveService`'s answer: (interface, protocol, name, type, domain, host, aprotocol,
    /// address, port, txt, flags).
    static func service(_ reader: MessageReader) -> Service? {
        var r = reader
        guard r.int32() != nil, r.next(), r.int32() != nil, r.next(), let name = r.string(), r.next(),
            r.string() != nil, r.next(), r.string() != nil, r.next(), let host = r.string(), r.next(),
            r.int32() != nil, r.next(), let address = r.string(), r.next(), let port = r.uint16(), r.next()
        else { return nil }
        var txt: [String: String] = [:]
        r.forEachElement { entry in
            guard let bytes = entry.bytes() else { return }
            let text = String(decoding: bytes, as: UTF8.self)
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            txt[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return Service(name: name, host: host, address: address, port: Int(port), txt: txt)
    }
}

/// Milliseconds of the monotonic clock, for the browse's deadline.
enum SystemClockMillis {
    static var now: Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1000 + Int64(t.tv_nsec) / 1_000_000
    }
}
