import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// `GET /v1/beacons`: what was heard recently, a page at a time.
extension APIRouter {
    /// `GET /v1/beacons?limit=&offset=`: the beacons heard within `exit_timeout`, most
    /// recently heard first, a page at a time (`limit` 1…5000, default 1000), built on the
    /// engine's thread and written out on the slow-reads thread, not the server's.
    func beacons(_ query: [String: String]) -> HTTPReply {
        var limit = 1000
        var offset = 0
        if let text = query["limit"] {
            guard let n = Int(text), (1...5000).contains(n) else {
                return Reply.error(400, "bad_limit", "limit: expected an integer 1...5000, got \"\(text.prefix(40))\"")
            }
            limit = n
        }
        if let text = query["offset"] {
            guard let n = Int(text), n >= 0 else {
                return Reply.error(
                    400, "bad_offset", "offset: expected an integer 0 or more, got \"\(text.prefix(40))\"")
            }
            offset = n
        }
        return .later { [self, offset, limit] answer in
            let queued = slowReads.run { [self] in answer(beaconsPage(offset: offset, limit: limit)) }
            if !queued {
                answer(
                    HTTPResponse.error(
                        status: 503, code: "busy",
                        message: "\(SlowReads.maxQueued) beacon listings are already waiting; try again shortly"))
            }
        }
    }

    private func beaconsPage(offset: Int, limit: Int) -> HTTPResponse {
        let answer = onEngine { engine, now in
            (engine.beaconStatuses(at: now, within: engine.settings.exitTimeout, offset: offset, limit: limit), [])
        }
        guard let (total, list) = answer else {
            if case let .response(response) = engineUnavailable() { return response }
            return HTTPResponse(status: 503)
        }
        var page = BeaconsPage()
        page.total = total
        page.next = offset + list.count < total ? offset + list.count : nil
        page.beacons = list.map { b in
            var beacon = BeaconsPage.Beacon()
            beacon.tag = BeaconTag(b.identity)
            beacon.proximity = b.proximity.rawValue
            beacon.distance = b.distance
            beacon.lastSeen = RFC3339.format(b.lastSeen)
            beacon.receivers = b.readings.map { r in
                var reading = BeaconsPage.Reading()
                reading.receiver = r.receiver
                (reading.rssi, reading.distance) = (r.rssi, r.distance)
                reading.lastSeen = RFC3339.format(r.lastSeen)
                return reading
            }
            return beacon
        }
        return Reply.jsonResponse(page.json)
    }
}
