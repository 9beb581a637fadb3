import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

enum ConfigFile {
    static let defaultPath = "/etc/beacond/beacond.yaml"

    /// Loads and validates, or prints every located error and exits 78 (EX_CONFIG).
    static func load(_ path: String) throws -> Config { try loadWithDigest(path).config }

    /// The same, and the digest of the text it loaded (`ConfigDigest`), and the warnings on
    /// what it sets up that can never happen (`ConfigLoader.loadReporting`).
    static func loadWithDigest(_ path: String) throws -> (config: Config, digest: String, warnings: [ConfigError]) {
        let text: String
        do {
            text = try readTextFile(path)
        } catch {
            standardError("\(path): \(error)")
            // No file at all is no input (EX_NOINPUT), not a configuration that is wrong: the
            // package's default path, or a --config mistyped.
            if access(path, F_OK) != 0, errno == ENOENT {
                standardError(
                    "beacond: no configuration at \(path); write one (docs/configuration.md, config/example.yaml) or give --config"
                )
                throw ExitCode(ExitStatus.noInput)
            }
            throw ExitCode(ExitStatus.config)
        }
        do {
            let (config, warnings) = try ConfigLoader.loadReporting(
                yaml: text, file: path, defaultGatewayID: hostName(),
                fileReadable: secretFileProblem, secretText: secretFileText, fileHead: fileHead)
            return (config, ConfigDigest.of(text), warnings)
        } catch {
            for e in error.errors { standardError(e.description) }
            throw ExitCode(ExitStatus.config)
        }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "beacond" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "beacond" : name
    }
}
