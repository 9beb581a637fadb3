import BeaconCore
import Yams

/// Reads `beacond.yaml` text into a `Config`, or every located mistake in it.
public enum ConfigLoader {
    static let sections = [
        "gateway", "bluetooth", "monitoring", "clients", "receivers", "assets", "zones", "alarms", "positioning", "api",
        "webhooks", "simulation",
    ]

    /// - Parameters:
    ///   - file: the name printed in messages (the path as the operator gave it).
    ///   - defaultGatewayID: used when `gateway.id` is absent (the daemon passes the host name).
    ///   - fileReadable: checks `secret_file` paths; injected so validation stays testable.
    public static func load(
        yaml text: String, file: String, defaultGatewayID: String = "beacond",
        fileReadable: @escaping (String) -> String? = { _ in nil }
    ) throws(ConfigErrors) -> Config {
        let reader = NodeReader(file: file)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw ConfigErrors([syntaxError(error, file: file)])
        } catch {
            throw ConfigErrors([ConfigError(file: file, line: 1, column: 1, path: "", message: "\(error)")])
        }
        var config = Config()
        config.gateway.id = defaultGatewayID
        if let root, let fields = reader.mapping(root, "", allowed: sections) {
            var sectionReader = SectionReader(reader: reader, fileReadable: fileReadable)
            sectionReader.read(fields, into: &config)
        }
        guard reader.errors.isEmpty else {
            throw ConfigErrors(reader.errors.sorted { ($0.line, $0.column) < ($1.line, $1.column) })
        }
        return config
    }

    private static func syntaxError(_ error: YamlError, file: String) -> ConfigError {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
            let .composer(context, problem, mark, _):
            let detail = context.map { "\(problem) \($0.text)" } ?? problem
            return ConfigError(
                file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax: \(detail)")
        case let .duplicatedKeysInMapping(duplicates, context):
            return ConfigError(
                file: file, line: context.mark.line, column: context.mark.column, path: "",
                message: "duplicate key \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) in one mapping")
        default:
            return ConfigError(file: file, line: 1, column: 1, path: "", message: "YAML: \(error)")
        }
    }
}
