import Foundation
import TestSupport
import Testing

/// The floor view (`GET /`, issue 30) in real headless browsers, Chromium and Firefox, over the
/// read-only listener: opened with `?token=` as a person would, it goes live with no console
/// error, shows one marker per asset of the simulated site, moves them as the tags walk, and
/// marks a zone occupied when its `zone.enter` arrives; lists the tags worst first, draws a
/// tag switched off greyed at its last place once it is missing, and finds an asset by its name
/// (issue 40). The screenshots are kept in .build/test-artifacts.
///
/// Not serialized: each browser has its own daemon and port, and most of each test is the
/// minute a tag takes to go missing.
@Suite struct FloorViewTests {
    /// Four tags on a 12 x 8 m floor split into two zones, so that zone changes come soon;
    /// tag-3's battery is low from the start, tag-4 is switched off after 5 s.
    static let site = """
        receivers:
          - {id: r1, position: {x: 0, y: 0}, rssi_at_1m: -59}
          - {id: r2, position: {x: 12, y: 0}, rssi_at_1m: -59}
          - {id: r3, position: {x: 12, y: 8}, rssi_at_1m: -59}
          - {id: r4, position: {x: 0, y: 8}, rssi_at_1m: -59}
        assets:
          - {id: tag-1, beacon: {address: "D0:5E:00:00:00:01"}}
          - {id: tag-2, name: "Cart Two", beacon: {address: "D0:5E:00:00:00:02"}}
          - {id: tag-3, beacon: {address: "D0:5E:00:00:00:03"}}
          - {id: tag-4, beacon: {address: "D0:5E:00:00:00:04"}, missing_after: 1m}
        zones:
          - {id: west, polygon: [[0, 0], [6, 0], [6, 8], [0, 8]]}
          - {id: east, polygon: [[6, 0], [12, 0], [12, 8], [6, 8]]}
        alarms:
          - {id: traffic, zones: [west, east], on: [enter, exit]}
        positioning: {floor: [[0, 0], [12, 0], [12, 8], [0, 8]], publish_interval: 1s}
        simulation:
          floor: {width: 12, depth: 8}
          walking_speed: [1.0, 1.4]
          tags:
            - {asset: tag-3, telemetry: tlm, battery: {millivolts: 2300}}
            - {asset: tag-4, off_after: 5s}

        """

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/chromedriver")))
    func inChromiumTheViewGoesLiveShowsEveryAssetMovesThemAndMarksZones() throws {
        try drive("chromium", screenshot: "floor-view.png")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/bin/firefox-esr")))
    func inFirefoxTheViewGoesLiveShowsEveryAssetMovesThemAndMarksZones() throws {
        try drive("firefox", screenshot: "floor-view-firefox.png")
    }

    func drive(_ browser: String, screenshot name: String) throws {
        let port = try freeLoopbackPort()
        let dir = try Executables.temporaryDirectory()
        let token = "floor-view-token-7"
        try (token + "\n").write(to: dir.appendingPathComponent("http.token"), atomically: true, encoding: .utf8)
        let d = try APIDaemon(
            extra: Self.site
                + "http: {listen: \"127.0.0.1:\(port)\", token_file: \(dir.appendingPathComponent("http.token").path)}\n",
            dir: dir)
        try d.start(arguments: ["--simulate", "--no-print-events"])
        let artifacts = Executables.packageRoot.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let screenshot = artifacts.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: screenshot)
        let run = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [
                Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/floor_view.py").path,
                "--browser", browser, "http://127.0.0.1:\(port)/?token=\(token)", screenshot.path, "4",
            ], environment: ["PATH": "/usr/bin:/bin", "HOME": dir.path])
        let seen = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        #expect(run.status == 0 && seen["failed"] == nil, "\(run.stdout)\(run.stderr)")
        #expect(seen["browser"] as? String == browser)
        #expect(seen["address"] as? String == "http://127.0.0.1:\(port)/", "the token left the address bar")
        // Live on the cookie the daemon set, which no script on the page can read (HttpOnly).
        #expect(seen["cookie_visible_to_script"] as? Bool == false)
        #expect(seen["markers"] as? Int == 4)
        #expect((seen["moved"] as? Int ?? 0) >= 1)
        let enter = seen["enter"] as? [String: Any]
        #expect(["west", "east"].contains(enter?["zone"] as? String) && enter?["occupied"] as? Bool == true, "\(seen)")
        // The tags: tag-3's low battery listed before the healthy ones; tag-4, once missing,
        // first, greyed at its last place with when it was last heard.
        #expect(seen["low_before_healthy"] as? Bool == true, "\(seen)")
        let missing = seen["missing"] as? [String: Any]
        #expect(missing?["first"] as? String == "tag-4" && missing?["marker_missing"] as? Bool == true, "\(seen)")
        #expect((missing?["marker_text"] as? String ?? "").contains("last seen"), "\(seen)")
        // Found by its name: the map centred on it and marked.
        let found = seen["found"] as? [String: Any]
        #expect(found?["asset"] as? String == "tag-2" && found?["centred"] as? Bool == true, "\(seen)")
        // The analytics (issue 41): heat drawn, and an occupancy chart of the last 24 hours (by
        // hour) for a zone the tags walked through.
        let heat = seen["heat"] as? [String: Any]
        #expect((heat?["cells"] as? Int ?? 0) > 0 && (heat?["red_pixels"] as? Int ?? 0) > 0, "\(seen)")
        let charts = seen["occupancy"] as? [[Any]] ?? []
        #expect(
            charts.contains { ["west", "east"].contains($0[0] as? String) && ($0[1] as? Int ?? 0) >= 24 }, "\(seen)")
        #expect((seen["console_errors"] as? [String])?.isEmpty == true, "\(seen)")
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        #expect(d.stop() == 0)
    }
}
