import Testing

@testable import BeaconCore

/// Webhook batching, backoff and expiry on an explicit clock (SPEC §4.2).
@Suite struct DeliveryScheduleTests {
    let t0 = Timestamp.seconds(1_000)
    var schedule = DeliverySchedule(maxEvents: 50, maxDelay: .seconds(1), maxAge: .hours(24))

    @Test func aBatchLeavesWhenFullOrWhenItsOldestEventHasWaitedMaxDelay() {
        #expect(schedule.decide(pending: 0, oldest: nil, now: t0) == .idle)
        #expect(schedule.decide(pending: 3, oldest: t0, now: t0 + .milliseconds(200)) == .wait(until: t0 + .seconds(1)))
        #expect(schedule.decide(pending: 3, oldest: t0, now: t0 + .seconds(1)) == .send(count: 3))
        #expect(schedule.decide(pending: 50, oldest: t0, now: t0) == .send(count: 50))
        #expect(schedule.decide(pending: 80, oldest: t0, now: t0) == .send(count: 50))
    }

    @Test func failuresBackOffExponentiallyFromOneSecondToFiveMinutesWithJitter() {
        var s = schedule
        // jitter 1.0 gives the full step, 0.0 half of it
        var steps: [TimeSpan] = []
        var now = t0
        for _ in 0..<12 {
            let next = s.failed(at: now, jitter: 0.9999999)
            steps.append(next - now)
            now = next
        }
        let seconds = steps.map { Int(($0.seconds).rounded()) }
        #expect(seconds == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        var low = schedule
        #expect(low.failed(at: t0, jitter: 0) - t0 == .milliseconds(500))
        #expect(low.failed(at: t0, jitter: 0) - t0 == .seconds(1))
        // While a retry is pending nothing is sent; when it is due, the batch goes at once
        #expect(low.decide(pending: 1, oldest: t0, now: t0 + .milliseconds(500)) == .wait(until: t0 + .seconds(1)))
        #expect(low.decide(pending: 1, oldest: t0, now: t0 + .seconds(1)) == .send(count: 1))
        low.succeeded()
        #expect(low.failures == 0 && low.retryAt == nil)
        #expect(low.failed(at: t0, jitter: 0) - t0 == .milliseconds(500), "success resets the backoff")
    }

    @Test func aRetryMovesWithAStepOfTheClock() {
        var s = DeliverySchedule(maxEvents: 50, maxDelay: .seconds(1), maxAge: .hours(24))
        let t = Timestamp.seconds(1_000_000)
        s.failed(at: t, jitter: 0)
        // The wall clock is set an hour back: the retry is half a second away, not an hour
        let back = t - .hours(1)
        s.shift(by: TimeSpan(nanoseconds: -TimeSpan.hours(1).nanoseconds))
        #expect(s.decide(pending: 3, oldest: back, now: back) == .wait(until: back + .milliseconds(500)))
        #expect(s.decide(pending: 3, oldest: back, now: back + .milliseconds(500)) == .send(count: 3))
    }

    @Test func eventsOlderThanMaxAgeExpire() {
        #expect(schedule.expiryCutoff(now: t0 + .hours(25)) == t0 + .hours(1))
    }

    @Test func typeGlobsMatchKindsAndFullTypes() {
        let g = EventTypeGlob(["region.*", "zone.enter"])
        #expect(g.matches(type: "beacond.region.enter") && g.matches(type: "beacond.region.state"))
        #expect(g.matches(type: "beacond.zone.enter") && !g.matches(type: "beacond.zone.exit"))
        #expect(!g.matches(type: "beacond.ranging") && !g.matches(type: "beacond.beacon.proximity"))
        #expect(EventTypeGlob(["*"]).matches(type: "beacond.ranging"))
        #expect(EventTypeGlob(["beacond.*.exit"]).matches(type: "beacond.region.exit"))
        #expect(EventTypeGlob(list: " region.exit , ranging ").patterns == ["region.exit", "ranging"])
        #expect(!EventTypeGlob([]).matches(type: "beacond.region.enter"))
    }
}

/// The one backoff rule, as broker reconnects and webhook retries use it.
@Suite struct BackoffTests {
    @Test func doublesFromTheFirstToTheLongestWithHalfToFullJitter() {
        let first = TimeSpan.seconds(1), longest = TimeSpan.seconds(60)
        #expect(Backoff.delay(failures: 1, first: first, longest: longest, jitter: 0.999) <= .seconds(1))
        #expect(Backoff.delay(failures: 1, first: first, longest: longest, jitter: 0) == .milliseconds(500))
        #expect(Backoff.delay(failures: 3, first: first, longest: longest, jitter: 0) == .seconds(2))
        #expect(Backoff.delay(failures: 40, first: first, longest: longest, jitter: 0) == .seconds(30))
        #expect(Backoff.delay(failures: 40, first: first, longest: longest, jitter: 1) == .seconds(60))
    }
}
