import BeaconCore

/// One key of a configuration section: its name, and how its value is checked and stored in
/// the section's settings. A section is read from a table of these (`SectionReader.read`),
/// so each key is named once: the table is both what the section allows (an unknown key is
/// an error that suggests the closest) and how each allowed key is read.
struct ConfigField<Settings> {
    let key: String
    let read: (SectionReader, Node, String, inout Settings) -> Void
    /// A key that must be given: its absence is a "missing key" error at the mapping.
    private(set) var isRequired = false

    /// The same field, which must be given.
    var required: Self {
        var field = self
        field.isRequired = true
        return field
    }

    init(_ key: String, _ read: @escaping (SectionReader, Node, String, inout Settings) -> Void) {
        self.key = key
        self.read = read
    }

    static func int(_ key: String, _ range: ClosedRange<Int>, _ field: WritableKeyPath<Settings, Int>) -> Self {
        Self(key) { r, n, p, s in if let v = r.reader.int(n, p, range) { s[keyPath: field] = v } }
    }

    static func number(_ key: String, _ range: ClosedRange<Double>, _ field: WritableKeyPath<Settings, Double>)
        -> Self
    {
        Self(key) { r, n, p, s in if let v = r.reader.double(n, p, range) { s[keyPath: field] = v } }
    }

    static func number(_ key: String, _ range: ClosedRange<Double>, _ field: WritableKeyPath<Settings, Double?>)
        -> Self
    {
        Self(key) { r, n, p, s in if let v = r.reader.double(n, p, range) { s[keyPath: field] = v } }
    }

    static func flag(_ key: String, _ field: WritableKeyPath<Settings, Bool>) -> Self {
        Self(key) { r, n, p, s in if let v = r.reader.bool(n, p) { s[keyPath: field] = v } }
    }

    static func duration(
        _ key: String, _ range: ClosedRange<TimeSpan>, _ field: WritableKeyPath<Settings, TimeSpan>
    ) -> Self {
        Self(key) { r, n, p, s in
            if let v = r.reader.duration(n, p, min: range.lowerBound, max: range.upperBound) { s[keyPath: field] = v }
        }
    }

    /// One of an enum's cases, by its raw value: the error lists them all, and a new case is
    /// accepted without touching the reader.
    static func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: String, _ field: WritableKeyPath<Settings, Choice>
    ) -> Self where Choice.RawValue == String {
        Self(key) { r, n, p, s in
            if let v = r.reader.oneOf(n, p, Choice.allCases.map(\.rawValue)).flatMap(Choice.init(rawValue:)) {
                s[keyPath: field] = v
            }
        }
    }

    /// A list of an enum's cases.
    static func choices<Choice: RawRepresentable & CaseIterable>(
        _ key: String, _ field: WritableKeyPath<Settings, [Choice]>
    ) -> Self where Choice.RawValue == String {
        Self(key) { r, n, p, s in
            guard let list = r.reader.sequence(n, p) else { return }
            s[keyPath: field] = list.enumerated().compactMap { j, c in
                r.reader.oneOf(c, "\(p)[\(j)]", Choice.allCases.map(\.rawValue)).flatMap(Choice.init(rawValue:))
            }
        }
    }

    /// A list of strings.
    static func strings(_ key: String, _ field: WritableKeyPath<Settings, [String]>) -> Self {
        Self(key) { r, n, p, s in
            guard let list = r.reader.sequence(n, p) else { return }
            s[keyPath: field] = list.enumerated().compactMap { j, e in r.reader.string(e, "\(p)[\(j)]") }
        }
    }

    static func identifier(_ key: String, _ field: WritableKeyPath<Settings, String>) -> Self {
        Self(key) { r, n, p, s in if let v = r.reader.identifier(n, p) { s[keyPath: field] = v } }
    }

    static func identifier(_ key: String, _ field: WritableKeyPath<Settings, String?>) -> Self {
        Self(key) { r, n, p, s in if let v = r.reader.identifier(n, p) { s[keyPath: field] = v } }
    }

    static func string(_ key: String, _ field: WritableKeyPath<Settings, String?>) -> Self {
        Self(key) { r, n, p, s in if let v = r.reader.string(n, p) { s[keyPath: field] = v } }
    }
}

extension SectionReader {
    /// Reads the mapping at `path` by `fields`: a key outside the table is an error, each key
    /// present and not null is read by its field. Returns the mapping (nil when it is not one)
    /// for checks across keys.
    @discardableResult
    func read<Settings>(_ node: Node, _ path: String, _ fields: [ConfigField<Settings>], into settings: inout Settings)
        -> Fields?
    {
        guard let f = reader.mapping(node, path, allowed: fields.map(\.key)) else { return nil }
        apply(fields, f, in: node, into: &settings)
        return f
    }

    /// Reads a list whose entries each have a unique `id` (`entries`), each entry made by
    /// `make` from its id and the keys in `required` (which it reads itself), then its other
    /// keys by `fields`, then `check` for what spans keys.
    func entries<Entry>(
        _ node: Node, _ path: String, required: [String] = [], _ fields: [ConfigField<Entry>],
        ids written: inout Set<String>, make: (_ fields: Fields, _ id: String, _ node: Node) -> Entry?,
        check: (_ entry: Entry, _ fields: Fields, _ node: Node) -> Void = { _, _, _ in }
    ) -> [Entry] {
        entries(node, path, allowed: ["id"] + required + fields.map(\.key), ids: &written) { f, id, item in
            guard var entry = make(f, id, item) else { return nil }
            apply(fields, f, in: item, into: &entry)
            check(entry, f, item)
            return entry
        }
    }

    /// Reads each key of `fields` that a mapping already checked (`node`) has and is not null,
    /// and says which required ones it lacks: for a section with a key that must be read first
    /// (`site.mqtt`, `site.mqtt.url`).
    func apply<Settings>(
        _ fields: [ConfigField<Settings>], _ f: Fields, in node: Node, into settings: inout Settings
    ) {
        for field in fields {
            if field.isRequired {
                if let n = required(f, field.key, in: node) { field.read(self, n, f.path(field.key), &settings) }
            } else {
                with(f, field.key) { n, p in field.read(self, n, p, &settings) }
            }
        }
    }
}
