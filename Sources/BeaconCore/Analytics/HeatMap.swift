/// Where the assets were (SPEC §8): asset-seconds per 1 m cell of each level, made at every
/// positioning tick from the assets placed in it, so that a parked cart counts as long as it
/// is heard, not only when it moves (a position is published only on a move). What a floor's
/// heat map draws: the busiest aisle at a glance.
public struct HeatMap: Sendable, Equatable {
    /// A 1 m square: x and y are the metres of its lower-left corner.
    public struct Cell: Hashable, Sendable, Comparable {
        public var level: Int
        public var x: Int
        public var y: Int

        public init(level: Int, x: Int, y: Int) { (self.level, self.x, self.y) = (level, x, y) }

        /// The cell a position falls in.
        public init(_ p: Point, level: Int) {
            self.init(level: level, x: Int(p.x.rounded(.down)), y: Int(p.y.rounded(.down)))
        }

        public static func < (a: Cell, b: Cell) -> Bool { (a.level, a.y, a.x) < (b.level, b.y, b.x) }
    }

    public private(set) var seconds: [Cell: Double] = [:]

    public init() {}

    public var isEmpty: Bool { seconds.isEmpty }

    /// An asset at `p` on `level` for `span`. A position off the floor by more than a
    /// kilometre (a fix gone wild) is not a cell worth keeping.
    public mutating func add(_ p: Point, level: Int, for span: TimeSpan) {
        guard p.x.isFinite, p.y.isFinite, abs(p.x) < 1000, abs(p.y) < 1000 else { return }
        seconds[Cell(p, level: level), default: 0] += span.seconds
    }

    public mutating func merge(_ other: HeatMap) {
        for (cell, s) in other.seconds { seconds[cell, default: 0] += s }
    }

    /// Adds seconds to one cell.
    public mutating func add(cell: Cell, seconds s: Double) {
        guard s > 0 else { return }
        seconds[cell, default: 0] += s
    }

    /// One level's cells as text, "x,y,seconds" separated by spaces: how the state store
    /// keeps an hour of them.
    public var text: String {
        seconds.keys.sorted().map { "\($0.x),\($0.y),\(seconds[$0]!)" }.joined(separator: " ")
    }

    /// Reads `text` as the cells of `level`; a cell it cannot read is left out.
    public init(text: String, level: Int) {
        for field in text.split(separator: " ") {
            let f = field.split(separator: ",")
            guard f.count == 3, let x = Int(f[0]), let y = Int(f[1]), let s = Double(f[2]), s.isFinite else { continue }
            add(cell: Cell(level: level, x: x, y: y), seconds: s)
        }
    }
}
