import Foundation
import Synchronization
import TestSupport
import Testing

/// The API against its contract (issue 29, item 3): every operation of docs/openapi.json is
/// called on the real daemon's socket, and openapi-spec-validator and jsonschema (PyPI) check
/// the document and every answer, every event's envelope and its `data` against the schema
/// its `dataschema` names. An answer that drifts from the document fails here.
@Suite(.serialized) struct OpenAPIContractTests {
    static let site = """
        clients:
          - id: app
            regions:
              - {id: till, uuid: \(APIDaemon.uuid), major: 7, ranging: true, dwell: [1s]}
        receivers:
          - {id: hci0, position: {x: 0, y: 0, level: 0}, rssi_at_1m: -59}
          - {id: rx-east, position: {x: 30, y: 0}}
        assets:
          - {id: cart-17, name: Cart 17, beacon: {uuid: \(APIDaemon.uuid), major: 9, minor: 17}}
        zones:
          - {id: checkout, level: 0, polygon: [[-3, -3], [6, -3], [6, 3], [-3, 3]]}
          - {id: near-door, receiver: hci0, within: 2}
        alarms:
          - {id: carts-out, zones: [checkout], on: [enter, exit], confirm: 0s}

        """

    /// A 1 x 1 PNG: a floor plan as small as one can be.
    static let onePixelPNG =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

    /// One request and its answer, as check_contract.py reads them.
    struct Exchange {
        var method: String
        var route: String
        var status: Int
        var contentType: String
        var body: String

        var line: String {
            let object: [String: Any] = [
                "method": method, "path": route, "status": status, "content_type": contentType, "body": body,
            ]
            return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
    }

    @Test func everyAnswerAndEveryEventMatchesTheDocument() throws {
        let receiver = try WebhookReceiver()
        let dir = try Executables.temporaryDirectory()
        let plan = dir.appendingPathComponent("plan.png")
        try Data(base64Encoded: Self.onePixelPNG)!.write(to: plan)
        let d = try APIDaemon(
            extra: Self.site.replacingOccurrences(
                of: "receivers:\n",
                with: "positioning: {floor_image: {file: \(plan.path), scale: 20, origin: [10, 190]}}\nreceivers:\n")
                + "webhooks:\n  - {id: crm, url: \"\(receiver.url)\"}\n",
            monitoring: "enter_sightings: 1, exit_timeout: 1s, region_limit: 2", dir: dir)
        try d.start()
        var exchanges: [Exchange] = []
        func call(_ method: String, _ path: String, _ route: String, body: String? = nil, expect status: Int) throws {
            let answer = try d.client.request(method, path, body: body)
            #expect(answer.status == status, "\(method) \(path): \(answer.status) \(answer.body)")
            exchanges.append(
                Exchange(
                    method: method, route: route, status: answer.status,
                    contentType: answer.headers["content-type"] ?? "", body: answer.body))
        }
        // Events of every kind this site makes: enter, state, ranging, proximity, positions,
        // zone alerts, then exits and the dwell after a second of silence.
        try d.post([APIDaemon.sighting(major: 7), APIDaemon.sighting(major: 9, minor: 17, rssi: -59)])
        _ = try d.waitForHistory("exits, positions and zone alerts") { events in
            let types = Set(events.compactMap { $0["type"] as? String })
            return ["region.exit", "asset.position", "zone.enter", "ranging", "region.dwell"].allSatisfy {
                types.contains("beacond." + $0)
            }
        }
        try call("GET", "/", "/", expect: 200)
        try call("GET", "/v1/floor", "/v1/floor", expect: 200)
        try call("GET", "/v1/floor/image", "/v1/floor/image", expect: 200)
        try call("GET", "/metrics", "/metrics", expect: 200)
        try call("GET", "/v1/openapi.json", "/v1/openapi.json", expect: 200)
        try call("GET", "/v1/schemas/region.enter", "/v1/schemas/{type}", expect: 200)
        try call("GET", "/v1/schemas/region.entered", "/v1/schemas/{type}", expect: 404)
        try call("GET", "/v1/status", "/v1/status", expect: 200)
        try call("GET", "/v1/clients", "/v1/clients", expect: 200)
        try call("GET", "/v1/clients/app/regions", "/v1/clients/{client}/regions", expect: 200)
        try call("GET", "/v1/clients/nobody/regions", "/v1/clients/{client}/regions", expect: 404)
        let region = "/v1/clients/{client}/regions/{region}"
        let door = "{\"uuid\": \"\(APIDaemon.uuid)\", \"major\": 3, \"dwell\": [\"2m\"]}"
        try call("PUT", "/v1/clients/app/regions/door", region, body: door, expect: 200)
        try call("PUT", "/v1/clients/app/regions/back", region, body: door, expect: 409)
        try call("PUT", "/v1/clients/app/regions/door", region, body: "{\"major\": 3}", expect: 422)
        try call("PUT", "/v1/clients/app/regions/door", region, body: "{not json", expect: 400)
        try call("POST", "/v1/clients/app/regions/door/request-state", region + "/request-state", expect: 202)
        try call("POST", "/v1/clients/app/regions/gone/request-state", region + "/request-state", expect: 404)
        try call("DELETE", "/v1/clients/app/regions/door", region, expect: 204)
        try call("DELETE", "/v1/clients/app/regions/door", region, expect: 404)
        try d.post([APIDaemon.sighting(major: 7)])
        try call("GET", "/v1/beacons", "/v1/beacons", expect: 200)
        try call("GET", "/v1/beacons?limit=0", "/v1/beacons", expect: 400)
        try call("GET", "/v1/assets", "/v1/assets", expect: 200)
        try call("GET", "/v1/assets/cart-17", "/v1/assets/{asset}", expect: 200)
        try call("GET", "/v1/assets/cart-99", "/v1/assets/{asset}", expect: 404)
        try call("GET", "/v1/assets/cart-17/readings", "/v1/assets/{asset}/readings", expect: 200)
        try call("GET", "/v1/assets/cart-99/readings", "/v1/assets/{asset}/readings", expect: 404)
        try call("GET", "/v1/tags", "/v1/tags", expect: 200)
        try call("GET", "/v1/tags?missing=true&battery_low=false", "/v1/tags", expect: 200)
        try call("GET", "/v1/tags?missing=maybe", "/v1/tags", expect: 400)
        try call("GET", "/v1/zones", "/v1/zones", expect: 200)
        try call("GET", "/v1/zones/checkout/stats", "/v1/zones/{zone}/stats", expect: 200)
        try call("GET", "/v1/zones/checkout/stats?from=7d", "/v1/zones/{zone}/stats", expect: 200)
        try call("GET", "/v1/zones/nowhere/stats", "/v1/zones/{zone}/stats", expect: 404)
        try call("GET", "/v1/zones/checkout/stats?bucket=week", "/v1/zones/{zone}/stats", expect: 400)
        try call("GET", "/v1/analytics/heatmap?from=2h&level=0", "/v1/analytics/heatmap", expect: 200)
        try call("GET", "/v1/analytics/heatmap?level=x", "/v1/analytics/heatmap", expect: 400)
        try d.post(
            Array(repeating: APIDaemon.calibrationSighting(advertiser: "rx-east", hearer: "hci0", rssi: -85), count: 5))
        try call("GET", "/v1/calibration", "/v1/calibration", expect: 200)
        try call("DELETE", "/v1/calibration", "/v1/calibration", expect: 200)
        try call("GET", "/v1/alarms", "/v1/alarms", expect: 200)
        try call("PATCH", "/v1/alarms/carts-out", "/v1/alarms/{alarm}", body: "{\"active\": false}", expect: 200)
        try call("PATCH", "/v1/alarms/carts-out", "/v1/alarms/{alarm}", body: "{\"zones\": []}", expect: 422)
        try call("PATCH", "/v1/alarms/nope", "/v1/alarms/{alarm}", body: "{\"active\": true}", expect: 404)
        try call("GET", "/v1/events?limit=1000", "/v1/events", expect: 200)
        try call("GET", "/v1/events?order=newest&limit=5&since=1h", "/v1/events", expect: 200)
        try call("GET", "/v1/events?limit=0", "/v1/events", expect: 400)
        let line = APIDaemon.sighting(major: 7)
        try call("POST", "/v1/sightings", "/v1/sightings", body: line + "\n{broken\n", expect: 202)
        try call("POST", "/v1/sightings", "/v1/sightings", body: "{broken\n", expect: 422)
        try call("GET", "/v1/outbox", "/v1/outbox", expect: 200)
        try call("POST", "/v1/webhooks/crm/test", "/v1/webhooks/{webhook}/test", expect: 200)
        try call("POST", "/v1/webhooks/erp/test", "/v1/webhooks/{webhook}/test", expect: 404)
        try call("GET", "/v1/reachability", "/v1/reachability", expect: 200)
        exchanges.append(try Self.streamHead(d))

        let file = d.dir.appendingPathComponent("exchanges.jsonl")
        try exchanges.map(\.line).joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let check = try runCommand(
            URL(fileURLWithPath: Executables.toolsPython),
            [
                Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/check_contract.py").path,
                Executables.packageRoot.appendingPathComponent("docs/openapi.json").path, file.path,
            ])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains(" 0 problems"), "\(check.stdout)")
        #expect(d.stop() == 0)
    }

    /// The event stream's status and content type (its body never ends).
    static func streamHead(_ d: APIDaemon) throws -> Exchange {
        let head = try d.client.exchange(
            Array("GET /v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".utf8), halfClose: true)
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        let type = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }
        return Exchange(
            method: "GET", route: "/v1/events/stream", status: status,
            contentType: type.map { String($0.dropFirst(13)).trimmingCharacters(in: .whitespaces) } ?? "", body: "")
    }
}
