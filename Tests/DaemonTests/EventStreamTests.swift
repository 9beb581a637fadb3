import Foundation
import TestSupport
import Testing

/// `GET /v1/events/stream`: live events as SSE, and resumption with `Last-Event-ID`.
@Suite(.serialized) struct EventStreamTests {
    static let site = "clients: [{id: app, regions: [{id: till, uuid: \(APIDaemon.uuid), major: 7}]}]\n"

    @Test func aResumedStreamGetsExactlyTheEventsItMissed() throws {
        let d = try APIDaemon(extra: Self.site)
        try d.start()
        let first = try d.client.stream()
        // outside (after exit_timeout), then an enter from a remote sighting
        let state = try first.next(1)[0]
        #expect(first.status == 200 && state.event == "beacond.region.state")
        try d.post([APIDaemon.sighting(major: 7)])
        let enter = try first.next(1)[0]
        #expect(enter.event == "beacond.region.enter" && enter.data.contains("\"id\":\"\(enter.id!)\""))
        first.close()

        // While disconnected: an exit, then another enter
        _ = try d.waitForHistory("the exit") { $0.contains { $0["type"] as? String == "beacond.region.exit" } }
        try d.post([APIDaemon.sighting(major: 7)])
        let missed = try d.waitForHistory("the second enter") { events in
            events.filter { $0["type"] as? String == "beacond.region.enter" }.count == 2
        }.compactMap { $0["id"] as? String }.drop { $0 != enter.id }.dropFirst()
        #expect(missed.count == 2)

        let resumed = try d.client.stream(lastEventID: enter.id)
        let replayed = try resumed.next(missed.count)
        #expect(replayed.map(\.id) == Array(missed))
        // Then live, with nothing repeated: the next exit follows directly
        let live = try resumed.next(1)[0]
        #expect(live.event == "beacond.region.exit" && !missed.contains(live.id!) && live.id! > missed.last!)
        #expect(try resumed.next(timeout: 0.3) == nil, "no duplicate or extra event")
        #expect(d.stop() == 0)
    }

    @Test func aTypeFilterSelectsEvents() throws {
        let d = try APIDaemon(extra: Self.site)
        try d.start()
        let exits = try d.client.stream(query: "?type=region.exit")
        try d.post([APIDaemon.sighting(major: 7)])
        let got = try exits.next(1)[0]
        #expect(got.event == "beacond.region.exit")
        #expect(d.stop() == 0)
    }
}
