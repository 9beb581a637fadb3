import BeaconConfig
import BeaconCore
import Glibc
import POSIX
import Synchronization
import Testing

@testable import beacond

/// The ESPHome thread's rules, each on its own with the times a test gives (issue 61, M2, L1,
/// L3): names resolved off the thread with the last good address kept, the backoff started
/// again only after a connection that lasted, and a bound on advertisements a second.
@Suite struct ESPHomeLinkTests {
    static let t0 = Timestamp.seconds(1_763_805_600)

    /// A lookup the test lets go of: the name server answering when the test says.
    final class HeldLookup: Sendable {
        let answers = Mutex<[Result<SocketAddress, TCPConnect.ConnectFailure>]>([])
        let calls = Atomic<Int>(0)
        let release = DispatchSemaphoreBox()

        var lookup: HostResolver.Lookup {
            { [self] _, _ in
                calls.add(1, ordering: .relaxed)
                release.wait()
                return answers.withLock { $0.removeFirst() }
            }
        }
    }

    final class DispatchSemaphoreBox: Sendable {
        private let count = Mutex(0)
        func signal() { count.withLock { $0 += 1 } }
        func wait() {
            while !count.withLock({ c in
                guard c > 0 else { return false }
                c -= 1
                return true
            }) { usleep(1_000) }
        }
    }

    static let someAddress = SocketAddress(family: AF_INET, socketType: 1, socketProtocol: 6, bytes: [2, 0, 0, 80])

    @Test func anAddressLiteralIsReadyAtOnce() {
        let resolver = HostResolver(lookup: { _, _ in .failure(.init("not asked")) }, onResolved: {})
        guard case .ready = resolver.address(host: "127.0.0.1", port: 6053) else {
            Issue.record("a literal waited")
            return
        }
        guard case .ready = resolver.address(host: "::1", port: 6053) else {
            Issue.record("an IPv6 literal waited")
            return
        }
    }

    @Test func aNameIsLookedUpOffTheThreadAndItsLastGoodAddressKept() throws {
        let held = HeldLookup()
        let woken = Atomic<Int>(0)
        let resolver = HostResolver(lookup: held.lookup, onResolved: { woken.add(1, ordering: .relaxed) })
        // The first lookup under way: the caller waits, not blocks, and asks only once.
        #expect(resolver.address(host: "esp.store.example", port: 6053) == .waiting)
        #expect(resolver.address(host: "esp.store.example", port: 6053) == .waiting)
        held.answers.withLock { $0 = [.success(Self.someAddress), .failure(.init("esp does not resolve: timeout"))] }
        held.release.signal()
        try Self.waitFor { woken.load(ordering: .relaxed) == 1 }
        #expect(held.calls.load(ordering: .relaxed) == 1)
        #expect(resolver.completed == 1)
        // Resolved: ready, and a fresh lookup starts behind it.
        #expect(resolver.address(host: "esp.store.example", port: 6053) == .ready(Self.someAddress))
        held.release.signal()
        try Self.waitFor { woken.load(ordering: .relaxed) == 2 }
        // The name server gone: the last good address all the same.
        #expect(resolver.address(host: "esp.store.example", port: 6053) == .ready(Self.someAddress))
    }

    @Test func aNameThatNeverResolvedIsToldAsFailed() throws {
        let held = HeldLookup()
        let woken = Atomic<Int>(0)
        let resolver = HostResolver(lookup: held.lookup, onResolved: { woken.add(1, ordering: .relaxed) })
        #expect(resolver.address(host: "gone.example", port: 6053) == .waiting)
        held.answers.withLock { $0 = [.failure(.init("gone.example does not resolve: Name or service not known"))] }
        held.release.signal()
        try Self.waitFor { woken.load(ordering: .relaxed) == 1 }
        #expect(
            resolver.address(host: "gone.example", port: 6053)
                == .failed("gone.example does not resolve: Name or service not known"))
    }

    static func waitFor(_ condition: () -> Bool) throws {
        for _ in 0..<5_000 where !condition() { usleep(1_000) }
        guard condition() else { throw CancellationError() }
    }

    @Test func theBackoffStartsAgainOnlyAfterAConnectionThatLasted() {
        var link = ProxyLink(spec: ESPHomeProxySpec(receiver: "esp", host: "127.0.0.1"), receiver: .unlisted)
        let first = link.countFailure(at: Self.t0)
        #expect(first == false, "never connected: no flap")
        #expect(link.failures == 1)
        for k in 1...5 {
            link.connectedSince = Self.t0 + .seconds(Int64(k * 10))
            let flapped = link.countFailure(at: Self.t0 + .seconds(Int64(k * 10 + 1)))
            #expect(flapped, "dropped a second after Hello")
            link.connectedSince = nil
        }
        #expect(link.failures == 6, "each flap lengthens the wait")
        link.connectedSince = Self.t0 + .seconds(100)
        let steady = link.countFailure(at: Self.t0 + .seconds(100) + ProxyLink.steadyAfter)
        #expect(steady == false)
        #expect(link.failures == 1, "a connection that lasted a minute starts the backoff again")
    }

    @Test func advertisementsOverTheBoundAreShedAndCounted() {
        var rate = AdvertisementRate()
        let taken = [
            rate.admit(1_500, at: Self.t0), rate.admit(1_500, at: Self.t0 + .milliseconds(500)),
            rate.admit(100, at: Self.t0 + .milliseconds(999)),
        ]
        #expect(taken == [1_500, 500, 0])
        #expect(rate.shed == 1_100)
        let next = rate.admit(100, at: Self.t0 + .seconds(1))
        #expect(next == 100, "a new second")
        #expect(rate.shed == 1_100, "nothing shed in it")
    }
}
