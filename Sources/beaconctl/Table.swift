import BeaconCore

/// Human output: aligned columns with a header, and JSON values shown briefly.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) { self.headers = headers }

    /// Cells are one line each and bounded: a value from outside (a proxy's model, a tag's
    /// name) cannot break the table, forge a row or repaint the terminal (`OutsideText`).
    mutating func add(_ cells: String...) { add(cells) }
    mutating func add(_ cells: [String]) { rows.append(cells.map { OutsideText.line($0, limit: Self.cellLimit) }) }

    /// The widest a cell is shown.
    static let cellLimit = 160

    var text: String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var out = ""
            for (i, cell) in cells.enumerated() {
                let isLast = i == cells.count - 1
                out += isLast ? cell : cell + String(repeating: " ", count: widths[i] - cell.count + 2)
            }
            return out
        }
        if rows.isEmpty { return line(headers) + "\n(none)" }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

extension JSONValue {
    /// A cell: strings bare, numbers without a needless ".0", null as "-".
    var cell: String {
        switch self {
        case .null: return "-"
        case let .string(s): return s
        case let .bool(b): return b ? "yes" : "no"
        case let .number(n): return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        case let .array(items): return items.map(\.cell).joined(separator: ",")
        case .object: return serialized
        }
    }

    var items: [JSONValue] {
        if case let .array(a) = self { return a }
        return []
    }
}
