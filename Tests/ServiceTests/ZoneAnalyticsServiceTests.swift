import BeaconConfig
import BeaconCore
import BeaconRuntime
import Foundation
import Logs
import Publishing
import Storage
import Synchronization
import TestSupport
import Testing

@testable import beacond

/// The analytics service in process (issue 54, item 5): its tick driven with the times a test
/// gives, over a real state store and a running engine, in milliseconds; what the daemon
/// process tests (`ZoneAnalyticsTests`) check end to end, each rule here on its own.
@Suite struct ZoneAnalyticsServiceTests {
    static let start = Timestamp.seconds(1_763_805_600)  // 10:00 UTC

    /// A store, a running engine, a publisher over the store, and the service.
    final class Fixture: Sendable {
        let store: StateStore
        let engine: LiveEngine
        let publisher: EventPublisher
        let service: ZoneAnalytics
        private let thread = ServiceThreads()

        init() throws {
            store = try StateStore(directory: try Executables.temporaryDirectory().path)
            engine = LiveEngine(
                engine: BeaconEngine(configuration: EngineConfiguration(), start: start), clock: { start },
                publish: { _ in })
            publisher = EventPublisher(
                gateway: "gw", store: store, workers: [], echo: false, clock: { start }, logger: .silent)
            service = ZoneAnalytics(
                store: store, engine: engine, publisher: publisher, analytics: AnalyticsSettings(),
                clock: { start }, logger: .silent)
            thread.spawn(named: "engine") { [engine] in engine.run() }
        }

        deinit {
            engine.stop()
            thread.join()
        }

        /// The first hour not yet rolled.
        var nextHour: Timestamp? { (try? store.zoneRollupMark())?.map(\.nextHour) ?? nil }
    }

    @Test func aTickWithNoMarkStartsTheCounting() throws {
        let f = try Fixture()
        #expect(f.nextHour == nil)
        f.service.tick(now: Self.start, elapsed: .seconds(10))
        #expect(f.nextHour == Self.start)
    }

    @Test func theHoursRollOnlyOnceTheirVisitsHaveSettled() throws {
        let f = try Fixture()
        f.service.tick(now: Self.start, elapsed: .seconds(10))
        // 11:00:30 is past the hour, but not past its settling (`VisitRules.settleTime`, 45 s).
        f.service.tick(now: Self.start + .seconds(3_630), elapsed: .seconds(3_640))
        #expect(f.nextHour == Self.start)
        f.service.tick(now: Self.start + .seconds(3_660), elapsed: .seconds(3_670))
        #expect(f.nextHour == Self.start + .hours(1))
    }

    @Test func aTickWhoseClockSteppedRollsNothingAndTheNextFollowsTheClock() throws {
        let f = try Fixture()
        f.service.tick(now: Self.start, elapsed: .seconds(10))
        // Three hours on the wall clock in 30 s since boot: a step, not believed at this tick.
        f.service.tick(now: Self.start + .hours(3), elapsed: .seconds(40))
        #expect(f.nextHour == Self.start)
        // The clock stays where it went: from the next tick on, hours roll by it.
        f.service.tick(now: Self.start + .hours(3) + .seconds(30), elapsed: .seconds(70))
        #expect(f.nextHour == Self.start + .hours(2))
    }

    @Test func nothingRollsWhileEventsAreHeldForTheStore() throws {
        let f = try Fixture()
        f.service.tick(now: Self.start, elapsed: .seconds(10))
        let held = StateStore.StoredEvent(
            id: "01HELD", type: "beacond.zone.enter", time: Self.start + .minutes(5), body: #"{"id":"01HELD"}"#)
        f.publisher.adoptHeld([held])
        f.service.tick(now: Self.start + .seconds(7_200), elapsed: .seconds(7_210))
        #expect(f.nextHour == Self.start, "their transitions may belong to the hours")
        f.publisher.retryHeld(now: true)
        #expect(f.publisher.held.events == 0)
        f.service.tick(now: Self.start + .seconds(7_230), elapsed: .seconds(7_240))
        #expect(f.nextHour == Self.start + .hours(1))
    }
}

/// Which adapters hear, as the scanner reports them: the gateway goes blind when the last
/// one stops, and hears again with the first.
@Suite struct AdapterStatesTests {
    static func state(_ adapter: String, hearing: Bool) -> AdapterState {
        AdapterState(adapter: adapter, present: true, powered: hearing, discovering: hearing)
    }

    @Test func blindWhenTheLastAdapterStopsAndHearingWithTheFirstAgain() {
        let adapters = AdapterStates()
        #expect(adapters.update(Self.state("hci0", hearing: false)) == nil, "never heard: not blind")
        #expect(adapters.update(Self.state("hci0", hearing: true)) == nil)
        #expect(adapters.update(Self.state("hci1", hearing: true)) == nil)
        #expect(adapters.update(Self.state("hci0", hearing: false)) == nil, "hci1 still hears")
        #expect(adapters.update(Self.state("hci1", hearing: false)) == true)
        #expect(adapters.update(Self.state("hci1", hearing: false)) == nil, "told once")
        #expect(adapters.update(Self.state("hci0", hearing: true)) == false)
        #expect(adapters.all.map(\.adapter) == ["hci0", "hci1"])
    }
}
