/// Which event types a webhook, a stream or a history query wants: one or more patterns
/// such as `region.*` or `zone.enter`, where `*` matches any run of characters.
///
/// Patterns name the kind (`region.enter`), as the configuration does; the CloudEvents type
/// (`beacond.region.enter`) matches too, so either spelling works in a query.
public struct EventTypeGlob: Sendable, Equatable {
    public let patterns: [String]

    public init(_ patterns: [String]) { self.patterns = patterns }

    /// A comma-separated list, as in `?type=region.*,zone.*`.
    public init(list: String) {
        self.init(list.split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty })
    }

    public func matches(type: String) -> Bool {
        let kind = type.hasPrefix("beacond.") ? Substring(type.utf8.dropFirst(8)) : Substring(type)
        return patterns.contains { EventTypeGlob.match(Array($0.utf8)[...], Array(kind.utf8)[...]) }
            || patterns.contains { EventTypeGlob.match(Array($0.utf8)[...], Array(type.utf8)[...]) }
    }

    /// Wildcard match with backtracking to the last `*` (linear for one star, as patterns are).
    static func match(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        var p = pattern.startIndex
        var t = text.startIndex
        var star: (p: Int, t: Int)? = nil
        while t < text.endIndex {
            if p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") {
                star = (p, t)
                p += 1
            } else if p < pattern.endIndex, pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let s = star {
                p = s.p + 1
                t = s.t + 1
                star = (s.p, s.t + 1)
            } else {
                return false
            }
        }
        while p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }
}

extension String {
    var trimmingSpaces: String {
        let bytes = Array(utf8)
        guard let first = bytes.firstIndex(where: { $0 != 0x20 }), let last = bytes.lastIndex(where: { $0 != 0x20 })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
