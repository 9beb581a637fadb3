import Foundation
import TestSupport
import Testing

/// Issue 63 through the daemon: on a `motion: parked` site a pallet heard from one place says
/// it stands once its readings have fitted its anchor for 15 s (`moving: false` in
/// `asset.position` and `GET /v1/assets`, with since when), and says it moves once they leave.
@Suite struct StillTagOutputTests {
    /// AssetAPITests' pallet, dock and receivers on a 10 × 10 m floor that parks.
    static let site = AssetAPITests.site.replacingOccurrences(
        of: "positioning: {publish_interval: 1s, min_move: 0}",
        with:
            "positioning: {publish_interval: 1s, min_move: 0, floor: [[0, 0], [10, 0], [10, 10], [0, 10]], motion: parked}"
    )

    @Test func aParkedPalletSaysItStandsAndThatItMoved() throws {
        let d = try APIDaemon(extra: Self.site)
        try d.start()
        let positions = { (events: [[String: Any]]) in
            events.filter { $0["type"] as? String == "beacond.asset.position" }.compactMap {
                $0["data"] as? [String: Any]
            }
        }
        // Heard from (2, 5) every 200 ms: placed at once (moving), standing 15 s later.
        var events = try AssetAPITests.hear(d, at: (2, 5), until: "the pallet placed") { !positions($0).isEmpty }
        #expect(positions(events).first?["moving"] as? Bool == true, "\(positions(events).first ?? [:])")
        try eventually("standing", timeout: 40, every: 0.2) {
            try d.post(AssetAPITests.sightings(at: (2, 5)))
            events = try d.history()
            return positions(events).last?["moving"] as? Bool == false
        }
        let still = try #require(positions(events).last)
        #expect(abs((still["x"] as? Double ?? 99) - 2) < 1 && abs((still["y"] as? Double ?? 99) - 5) < 1, "\(still)")
        let asset = try d.client.request("GET", "/v1/assets/pallet-9").object
        #expect(asset["moving"] as? Bool == false, "\(asset)")
        #expect(asset["motion_since"] is String, "\(asset)")
        // Carried off to (8, 5): its readings leave the anchor, and it is followed out of the
        // dock. (Before the anchor kept out the readings that raised the evidence, their mean
        // crept after the pallet and it was never found to move: 5.9 to 6.0 m in 40 s, still.)
        try eventually(
            "moving again", timeout: 40, every: 0.2,
            detail: { "\(positions(events).suffix(5))" }
        ) {
            try d.post(AssetAPITests.sightings(at: (8, 5)))
            events = try d.history()
            guard let last = positions(events).last else { return false }
            return last["moving"] as? Bool == true && (last["x"] as? Double ?? 0) > 6
                && (last["zones"] as? [String])?.isEmpty == true
        }
        let moved = try d.client.request("GET", "/v1/assets/pallet-9").object
        #expect(moved["moving"] as? Bool == true, "\(moved)")
        #expect(moved["zones"] as? [String] == [], "\(moved)")
        #expect(d.stop() == 0)
    }

    /// The floor view, open in Chromium while the pallet stands: its line of the list says
    /// "still" once an `asset.position` with `moving: false` arrives on the stream.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/chromedriver")))
    func theFloorViewShowsAStandingPalletAsStill() throws {
        let port = try freeLoopbackPort()
        let d = try APIDaemon(extra: Self.site + "http: {listen: \"127.0.0.1:\(port)\"}\n")
        try d.start()
        _ = try AssetAPITests.hear(d, at: (2, 5), until: "the pallet placed") {
            $0.contains { $0["type"] as? String == "beacond.asset.position" }
        }
        let watch = FloorViewWatch("floor_still.py", port: port, daemon: d, arguments: ["pallet-9"])
        // Heard from the same place until the page has seen it stand (the anchor settles 15 s on).
        var posted = 0
        while !watch.finished(within: 0.2), posted < 600 {
            try d.post(AssetAPITests.sightings(at: (2, 5)))
            posted += 1
        }
        let seen = watch.seen
        #expect(watch.succeeded, "\(watch.transcript)")
        #expect((seen["text"] as? String ?? "").contains("still"), "\(seen)")
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen)")
        #expect(d.stop() == 0)
    }
}
