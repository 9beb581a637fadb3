import BeaconCore
import Storage
import Testing

@testable import Publishing

/// Issue 53: what the outboxes, the memory hold and the broker do with each kind of event is
/// the event's class (`EventClass`), asked in one place. `beacon.proximity` was kept as a
/// superseded measurement by the history, the broker and the site, but synced and shed last
/// as an alert by the publisher: with a zone enter before it, a full hold dropped the enter.
@Suite struct EventClassUseTests {
    @Test func theBrokerAndTheHoldAskTheClassForEveryKind() {
        for kind in EventPayload.allKinds {
            let c = EventClass(type: kind)
            #expect(MQTTBatchTransport.lossy(kind) == c.isSuperseded, "\(kind)")
            // One over the bound: the superseded event goes, whatever its place.
            var held = HeldEvents()
            let dropped = held.hold(
                [HeldEventsTests.event(1, "zone.enter"), HeldEventsTests.event(2, kind)], limit: 1)
            #expect(dropped == [c.isSuperseded ? "000002" : "000001"], "\(kind)")
        }
    }
}
