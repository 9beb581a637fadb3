import BeaconCore
import BeaconRuntime
import Storage
import Testing

@testable import Publishing

/// Events kept in memory while the state store cannot write (a full disk): in order, bounded,
/// and when the bound bites, the events an operator misses least go first.
@Suite struct HeldEventsTests {
    static func event(_ n: Int, _ kind: String) -> StateStore.StoredEvent {
        .init(id: "00000\(n)", type: "beacond." + kind, time: .seconds(Int64(n)), body: "{}")
    }

    @Test func heldEventsKeepTheirOrderUnderTheBound() {
        var held = HeldEvents()
        held.hold([Self.event(1, "region.enter"), Self.event(2, "asset.position")], limit: 5)
        held.hold([Self.event(3, "zone.exit")], limit: 5)
        #expect(held.events.map(\.id) == ["000001", "000002", "000003"])
        #expect(held.dropped == 0)
    }

    @Test func positionsAndRangingGoFirstThenTheOldest() {
        var held = HeldEvents()
        let kinds = ["region.enter", "asset.position", "zone.enter", "ranging", "asset.position", "region.exit"]
        let first = held.hold(kinds.enumerated().map { Self.event($0.offset, $0.element) }, limit: 4)
        #expect(first == ["000001", "000003"], "the ids dropped, for the runtime copy to drop")
        // Two over: the two oldest superseded ones (a position and the ranging update)
        #expect(
            held.events.map(\.type) == [
                "beacond.region.enter", "beacond.zone.enter", "beacond.asset.position", "beacond.region.exit",
            ])
        #expect(held.dropped == 2)
        // Three more alerts: the last position goes, then the oldest alerts
        let second = held.hold((6..<9).map { Self.event($0, "zone.exit") }, limit: 4)
        #expect(held.events.map(\.id) == ["000005", "000006", "000007", "000008"])
        #expect(second == ["000000", "000002", "000004"])
        #expect(held.dropped == 5)
        let dropped = held.clear()
        #expect(dropped == 5)
        #expect(held.isEmpty && held.dropped == 0)
    }
}

/// A run of failed writes is told once when it starts and once when it ends.
@Suite struct FailureEpisodeTests {
    @Test func theFirstFailureAndTheRecoveryAreTold() {
        var episode = FailureEpisode()
        let t0 = Timestamp.seconds(1_000)
        let before = episode.succeeded(at: t0)
        #expect(before == nil, "nothing had failed")
        let told = [0, 5, 10].map { episode.failed(at: t0 + .seconds($0)) }
        #expect(told == [true, false, false])
        #expect(episode.failures == 3)
        let lasted = episode.succeeded(at: t0 + .seconds(12))
        #expect(lasted == .seconds(12))
        #expect(episode.since == nil && episode.failures == 0)
        let again = episode.failed(at: t0 + .seconds(20))
        #expect(again, "a new run is told again")
    }
}
