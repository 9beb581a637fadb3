extension JSONValue {
    /// Compact JSON text. Integral numbers print without a fraction (`-67`, not `-67.0`);
    /// other numbers print with at most 6 decimals, enough for metres and seconds.
    public var serialized: String {
        var out = ""
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    public func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .number(n): JSONValue.writeNumber(n, into: &out)
        case let .string(s): JSONValue.writeString(s, into: &out)
        case let .array(items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case let .object(members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    static func writeNumber(_ n: Double, into out: inout String) {
        guard n.isFinite else {
            out += "null"
            return
        }
        if n == n.rounded(), abs(n) < 1e15 {
            out += String(Int64(n))
            return
        }
        // Round to 6 decimals and trim trailing zeros; deterministic across platforms.
        let scaled = (n * 1_000_000).rounded()
        guard abs(scaled) < 9e18 else {
            out += String(n)
            return
        }
        let negative = scaled < 0
        let units = Int64(abs(scaled))
        var fraction = String(units % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        out += negative ? "-" : ""
        out += String(units / 1_000_000)
        if !fraction.isEmpty { out += "." + fraction }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
