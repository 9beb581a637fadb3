import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import POSIX
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

enum BeaconVersion {
    static let string = "0.1.0"
}

/// sysexits.h values the daemon promises (SPEC §5).
enum ExitStatus {
    static let noInput: Int32 = 66
    static let unavailable: Int32 = 69
    static let config: Int32 = 78
}

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

func standardError(_ line: String) {
    var text = line
    text += "\n"
    writeAll(fd: 2, text)
}

/// Buffers standard output so a replay of millions of events is not one write per line.
struct OutputBuffer {
    private var pending = ""
    /// Standard output unless given.
    let fd: Int32

    init(fd: Int32 = 1) { self.fd = fd }

    mutating func write(_ line: String) {
        pending += line
        pending += "\n"
        if pending.utf8.count >= 64 * 1024 { flush() }
    }

    mutating func flush() {
        guard !pending.isEmpty else { return }
        writeAll(fd: fd, pending)
        pending = ""
    }
}

/// A running total (sightings shed, beacons evicted) told in the log as it grows: at once,
/// then at most once a minute with the sum since (`LogSummary`).
final class RunningTotalLog: Sendable {
    private let state = Mutex((told: 0, summary: LogSummary()))

    func report(total: Int, at t: Timestamp) -> LogSummary.Report? {
        state.withLock { s in
            defer { s.told = total }
            return s.summary.add(total - s.told, at: t)
        }
    }
}
