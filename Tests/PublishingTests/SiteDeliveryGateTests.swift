import BeaconCore
import Publishing
import Testing

/// Which gateway of a site delivers, and how far (SPEC §6.3), without a broker: the gate is
/// told what was published and answered, and answers each worker's role.
@Suite struct SiteDeliveryGateTests {
    static let t0 = Timestamp(nanoseconds: 1_800_000_000_000_000_000)

    func through(_ role: DeliveryRole) -> Timestamp? {
        if case let .locator(through, _) = role { return through }
        return nil
    }

    @Test func aStandbyKeepsItsAlertsFromTheLocatorsMarkLessTheOverlap() {
        let gate = SiteDeliveryGate(gateway: "gw2", now: Self.t0)
        #expect(gate.role(webhook: "crm", at: Self.t0) == .standby(keepFrom: nil, marks: [:]))
        let mark = Self.t0 + .seconds(10)
        #expect(gate.deliveredElsewhere(from: "gw1", webhook: "crm", through: mark, at: Self.t0))
        #expect(
            gate.role(webhook: "crm", at: Self.t0)
                == .standby(keepFrom: mark - SiteDeliveryGate.overlap, marks: ["gw1": mark]))
        // Its own marks are not the others'
        gate.deliveredHere(webhook: "crm", through: mark + .seconds(5))
        #expect(
            gate.role(webhook: "crm", at: Self.t0)
                == .standby(keepFrom: mark - SiteDeliveryGate.overlap, marks: ["gw1": mark]))
        #expect(gate.takeToPublish() == ["crm": mark + .seconds(5)])
        #expect(gate.takeToPublish().isEmpty, "each mark is published once")
    }

    /// The locator tells every alert before delivering it on any webhook: a standby's own alert
    /// it had not told by its furthest delivery, on whichever webhook, is not the site's on
    /// any. (Judged per webhook, a receiver that was down kept an exit the broker's outbox had
    /// dropped, and the next locator told the webhook what the broker never had.)
    @Test func aStandbyJudgesItsUndecidedAlertsByTheLocatorsFurthestMarkOnAnyWebhook() {
        let gate = SiteDeliveryGate(gateway: "gw2", now: Self.t0)
        #expect(gate.undecidedBefore == nil)
        let stuck = Self.t0 + .seconds(2), furthest = Self.t0 + .seconds(20)
        #expect(gate.deliveredElsewhere(from: "gw1", webhook: "crm", through: stuck, at: Self.t0))
        #expect(gate.deliveredElsewhere(from: "gw1", webhook: "mqtt:events", through: furthest, at: Self.t0))
        gate.deliveredHere(webhook: "wms", through: furthest + .seconds(9))
        let cutoff = furthest - SiteDeliveryGate.overlap
        #expect(gate.undecidedBefore == cutoff, "its own deliveries are not the locator's")
        #expect(gate.role(webhook: "crm", at: Self.t0) == .standby(keepFrom: cutoff, marks: ["gw1": stuck]))
        #expect(gate.role(webhook: "wms", at: Self.t0) == .standby(keepFrom: cutoff, marks: [:]))
    }

    /// A new locator sends nothing until what it made as a standby has been told; then only
    /// what the broker has answered.
    @Test func aLocatorDeliversOnlyWhatTheSiteHasBeenTold() throws {
        let gate = SiteDeliveryGate(gateway: "gw1", now: Self.t0)
        let became = Self.t0 + .seconds(1)
        gate.setLocator(true, at: became)
        #expect(gate.isLocator)
        let before = try #require(through(gate.role(webhook: "crm", at: became)))
        #expect(before < Self.t0, "nothing of its own goes before its backlog is told")
        gate.backlogTold(waiting: [7], at: became)
        #expect(through(gate.role(webhook: "crm", at: became)) == before)
        gate.answered(7)
        #expect(through(gate.role(webhook: "crm", at: became)) == Self.t0)

        let batch = Self.t0 + .seconds(2)
        gate.told(through: batch, waiting: [8, 9], at: batch)
        gate.answered(8)
        #expect(through(gate.role(webhook: "crm", at: batch)) == Self.t0, "one of two still unanswered")
        gate.answered(9)
        #expect(through(gate.role(webhook: "crm", at: batch)) == batch)
        // Nothing to tell: through at once
        gate.told(through: batch + .seconds(1), waiting: [], at: batch)
        #expect(through(gate.role(webhook: "crm", at: batch)) == batch + .seconds(1))
    }

    @Test func anUnansweredDecisionIsGivenUpWaitingForAfterTheTimeout() {
        let gate = SiteDeliveryGate(gateway: "gw1", now: Self.t0)
        gate.setLocator(true, at: Self.t0)
        gate.backlogTold(waiting: [], at: Self.t0)
        let batch = Self.t0 + .seconds(1)
        gate.told(through: batch, waiting: [11], at: batch)
        #expect(through(gate.role(webhook: "crm", at: batch + .seconds(4))) == Self.t0)
        #expect(
            through(gate.role(webhook: "crm", at: batch + SiteDeliveryGate.tellTimeout + .milliseconds(1))) == batch)
    }

    @Test func aMarkFromTheFutureOrPastTheBoundsIsRefused() {
        let gate = SiteDeliveryGate(gateway: "gw2", now: Self.t0)
        #expect(!gate.deliveredElsewhere(from: "gw1", webhook: "crm", through: Self.t0 + .seconds(31), at: Self.t0))
        #expect(gate.deliveredElsewhere(from: "gw1", webhook: "crm", through: Self.t0 + .seconds(29), at: Self.t0))
        // A mark never goes back
        #expect(gate.deliveredElsewhere(from: "gw1", webhook: "crm", through: Self.t0, at: Self.t0))
        #expect(
            gate.role(webhook: "crm", at: Self.t0)
                == .standby(
                    keepFrom: Self.t0 + .seconds(29) - SiteDeliveryGate.overlap, marks: ["gw1": Self.t0 + .seconds(29)])
        )
        for g in 0..<SiteDeliveryGate.maxGateways - 1 {
            #expect(gate.deliveredElsewhere(from: "g\(g)", webhook: "crm", through: Self.t0, at: Self.t0))
        }
        #expect(!gate.deliveredElsewhere(from: "one-too-many", webhook: "crm", through: Self.t0, at: Self.t0))
    }

    @Test func theMarksTextReadsBack() {
        let t = Timestamp(nanoseconds: 1_763_805_600_250_000_000)
        #expect(SiteDeliveryGate.text(t) == #"{"through":1763805600.25}"#)
        #expect(SiteDeliveryGate.through(SiteDeliveryGate.text(t)) == t)
        for bad in ["", "{}", #"{"through":"x"}"#, #"{"through":1e12}"#, "[1]"] {
            #expect(SiteDeliveryGate.through(bad) == nil, "\(bad)")
        }
    }
}
