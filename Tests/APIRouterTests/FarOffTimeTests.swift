import API
import BeaconCore
import HTTPServer
import Testing

/// Issue 51, item 1: a time far off (year 9999, year 1000, 2300) in a query ended the daemon
/// with SIGILL, its nanoseconds overflowing 64 bits. Every such time is now refused with a
/// 400 that names the years taken, and the router answers on.
@Suite struct FarOffTimeTests {
    @Test func farOffTimesAreRefusedAndTheRouterAnswersOn() throws {
        let f = try APIAnswerTests.Fixture()
        let refused: [(String, String)] = [
            ("/v1/analytics/heatmap?from=9999-12-31T00:00:00Z", "bad_from"),
            ("/v1/zones/dock/stats?to=1000-01-01T00:00:00Z", "bad_to"),
            ("/v1/events?since=9999-01-01T00:00:00Z", "bad_since"),
            ("/v1/zones/dock/stats?from=2300-01-01T00:00:00%2B00:00", "bad_from"),
            ("/v1/events?since=1969-12-31T23:59:59Z", "bad_since"),
            ("/v1/events?since=2026-01-01T00:00:00%2B24:00", "bad_since"),
            ("/v1/analytics/heatmap?from=100000d", "bad_from"),
        ]
        for (path, code) in refused {
            let response = try f.answer(path)
            let body = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == 400, "\(path): \(body)")
            #expect(body.contains("\"\(code)\"") && body.contains("2200-01-01"), "\(path): \(body)")
        }
        // Within the years taken, the same queries answer.
        #expect(try f.answer("/v1/analytics/heatmap?from=2025-11-22T00:00:00Z").status == 200)
        #expect(try f.answer("/v1/zones/dock/stats?from=2025-11-21T12:00:00%2B00:00").status == 200)
        #expect(try f.answer("/v1/events?since=1970-01-01T00:00:00Z").status == 200)
    }

    @Test func theTimeParserRefusesWhatA64BitClockCannotHold() {
        #expect(RFC3339.parse("2199-12-31T23:59:59.999Z") != nil)
        #expect(RFC3339.parse("2200-01-01T00:00:00Z") == nil)
        #expect(RFC3339.parse("2200-01-01T00:59:59+01:00") != nil)
        #expect(RFC3339.parse("9999-12-31T23:59:59Z") == nil)
        #expect(RFC3339.parse("0000-01-01T00:00:00Z") == nil)
        #expect(RFC3339.parse("1970-01-01T00:00:00Z") == Timestamp(nanoseconds: 0))
        #expect(RFC3339.parse("1970-01-01T00:00:00+00:01") == nil)
        #expect(RFC3339.parse("2026-11-26T08:00:00+99:99") == nil)
        #expect(APIRouter.since("100000d", now: .seconds(1_763_805_600)) == nil)
        #expect(APIRouter.since("7d", now: .seconds(1_763_805_600)) == .seconds(1_763_805_600 - 7 * 86_400))
    }
}
