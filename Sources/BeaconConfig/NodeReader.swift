import BeaconCore

/// Walks a composed YAML tree and reads typed values, recording a located error for each
/// mistake instead of stopping at the first one.
///
/// Decoding into Codable types would ignore unknown keys and lose line numbers; the composed
/// `Node` tree keeps a mark (line, column) on every node, which is what our messages need.
final class NodeReader {
    let file: String
    private(set) var errors: [ConfigError] = []
    private(set) var warnings: [ConfigError] = []
    /// The keys each mapping read allows, by its path, and the column its keys start at in
    /// the file (nil for an empty one): where a misplaced key belongs.
    private(set) var allowedAt: [String: (keys: [String], column: Int?)] = [:]
    /// Unknown keys met, for `IndentationHints` once the whole file is read.
    private(set) var unknownKeys: [UnknownKey] = []

    struct UnknownKey {
        var error: Int
        var key: String
        /// The mapping it was found in (`""` at the top level).
        var parent: String
        var column: Int
        /// A "did you mean" suggestion was given.
        var suggested: Bool
    }

    init(file: String) { self.file = file }

    func fail(_ node: Node?, _ path: String, _ message: String) {
        let mark = node?.mark
        errors.append(
            ConfigError(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, path: path, message: message))
    }

    func warn(_ node: Node?, _ path: String, _ message: String) {
        let mark = node?.mark
        warnings.append(
            ConfigError(
                file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, path: path, message: message,
                isWarning: true))
    }

    /// Replaces an error's message (a hint found once the whole file is read).
    func amend(error index: Int, message: String) { errors[index].message = message }

    /// True for an absent-looking value: `key:` with nothing after it, `~` or `null`.
    func isNull(_ node: Node) -> Bool {
        guard case let .scalar(s) = node, s.style == .plain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(s.string)
    }

    /// What the node is, for "got ..." messages. Scalars are quoted back.
    func describe(_ node: Node) -> String {
        switch node {
        case let .scalar(s): return "\"\(s.string)\""
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    /// Reads a mapping, reporting unknown keys (with a suggestion) and returning known ones.
    /// A null value reads as an empty mapping, so `gateway:` alone is valid.
    func mapping(_ node: Node, _ path: String, allowed: [String]) -> Fields? {
        if isNull(node) { return Fields(path: path, values: [:]) }
        guard case let .mapping(m) = node else {
            fail(
                node, path,
                "expected a mapping of \(allowed.prefix(3).joined(separator: ", "))..., got \(describe(node))")
            return nil
        }
        allowedAt[path] = (allowed, m.pairs.first?.key.mark.column)
        var values: [String: Node] = [:]
        for (keyNode, value) in m {
            guard case let .scalar(k) = keyNode else {
                fail(keyNode, path, "keys must be plain strings, got \(describe(keyNode))")
                continue
            }
            let keyPath = path.isEmpty ? k.string : "\(path).\(k.string)"
            guard allowed.contains(k.string) else {
                let closest = NodeReader.closest(to: k.string, in: allowed)
                unknownKeys.append(
                    UnknownKey(
                        error: errors.count, key: k.string, parent: path, column: keyNode.mark.column,
                        suggested: closest != nil))
                fail(keyNode, keyPath, "unknown key" + (closest.map { " (did you mean \"\($0)\"?)" } ?? ""))
                continue
            }
            values[k.string] = value
        }
        return Fields(path: path, values: values)
    }

    func sequence(_ node: Node, _ path: String) -> [Node]? {
        if isNull(node) { return [] }
        guard case let .sequence(s) = node else {
            fail(node, path, "expected a list, got \(describe(node))")
            return nil
        }
        return Array(s)
    }

    func string(_ node: Node, _ path: String) -> String? {
        guard case let .scalar(s) = node, !isNull(node) else {
            fail(node, path, "expected a string, got \(isNull(node) ? "nothing" : describe(node))")
            return nil
        }
        return s.string
    }

    /// A non-empty identifier of letters, digits, `.`, `_` and `-`: ids end up in event
    /// subjects, URLs and file names.
    func identifier(_ node: Node, _ path: String) -> String? {
        guard let s = string(node, path) else { return nil }
        guard Identifier.problem(s) == nil else {
            fail(node, path, "expected an id of letters, digits, '.', '_' or '-' (at most 64), got \(describe(node))")
            return nil
        }
        return s
    }

    func int(_ node: Node, _ path: String, _ range: ClosedRange<Int>) -> Int? {
        guard case let .scalar(s) = node, s.style == .plain, let value = Int(s.string) else {
            fail(node, path, "expected an integer, got \(describe(node))")
            return nil
        }
        guard range.contains(value) else {
            fail(node, path, "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
            return nil
        }
        return value
    }

    func double(_ node: Node, _ path: String, _ range: ClosedRange<Double>) -> Double? {
        guard case let .scalar(s) = node, s.style == .plain, let value = Double(s.string), value.isFinite else {
            fail(node, path, "expected a number, got \(describe(node))")
            return nil
        }
        guard range.contains(value) else {
            fail(
                node, path,
                "must be between \(format(range.lowerBound)) and \(format(range.upperBound)), got \(s.string)")
            return nil
        }
        return value
    }

    private func format(_ d: Double) -> String { d == d.rounded() ? String(Int(d)) : String(d) }

    func bool(_ node: Node, _ path: String) -> Bool? {
        if case let .scalar(s) = node, s.style == .plain {
            switch s.string {
            case "true", "True", "TRUE": return true
            case "false", "False", "FALSE": return false
            default: break
            }
        }
        fail(node, path, "expected true or false, got \(describe(node))")
        return nil
    }

    /// Durations are strings like `500ms`, `30s`, `5m`, `2h`.
    func duration(_ node: Node, _ path: String, min: TimeSpan, max: TimeSpan) -> TimeSpan? {
        guard case let .scalar(s) = node, let span = TimeSpan(parsing: s.string) else {
            fail(node, path, "expected a duration like \"30s\", got \(describe(node))")
            return nil
        }
        guard span >= min, span <= max else {
            fail(node, path, "must be between \(min) and \(max), got \"\(s.string)\"")
            return nil
        }
        return span
    }

    func uuid(_ node: Node, _ path: String) -> BeaconUUID? {
        guard case let .scalar(s) = node, let uuid = BeaconUUID(s.string) else {
            fail(node, path, "expected a UUID like \"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0\", got \(describe(node))")
            return nil
        }
        return uuid
    }

    func oneOf(_ node: Node, _ path: String, _ choices: [String]) -> String? {
        guard case let .scalar(s) = node, choices.contains(s.string) else {
            fail(node, path, "expected one of \(choices.joined(separator: ", ")), got \(describe(node))")
            return nil
        }
        return s.string
    }

    /// The allowed key that extends the word, or else is within edit distance 2, for "did you mean" hints.
    static func closest(to word: String, in candidates: [String]) -> String? {
        if word.count >= 4, let extended = candidates.first(where: { $0.hasPrefix(word) || word.hasPrefix($0) }) {
            return extended
        }
        return candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = Swift.min(
                    previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// The known keys of one mapping and their value nodes (which carry the marks for errors).
struct Fields {
    let path: String
    let values: [String: Node]

    subscript(key: String) -> Node? { values[key] }
    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
