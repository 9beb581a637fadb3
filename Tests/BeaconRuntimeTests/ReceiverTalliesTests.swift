import BeaconCore
import Testing

@testable import BeaconRuntime

/// `beacond_receiver_sightings_total` and `…_last_heard_age_seconds`: each receiver's
/// sightings counted by runs of the same receiver, its newest time kept.
struct ReceiverTalliesTests {
    @Test func runsOfOneReceiverAreCountedUnderItsName() {
        let t0 = Timestamp.seconds(1_000)
        func heard(_ receiver: String, _ s: Int64) -> Sighting {
            Sighting(time: t0 + .seconds(s), receiver: receiver, address: "AA:BB:CC:DD:EE:01", rssi: -60)
        }
        var tallies = ReceiverTallies()
        tallies.count([heard("hci0", 3), heard("hci0", 1), heard("dock-relay", 2), heard("hci0", 4)])
        tallies.count([heard("dock-relay", 9)])
        #expect(tallies.byReceiver["hci0"] == ReceiverTallies.Tally(sightings: 3, lastHeard: t0 + .seconds(4)))
        #expect(tallies.byReceiver["dock-relay"] == ReceiverTallies.Tally(sightings: 2, lastHeard: t0 + .seconds(9)))
        #expect(tallies.byReceiver.count == 2)
    }
}
