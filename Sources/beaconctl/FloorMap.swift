import APIModel
import BeaconCore

/// The floor view's picture without a browser (`beaconctl map`): an SVG for reports, or a
/// coarse text map for a terminal on a gateway with no browser near. Drawn from the same
/// answers as the page (`/v1/floor`, `/v1/assets`), so the three never disagree.
struct FloorMap {
    struct Receiver {
        var id: String
        var x, y: Double
        var level: Int
        var silent: Bool
    }
    struct Zone {
        var id: String
        var level: Int?
        var polygon: [[Double]]
        var receiver: String?
        var within: Double
    }
    struct Asset {
        var id: String
        var x, y, accuracy: Double
        var level: Int
        var zones: [String]
    }

    var floor: [[Double]]?
    var receivers: [Receiver]
    var zones: [Zone]
    var assets: [Asset]
    var level: Int

    init(floor answer: JSONValue, assets list: JSONValue, level: Int?) {
        let report = FloorReport(json: answer)
        floor = report.floor
        receivers = report.receivers.map { Receiver(id: $0.id, x: $0.x, y: $0.y, level: $0.level, silent: $0.silent) }
        zones = report.zones.map { zone in
            switch zone.shape {
            case let .polygon(level, points):
                return Zone(id: zone.id, level: level, polygon: points, receiver: nil, within: 0)
            case let .nearReceiver(receiver, within):
                return Zone(id: zone.id, level: nil, polygon: [], receiver: receiver, within: within)
            }
        }
        assets = AssetList(json: list).assets.compactMap { a in
            a.position.map { Asset(id: a.id, x: $0.x, y: $0.y, accuracy: $0.accuracy, level: $0.level, zones: a.zones) }
        }
        self.level = level ?? report.levels.first ?? 0
    }

    /// The extent of everything on the level, in metres, with a metre's margin.
    var bounds: (minX: Double, minY: Double, maxX: Double, maxY: Double) {
        var points = floor ?? []
        points += receivers.filter { $0.level == level }.map { [$0.x, $0.y] }
        points += zones.filter { $0.level == level }.flatMap(\.polygon)
        points += assets.filter { $0.level == level }.map { [$0.x, $0.y] }
        let xs = points.compactMap(\.first), ys = points.compactMap { $0.count > 1 ? $0[1] : nil }
        guard let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max() else {
            return (0, 0, 10, 10)
        }
        return (minX - 1, minY - 1, maxX + 1, maxY + 1)
    }

    static let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"]

    /// An SVG of the level: 40 px per metre, y up as on a plan.
    func svg() -> String {
        let b = bounds, scale = 40.0
        let width = (b.maxX - b.minX) * scale, height = (b.maxY - b.minY) * scale
        func x(_ v: Double) -> String { Self.number((v - b.minX) * scale) }
        func y(_ v: Double) -> String { Self.number(height - (v - b.minY) * scale) }
        func points(_ list: [[Double]]) -> String {
            list.filter { $0.count == 2 }.map { "\(x($0[0])),\(y($0[1]))" }.joined(separator: " ")
        }
        let occupied = Set(assets.flatMap(\.zones))
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" \
            viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="#fafafa"/>

            """
        if let floor {
            out +=
                "<polygon class=\"floor\" points=\"\(points(floor))\" fill=\"#fff\" stroke=\"#999\" stroke-width=\"2\"/>\n"
        }
        for (i, zone) in zones.enumerated() {
            let color = Self.palette[i % Self.palette.count]
            let opacity = occupied.contains(zone.id) ? "0.45" : "0.12"
            let attributes =
                "class=\"zone\" data-zone=\"\(Self.escape(zone.id))\" fill=\"\(color)\" fill-opacity=\"\(opacity)\" stroke=\"\(color)\""
            if zone.level == level, !zone.polygon.isEmpty {
                out +=
                    "<polygon \(attributes) points=\"\(points(zone.polygon))\"><title>\(Self.escape(zone.id))</title></polygon>\n"
            } else if let id = zone.receiver, let r = receivers.first(where: { $0.id == id && $0.level == level }) {
                out +=
                    "<circle \(attributes) cx=\"\(x(r.x))\" cy=\"\(y(r.y))\" r=\"\(Self.number(zone.within * scale))\"><title>\(Self.escape(zone.id))</title></circle>\n"
            }
        }
        for r in receivers where r.level == level {
            let (cx, cy) = ((r.x - b.minX) * scale, height - (r.y - b.minY) * scale)
            out +=
                "<polygon class=\"receiver\" data-receiver=\"\(Self.escape(r.id))\" points=\"\(Self.number(cx)),\(Self.number(cy - 7)) \(Self.number(cx + 7)),\(Self.number(cy + 7)) \(Self.number(cx - 7)),\(Self.number(cy + 7))\" fill=\"\(r.silent ? "#aaa" : "#222")\"><title>\(Self.escape(r.id))\(r.silent ? " (silent)" : "")</title></polygon>\n"
        }
        for a in assets where a.level == level {
            out +=
                "<circle class=\"accuracy\" cx=\"\(x(a.x))\" cy=\"\(y(a.y))\" r=\"\(Self.number(max(2, a.accuracy * scale)))\" fill=\"#5078c8\" fill-opacity=\"0.12\"/>\n"
            out +=
                "<circle class=\"asset\" data-asset=\"\(Self.escape(a.id))\" cx=\"\(x(a.x))\" cy=\"\(y(a.y))\" r=\"4\" fill=\"#2458c6\"><title>\(Self.escape(a.id))</title></circle>\n"
            out +=
                "<text x=\"\(Self.number((a.x - b.minX) * scale + 6))\" y=\"\(Self.number(height - (a.y - b.minY) * scale - 6))\">\(Self.escape(a.id))</text>\n"
        }
        return out + "</svg>\n"
    }

    /// A text map of the level, `columns` characters wide: `#` the floor's outline, a zone's
    /// first letter inside it (capital while occupied), `R` a receiver (`r` when silent), and
    /// each asset as `*` (a digit when several share a cell), with a legend below.
    func text(columns: Int = 72) -> String {
        let b = bounds
        let cell = (b.maxX - b.minX) / Double(columns)
        let rows = max(1, Int(((b.maxY - b.minY) / (cell * 2)).rounded(.up)))  // a character is twice as tall as wide
        var grid = [[Character]](repeating: [Character](repeating: " ", count: columns), count: rows)
        func place(_ x: Double, _ y: Double) -> (Int, Int)? {
            let c = Int((x - b.minX) / cell), r = rows - 1 - Int((y - b.minY) / (cell * 2))
            return (0..<columns).contains(c) && (0..<rows).contains(r) ? (r, c) : nil
        }
        let occupied = Set(assets.flatMap(\.zones))
        for r in 0..<rows {
            for c in 0..<columns {
                let point = (b.minX + (Double(c) + 0.5) * cell, b.minY + (Double(rows - 1 - r) + 0.5) * cell * 2)
                if let zone = zones.first(where: { $0.level == level && Self.inside(point, $0.polygon) }),
                    let letter = zone.id.first
                {
                    grid[r][c] = Character(occupied.contains(zone.id) ? letter.uppercased() : letter.lowercased())
                }
            }
        }
        if let floor, floor.count > 2 {
            for (i, p) in floor.enumerated() {
                let q = floor[(i + 1) % floor.count]
                let steps = max(1, Int(max(abs(q[0] - p[0]) / cell, abs(q[1] - p[1]) / (cell * 2))) * 2)
                for s in 0...steps {
                    let t = Double(s) / Double(steps)
                    if let (r, c) = place(p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t) { grid[r][c] = "#" }
                }
            }
        }
        for receiver in receivers where receiver.level == level {
            if let (r, c) = place(receiver.x, receiver.y) { grid[r][c] = receiver.silent ? "r" : "R" }
        }
        var counts: [Int: Int] = [:]
        for a in assets where a.level == level {
            guard let (r, c) = place(a.x, a.y) else { continue }
            counts[r * columns + c, default: 0] += 1
            let n = counts[r * columns + c]!
            grid[r][c] = n == 1 ? "*" : n < 10 ? Character(String(n)) : "+"
        }
        var out = grid.map { String($0).replacingTrailingSpaces() }.joined(separator: "\n") + "\n"
        out +=
            "level \(level): \(assets.filter { $0.level == level }.count) assets (*), "
            + "\(receivers.filter { $0.level == level }.count) receivers (R; r silent); zones: "
            + zones.filter { $0.level == level }.map {
                "\($0.id.prefix(1)) \($0.id)\(occupied.contains($0.id) ? " (occupied)" : "")"
            }
            .joined(separator: ", ") + "\n"
        return out
    }

    static func inside(_ p: (Double, Double), _ polygon: [[Double]]) -> Bool {
        guard polygon.count > 2 else { return false }
        var inside = false
        var j = polygon.count - 1
        for i in polygon.indices {
            let (xi, yi, xj, yj) = (polygon[i][0], polygon[i][1], polygon[j][0], polygon[j][1])
            if (yi > p.1) != (yj > p.1), p.0 < (xj - xi) * (p.1 - yi) / (yj - yi) + xi { inside.toggle() }
            j = i
        }
        return inside
    }

    static func number(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}

extension String {
    func replacingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
