import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `GET /v1/floor`: what the floor view draws besides the assets — the floor's outline, its
/// levels, the receivers with how recently each was heard, and the zones — in one answer, so
/// that the page needs no knowledge of the configuration file. `GET /` is the view itself.
extension APIRouter {
    /// A receiver not heard for this long is drawn grey (it is silent, or unplugged).
    static let silentAfter = TimeSpan.seconds(30)

    func floor() -> HTTPReply {
        let config = context.config
        let tallies = currentGlance().receivers
        let now = context.clock()
        var report = FloorReport()
        report.receivers = config.receivers.map { r in
            let tally = tallies[r.id]
            let age = (now - (tally?.lastHeard ?? context.started)).seconds
            var receiver = FloorReport.Receiver()
            (receiver.id, receiver.x, receiver.y, receiver.level) = (r.id, r.x, r.y, r.level)
            receiver.sightings = tally?.sightings ?? 0
            receiver.lastHeardAgeSeconds = max(0, age)
            receiver.silent = age >= Self.silentAfter.seconds
            return receiver
        }
        report.floor = config.positioning.floor.map { points in points.map { [$0.x, $0.y] } }
        var levels = Set(config.receivers.map(\.level))
        for zone in config.zones { if case let .polygon(level, _) = zone.shape { levels.insert(level) } }
        if levels.isEmpty { levels.insert(0) }
        report.levels = levels.sorted()
        report.zones = zoneReports()
        report.silentAfterSeconds = Self.silentAfter.seconds
        report.image = config.floorImage.map { image in
            var i = FloorReport.Image()
            (i.url, i.scale, i.origin) = ("/v1/floor/image", image.scale, image.origin)
            return i
        }
        return Reply.json(report.json)
    }

    /// `GET /v1/assets/{id}/readings`: what each receiver hears of an asset now (smoothed
    /// RSSI, last heard, the receiver's position), for `beaconctl calibrate record`.
    func assetReadings(id: String) -> HTTPReply {
        let answer = onEngine { engine, now in ((engine.tracker?.readings(asset: id), now), []) }
        guard let (readings, now) = answer else { return engineUnavailable() }
        guard let readings else { return Reply.error(404, "unknown_asset", "no asset \"\(id)\"") }
        var report = AssetReadings()
        report.asset = id
        report.readings = readings.map { r in
            var reading = AssetReadings.Reading()
            (reading.receiver, reading.rssi, reading.ageSeconds) = (r.receiver.id, r.rssi, (now - r.lastSeen).seconds)
            (reading.x, reading.y, reading.z) = (r.receiver.position.x, r.receiver.position.y, r.receiver.z)
            reading.level = r.receiver.level
            return reading
        }
        return Reply.json(report.json)
    }

    /// The largest floor image served: a plan is a few hundred kilobytes; this bounds what one
    /// request can make the daemon read.
    static let floorImageLimit = 16 << 20
    /// The floor image as last read, and the file's version then (path, inode, size, mtime).
    static let floorImageCache = Mutex<(version: String, bytes: [UInt8])?>(nil)

    /// `GET /v1/floor/image`: `positioning.floor_image`, read when asked (a plan replaced on
    /// the disk shows at the next load of the page).
    func floorImage() -> HTTPReply {
        guard let image = context.config.floorImage else {
            return Reply.error(404, "no_floor_image", "positioning.floor_image is not set")
        }
        let fd = open(image.file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            return Reply.error(503, "floor_image_unreadable", "\(image.file): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        let version =
            fstat(fd, &info) == 0 ? "\(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)" : ""
        // Read once per version of the file, not once per request: a hundred readers asking
        // at once made a hundred copies of a 12 MiB plan (issue 38 #10).
        var bytes: [UInt8]
        if !version.isEmpty, let cached = Self.floorImageCache.withLock({ $0 }), cached.version == image.file + version
        {
            bytes = cached.bytes
        } else {
            bytes = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while bytes.count <= Self.floorImageLimit {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            guard bytes.count <= Self.floorImageLimit else {
                return Reply.error(503, "floor_image_too_large", "\(image.file) is over 16 MiB")
            }
            if !version.isEmpty { Self.floorImageCache.withLock { [bytes] in $0 = (image.file + version, bytes) } }
        }
        var response = HTTPResponse(status: 200, headers: [("Content-Type", image.mediaType)], body: bytes)
        response.headers.append((name: "Cache-Control", value: "no-cache"))
        // An SVG plan is a document that may hold script: opened on its own, it would run on
        // this daemon's origin (and read what the page keeps there). Sandboxed, with nothing
        // to load or run, it is only drawn; inside the floor view (an <img>) it never runs.
        response.headers.append(
            (name: "Content-Security-Policy", value: "sandbox; default-src 'none'; style-src 'unsafe-inline'"))
        response.headers.append((name: "X-Content-Type-Options", value: "nosniff"))
        return .response(response)
    }

    /// The floor view (`FloorViewPage`): one self-contained page, no network beyond this daemon.
    func floorView(_ request: HTTPRequest) -> HTTPReply {
        var response = HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: FloorViewPage.html)
        // The token came in the address (a person opening the page): kept as a cookie no
        // script can read (HttpOnly), so that a script that runs on this origin anyway (an
        // SVG plan opened on its own, before it was sandboxed) could not take it. On the TCP
        // listener the request got here only with the right token; on the socket no cookie
        // is looked at. A raw token's `+` came decoded as a space, and is put back.
        if let token = request.query["token"], !token.isEmpty,
            token.allSatisfy({
                $0 == " " || ($0.isASCII && $0 != ";" && $0 != "," && $0 != "\\" && $0 != "\"" && !$0.isWhitespace)
            })
        {
            let raw = String(token.map { $0 == " " ? "+" : $0 })
            response.headers.append(
                (name: "Set-Cookie", value: "beacond_token=\(raw); Path=/; HttpOnly; SameSite=Strict"))
        }
        // The page needs nothing from elsewhere, and says so to the browser.
        response.headers.append(
            (
                name: "Content-Security-Policy",
                value: "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline' 'self'; "
                    + "img-src 'self' data:; connect-src 'self'"
            ))
        response.headers.append((name: "Cache-Control", value: "no-store"))
        return .response(response)
    }
}
