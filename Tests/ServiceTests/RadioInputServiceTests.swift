import BeaconRuntime
import BlueZ
import Logs
import Synchronization
import TestSupport
import Testing

@testable import BeaconCore
@testable import beacond

/// What the scanner reports, in process: sightings go on as they came (already under their
/// receivers' names), an adapter's change goes to the events, and the last adapter stopping
/// makes the engine blind (no exits) until one hears again.
@Suite struct RadioInputServiceTests {
    static let start = Timestamp.seconds(1_763_805_600)

    static func state(_ adapter: String, hearing: Bool) -> AdapterState {
        AdapterState(adapter: adapter, present: true, powered: hearing, discovering: hearing)
    }

    final class Published: Sendable {
        let kinds = Mutex<[String]>([])
        let batches = Mutex<[[Sighting]]>([])
    }

    @Test func anAdapterStoppingTellsTheStreamAndBlindsTheEngine() throws {
        let published = Published()
        let engine = LiveEngine(
            engine: BeaconEngine(configuration: EngineConfiguration(), start: Self.start), clock: { Self.start },
            publish: { events in published.kinds.withLock { $0 += events.map(\.payload.kind) } })
        let output = RadioInput.output(
            engine: engine, sightings: { batch in published.batches.withLock { $0.append(batch) } },
            adapters: AdapterStates(), logger: .silent)
        let thread = ServiceThreads()
        thread.spawn(named: "engine") { engine.run() }
        defer {
            engine.stop()
            thread.join()
        }
        // Asked on the engine's thread, after what the output queued before it.
        let blind = { engine.perform { e, _ in (e.isBlind, []) } }

        output(.adapter(Self.state("hci0", hearing: true), at: Self.start))
        #expect(blind() == false)
        output(.adapter(Self.state("hci0", hearing: false), at: Self.start + .seconds(1)))
        #expect(blind() == true)
        // Published at the end of the turn that answered `blind()`.
        try eventually("both states published") { published.kinds.withLock { $0 }.count >= 2 }
        #expect(published.kinds.withLock { $0 } == ["adapter.state", "adapter.state"])
        output(.adapter(Self.state("hci0", hearing: true), at: Self.start + .seconds(2)))
        #expect(blind() == false)

        let heard = Sighting(time: Self.start, receiver: "rx-front", address: "AA:BB:CC:DD:EE:FF", rssi: -60)
        output(.sightings([heard]))
        #expect(published.batches.withLock { $0 } == [[heard]], "as the scanner made them")
    }
}
