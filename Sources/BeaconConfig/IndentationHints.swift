/// Says where a misplaced key belongs. In YAML a key indented too little or too much is
/// valid text that lands in another mapping, where it is only an "unknown key": the usual
/// mistake behind it is the indentation, so the message names the mapping the key is a key
/// of and the column its keys start at.
enum IndentationHints {
    static func apply(to reader: NodeReader) {
        for unknown in reader.unknownKeys {
            if let hint = hint(for: unknown, in: reader) {
                reader.amend(error: unknown.error, message: "unknown key here: \(hint)")
            }
        }
    }

    static func hint(for unknown: NodeReader.UnknownKey, in reader: NodeReader) -> String? {
        let key = unknown.key
        if !unknown.parent.isEmpty, ConfigLoader.sections.contains(key) {
            return "\"\(key)\" is a top-level section, which starts at column 1; it is indented "
                + "\(unknown.column - 1) spaces here"
        }
        // Where the key is allowed: in this file's mappings first, else in a section the file
        // does not have.
        let here = reader.allowedAt.filter {
            $0.key != unknown.parent && !$0.key.isEmpty && $0.value.keys.contains(key)
        }
        if let path = closest(here.keys, to: unknown.parent), let column = here[path]?.column {
            return "\"\(key)\" is a key of \(path), whose keys start at column \(column); it is at column "
                + "\(unknown.column)"
        }
        guard !unknown.suggested else { return nil }
        let absent = sectionKeys.filter { reader.allowedAt[$0.key] == nil && $0.value.contains(key) }
        if let path = closest(absent.keys, to: unknown.parent) {
            return "\"\(key)\" is a key of \(path), which this file does not have: write it indented under a "
                + "\"\(path.split(separator: ".").last ?? "")\" line"
        }
        return nil
    }

    /// The path sharing the most leading components with `parent`, then the shortest.
    static func closest(_ paths: Dictionary<String, some Any>.Keys, to parent: String) -> String? {
        let mine = parent.split(separator: ".")
        func shared(_ path: String) -> Int {
            zip(path.split(separator: "."), mine).prefix { $0 == $1 }.count
        }
        return paths.max { a, b in
            (shared(a), -a.count, a) < (shared(b), -b.count, b)
        }
    }

    /// The keys of every mapping section, read off the section readers themselves with each
    /// section present and empty, so this list cannot drift from what they accept.
    static let sectionKeys: [String: [String]] = {
        let text = """
            gateway: {}
            bluetooth: {}
            monitoring: {}
            positioning: {}
            api: {}
            history: {alerts: {}, telemetry: {}}
            http: {}
            simulation: {}
            site: {mqtt: {}}
            """
        guard let root = try? YAMLComposer.compose(text) else { return [:] }
        let reader = NodeReader(file: "")
        if let fields = reader.mapping(root, "", allowed: ConfigLoader.sections) {
            var sections = SectionReader(reader: reader, fileReadable: { _ in nil }, secretText: { _ in nil })
            var config = Config()
            sections.read(fields, into: &config)
        }
        return reader.allowedAt.filter { !$0.key.isEmpty }.mapValues(\.keys)
    }()
}
