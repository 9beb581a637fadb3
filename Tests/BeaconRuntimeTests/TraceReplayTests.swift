import BeaconConfig
import BeaconCore
import Testing

@testable import BeaconRuntime

/// SPEC §5 replay: the trace's clock, timers in order with sightings, bad lines skipped.
@Suite struct TraceReplayTests {
    static let config: Config = {
        let yaml = """
            gateway: {id: test-gw}
            clients:
              - id: app
                regions:
                  - {id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}

            """
        return try! ConfigLoader.load(yaml: yaml, file: "test.yaml")
    }()

    static func record(_ t: Double, rssi: Int = -60) -> String {
        #"{"t":\#(1_763_805_600 + t),"receiver":"hci0","address":"C3:11:22:33:44:55","rssi":\#(rssi),"manufacturer_data":{"76":"0215e2c56db5dffb48d2b060d0f5a71096e0002a0007c5"}}"#
    }

    struct Run {
        var events: [JSONValue] = []
        var reports: [String] = []
        var summary = ReplaySummary()
    }

    static func replay(_ lines: [String]) -> Run {
        var replay = TraceReplay(config: config, idNonce: 1)
        var run = Run()
        for (i, line) in lines.enumerated() {
            replay.feed(
                line: line, number: i + 1, emit: { run.events.append(try! JSONParser.parse($0)) },
                report: { run.reports.append($0) })
        }
        replay.finish(emit: { run.events.append(try! JSONParser.parse($0)) }, report: { run.reports.append($0) })
        run.summary = replay.summary
        return run
    }

    static func kinds(_ run: Run) -> [String] {
        run.events.map { "\($0["type"]!.stringValue!) \($0["time"]!.stringValue!)" }
    }

    @Test func timersFireAtTheirOwnTimeBetweenSightings() {
        // Enter determination at 1 s, beacon gone after 2 s, next record at 100 s.
        let run = Self.replay([Self.record(0), Self.record(1), Self.record(2), Self.record(100, rssi: -99)])
        #expect(
            Self.kinds(run) == [
                "beacond.region.state 2025-11-22T10:00:01.000Z", "beacond.region.exit 2025-11-22T10:00:32.000Z",
            ])
    }

    @Test func timersDueAfterTheLastRecordDoNotFire() {
        let run = Self.replay([Self.record(0), Self.record(1), Self.record(2)])
        #expect(Self.kinds(run) == ["beacond.region.state 2025-11-22T10:00:01.000Z"])
    }

    @Test func malformedLinesAreReportedWithTheirNumberAndSkipped() {
        let run = Self.replay([
            Self.record(0), "{not json", "", #"{"t":1}"#, Self.record(0.5), Self.record(1),
        ])
        #expect(
            run.reports == [
                "line 2: invalid JSON at byte 2: expected a string key; skipped",
                #"line 4: missing or non-string "receiver"; skipped"#,
            ])
        #expect(run.summary == ReplaySummary(lines: 5, sightings: 3, requests: 0, skipped: 2, events: 1))
        #expect(Self.kinds(run) == ["beacond.region.state 2025-11-22T10:00:00.500Z"])
    }

    @Test func aRecordWhoseTimeGoesBackwardsIsSkipped() {
        let run = Self.replay([Self.record(10), Self.record(5), Self.record(11)])
        #expect(
            run.reports == [
                "line 2: \"t\" goes backwards (2025-11-22T10:00:05.000Z after 2025-11-22T10:00:10.000Z); skipped"
            ])
        #expect(run.summary.sightings == 2)
    }

    /// One corrupt `t` decades ahead (a relay's clock, a bit flip) used to make every later
    /// line "go backwards": the rest of the trace was lost. Now only the corrupt line is.
    @Test func aTimeFarAheadThatTheNextRecordContradictsIsTheOneSkipped() {
        let run = Self.replay(
            [Self.record(0), Self.record(1), Self.record(1e9), Self.record(2)]
                + (3..<40).map { Self.record(Double($0)) })
        #expect(
            run.reports == [
                #"line 3: "t" is 2057-07-31T11:46:40.000Z but line 4 returns to 2025-11-22T10:00:02.000Z, more than 10m earlier; skipped"#
            ])
        #expect(run.summary.sightings == 40 && run.summary.skipped == 1)
        #expect(Self.kinds(run) == ["beacond.region.state 2025-11-22T10:00:01.000Z"])
    }

    @Test func aFirstRecordFarAheadIsSkippedToo() {
        let run = Self.replay([Self.record(1e9), Self.record(0), Self.record(1), Self.record(2)])
        #expect(run.reports.count == 1 && run.reports[0].hasPrefix(#"line 1: "t" is 2057"#))
        #expect(Self.kinds(run) == ["beacond.region.state 2025-11-22T10:00:01.000Z"])
    }

    /// Traces of several days joined: a real gap is confirmed by the records after it, and its
    /// timers fire in it as before.
    @Test func aGapThatTheNextRecordConfirmsIsReplayed() {
        let day = 86_400.0
        let run = Self.replay([
            Self.record(0), Self.record(1), Self.record(day), Self.record(day + 1), Self.record(day + 2),
        ])
        #expect(run.reports.isEmpty)
        #expect(run.summary.sightings == 5)
        #expect(
            Self.kinds(run) == [
                "beacond.region.state 2025-11-22T10:00:01.000Z", "beacond.region.exit 2025-11-22T10:00:31.000Z",
                "beacond.region.enter 2025-11-23T10:00:01.000Z",
            ])
    }

    /// A jump on the last line has nothing after it to contradict it: it is replayed, and a
    /// line just before it that goes backwards is skipped as before.
    @Test func aJumpOnTheLastLineIsReplayedAtTheEnd() {
        let run = Self.replay([Self.record(0), Self.record(1), Self.record(3600)])
        #expect(run.reports.isEmpty && run.summary.sightings == 3)
        #expect(
            Self.kinds(run) == [
                "beacond.region.state 2025-11-22T10:00:01.000Z", "beacond.region.exit 2025-11-22T10:00:31.000Z",
            ])
        let late = Self.replay([Self.record(0), Self.record(3600), Self.record(3599), Self.record(3601)])
        #expect(late.reports.count == 1 && late.reports[0].hasPrefix(#"line 3: "t" goes backwards"#))
    }

    @Test func requestsInATraceMonitorAndRefuse() {
        let monitor =
            #"{"t":1763805601,"request":"monitor","client":"app","region":{"id":"till","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":42}}"#
        let state = #"{"t":1763805602,"request":"request_state","client":"app","region":"till"}"#
        let bad = #"{"t":1763805603,"request":"monitor","client":"app","region":{"id":"x","uuid":"nope"}}"#
        let run = Self.replay([Self.record(0), monitor, state, bad])
        #expect(Self.kinds(run) == ["beacond.region.state 2025-11-22T10:00:02.000Z"])
        #expect(run.events.first?["data"]?["state"] == "unknown")
        #expect(
            run.reports == [
                #"line 4: region.uuid: expected a UUID like "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", got "nope"; skipped"#
            ])
    }

    @Test func eventsCarryTheGatewayAsSourceAndSortableIds() {
        let run = Self.replay((0..<40).map { Self.record(Double($0)) } + [Self.record(200)])
        #expect(run.events.allSatisfy { $0["source"] == "beacond://test-gw" && $0["specversion"] == "1.0" })
        let ids = run.events.map { $0["id"]!.stringValue! }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
    }
}
