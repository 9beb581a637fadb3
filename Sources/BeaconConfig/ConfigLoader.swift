import BeaconCore

/// Reads `beacond.yaml` text into a `Config`, or every located mistake in it.
public enum ConfigLoader {
    static let sections = [
        "gateway", "bluetooth", "monitoring", "clients", "receivers", "assets", "zones", "alarms", "positioning", "api",
        "webhooks", "history", "http", "simulation", "site", "calibration", "tags", "analytics", "esphome",
        "engine",
    ]

    /// - Parameters:
    ///   - file: the name printed in messages (the path as the operator gave it).
    ///   - defaultGatewayID: used when `gateway.id` is absent (the daemon passes the host name).
    ///   - fileReadable: checks `secret_file` paths; injected so validation stays testable.
    ///   - secretText: a secret file's key text, to check its form (`signature: standard`);
    ///     nil when it cannot be read (which `fileReadable` reports).
    public static func load(
        yaml text: String, file: String, defaultGatewayID: String = "beacond",
        fileReadable: @escaping (String) -> String? = { _ in nil },
        secretText: @escaping (String) -> String? = { _ in nil },
        fileHead: @escaping (String) -> FileHead = { _ in .unchecked }
    ) throws(ConfigErrors) -> Config {
        try loadReporting(
            yaml: text, file: file, defaultGatewayID: defaultGatewayID, fileReadable: fileReadable,
            secretText: secretText, fileHead: fileHead
        ).config
    }

    /// `load`, and the warnings on a valid file (`ConfigError.isWarning`): what it sets up
    /// that can never happen, such as a webhook whose events nothing produces.
    ///   - fileHead: a file's first bytes, to check that a floor image is one.
    public static func loadReporting(
        yaml text: String, file: String, defaultGatewayID: String = "beacond",
        fileReadable: @escaping (String) -> String? = { _ in nil },
        secretText: @escaping (String) -> String? = { _ in nil },
        fileHead: @escaping (String) -> FileHead = { _ in .unchecked }
    ) throws(ConfigErrors) -> (config: Config, warnings: [ConfigError]) {
        let reader = NodeReader(file: file)
        let root: Node?
        do {
            root = try YAMLComposer.compose(text)
        } catch {
            let message =
                error.message.hasPrefix("duplicate key") || error.message.hasPrefix("YAML tag")
                ? error.message
                : Self.isTab(text, line: error.mark.line, column: error.mark.column)
                    ? "YAML syntax: a tab character; YAML indents with spaces only"
                    : "YAML syntax: \(error.message)"
            throw ConfigErrors([
                ConfigError(
                    file: file, line: error.mark.line, column: error.mark.column, path: error.path, message: message)
            ])
        }
        var config = Config()
        config.gateway.id = defaultGatewayID
        if let root, let fields = reader.mapping(root, "", allowed: sections) {
            var sectionReader = SectionReader(reader: reader, fileReadable: fileReadable, secretText: secretText)
            sectionReader.fileHead = fileHead
            sectionReader.read(fields, into: &config)
            if reader.errors.isEmpty { sectionReader.advise(fields, config) }
        }
        IndentationHints.apply(to: reader)
        let byPlace = { (a: ConfigError, b: ConfigError) in (a.line, a.column) < (b.line, b.column) }
        guard reader.errors.isEmpty else { throw ConfigErrors(reader.errors.sorted(by: byPlace)) }
        return (config, reader.warnings.sorted(by: byPlace))
    }

    /// Whether the character at a 1-based line and column is a tab: libyaml's own words for
    /// it ("found character that cannot start any token") do not say what to change, and a
    /// tab from an editor is the commonest way to get them.
    static func isTab(_ text: String, line: Int, column: Int) -> Bool {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return false }
        let characters = Array(lines[line - 1].utf8)
        return column >= 1 && column <= characters.count && characters[column - 1] == 9
    }
}
