import Glibc
import Synchronization

/// Host names resolved off the thread that connects. Why: `getaddrinfo` blocks for the
/// resolver's whole timeout when the name server does not answer (a DNS server down, `.local`
/// devices switched off), and the ESPHome thread polls every proxy: one name that does not
/// resolve held up every proxy, those given by address too. Here an address literal is read
/// at once; a name is looked up on a thread of its own, and its last good address is used
/// meanwhile, so a name server that goes away costs nothing once a name has resolved.
public final class HostResolver: Sendable {
    /// How a name is looked up: the system's `getaddrinfo`, or a test's.
    public typealias Lookup =
        @Sendable (_ host: String, _ port: Int) -> Result<SocketAddress, TCPConnect.ConnectFailure>

    /// What `address` has for a host now.
    public enum Answer: Sendable, Equatable {
        case ready(SocketAddress)
        /// The first lookup of the name is under way; `onResolved` is called when it ends.
        case waiting
        case failed(String)
    }

    private struct Entry {
        var lastGood: SocketAddress?
        var inFlight = false
        /// The last lookup's failure, told once (`address` then starts another).
        var failure: String?
    }

    private let lookup: Lookup
    private let onResolved: @Sendable () -> Void
    private let entries = Mutex<[String: Entry]>([:])
    private let completions = Atomic<Int>(0)

    public init(lookup: @escaping Lookup = HostResolver.system, onResolved: @escaping @Sendable () -> Void) {
        self.lookup = lookup
        self.onResolved = onResolved
    }

    /// Lookups ended since the start: a caller that waits compares it with what it saw.
    public var completed: Int { completions.load(ordering: .acquiring) }

    /// Where to connect for `host`:`port` now. Never blocks on a name server.
    public func address(host: String, port: Int) -> Answer {
        if let literal = Self.literal(host, port) { return .ready(literal) }
        let key = "\(host):\(port)"
        let (answer, start) = entries.withLock { entries -> (Answer, Bool) in
            var entry = entries[key] ?? Entry()
            defer { entries[key] = entry }
            if !entry.inFlight, let failure = entry.failure {
                entry.failure = nil
                return (entry.lastGood.map(Answer.ready) ?? .failed(failure), false)
            }
            let start = !entry.inFlight
            entry.inFlight = true
            return (entry.lastGood.map(Answer.ready) ?? .waiting, start)
        }
        if start {
            detachThread(named: "beacond-resolve") { [self] in
                let result = lookup(host, port)
                entries.withLock { entries in
                    var entry = entries[key] ?? Entry()
                    entry.inFlight = false
                    switch result {
                    case let .success(address): (entry.lastGood, entry.failure) = (address, nil)
                    case let .failure(why): entry.failure = why.description
                    }
                    entries[key] = entry
                }
                completions.add(1, ordering: .releasing)
                onResolved()
            }
        }
        return answer
    }

    /// An IPv4 or IPv6 literal, read without any name server.
    static func literal(_ host: String, _ port: Int) -> SocketAddress? {
        try? resolve(host, port, flags: AI_NUMERICHOST).get()
    }

    /// The system's resolver (`/etc/hosts`, DNS, mDNS as nsswitch says): blocks.
    public static let system: Lookup = { host, port in resolve(host, port, flags: 0) }

    private static func resolve(_ host: String, _ port: Int, flags: Int32) -> Result<
        SocketAddress, TCPConnect.ConnectFailure
    > {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = flags
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let first = list else {
            return .failure(.init("\(host) does not resolve: \(String(cString: gai_strerror(resolved)))"))
        }
        defer { freeaddrinfo(first) }
        return .success(SocketAddress(first.pointee))
    }
}

/// One resolved address, copied out of `getaddrinfo`'s list.
public struct SocketAddress: Sendable, Equatable {
    public var family: Int32
    public var socketType: Int32
    public var socketProtocol: Int32
    public var bytes: [UInt8]

    init(_ info: addrinfo) {
        (family, socketType, socketProtocol) = (info.ai_family, info.ai_socktype, info.ai_protocol)
        bytes = Array(UnsafeRawBufferPointer(start: info.ai_addr, count: Int(info.ai_addrlen)))
    }

    public init(family: Int32, socketType: Int32, socketProtocol: Int32, bytes: [UInt8]) {
        (self.family, self.socketType, self.socketProtocol, self.bytes) = (family, socketType, socketProtocol, bytes)
    }
}
