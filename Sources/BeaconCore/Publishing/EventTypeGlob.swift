/// Which event types a webhook, a stream or a history query wants: one or more patterns
/// such as `region.*` or `zone.enter`, where `*` matches any run of characters.
///
/// Patterns name the kind (`region.enter`), as the configuration does; the CloudEvents type
/// (`beacond.region.enter`) matches too, so either spelling works in a query.
public struct EventTypeGlob: Sendable, Equatable {
    public let patterns: [String]
    /// The patterns as bytes, once: `matches` runs for every event and every webhook.
    private let compiled: [[UInt8]]

    public init(_ patterns: [String]) {
        self.patterns = patterns
        compiled = patterns.map { Array($0.utf8) }
    }

    /// A comma-separated list, as in `?type=region.*,zone.*`.
    public init(list: String) {
        self.init(list.split(separator: ",").map { String($0.trimmingWhitespace) }.filter { !$0.isEmpty })
    }

    public func matches(type: String) -> Bool {
        let full = Array(type.utf8)
        let kind = type.hasPrefix("beacond.") ? full[8...] : full[...]
        return compiled.contains { EventTypeGlob.match($0[...], kind) || EventTypeGlob.match($0[...], full[...]) }
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

extension StringProtocol {
    /// Without leading and trailing spaces, tabs, CRs and LFs (header values, list items,
    /// trace lines).
    public var trimmingWhitespace: SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[start...end]
    }
}
