import Foundation
import Synchronization

/// A minimal Debian 12 booted with systemd as its init under `systemd-nspawn`: the gateway an
/// operator installs the package on, with a real service manager, journal and D-Bus, so the
/// unit meets what `systemd-analyze verify` cannot show (a program the unit names but the
/// system lacks, a restart policy that does not apply to the step that fails).
///
/// The root file system is built once by `scripts/booted-debian` (debootstrap's minbase from
/// Debian's packages, cached under `.build/`); each boot runs on a throw-away copy of it
/// (`--ephemeral`), so nothing a test installs outlives the boot. The container shares the
/// host's network: the host's loopback is the gateway's, so a receiver the test starts there
/// is "a webhook receiver on the gateway itself". Commands run inside through `nsenter` into
/// its init's namespaces (no machined is needed on the host). Needs root.
public final class BootedDebian: @unchecked Sendable {
    public let name: String
    /// What systemd-nspawn printed (the container's console is passive: its own messages only).
    public let log: URL
    private let nspawn = Process()
    private let leader: Int32
    private let stopped = Mutex(false)
    private static let count = Atomic<Int>(0)

    /// The cached root file system, built on first use (about 40 s, 212 MB).
    public static func rootFileSystem() throws -> String {
        let made = try runCommand(
            URL(fileURLWithPath: "/bin/bash"),
            [Executables.packageRoot.appendingPathComponent("scripts/booted-debian").path])
        guard made.status == 0 else { throw TestFailure("scripts/booted-debian: \(made.stderr)") }
        return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Boots a copy of the root file system with `binds` (host path → path inside) bound read-only,
    /// and waits until systemd says the boot is over.
    public init(binds: [(host: String, inside: String)] = []) throws {
        let rootfs = try Self.rootFileSystem()
        name = "beacond-\(getpid())-\(Self.count.add(1, ordering: .relaxed).newValue)"
        log = try Executables.temporaryDirectory().appendingPathComponent("nspawn.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        nspawn.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-nspawn")
        nspawn.arguments =
            [
                "--quiet", "--ephemeral", "--boot", "--directory=\(rootfs)", "--machine=\(name)",
                "--register=no", "--keep-unit", "--console=passive",
            ] + binds.map { "--bind-ro=\($0.host):\($0.inside)" }
        let output = try FileHandle(forWritingTo: log)
        nspawn.standardOutput = output
        nspawn.standardError = output
        nspawn.standardInput = FileHandle.nullDevice
        try nspawn.run()
        // The container's init is systemd-nspawn's child once it has become systemd (a
        // short-lived helper comes first).
        var found: Int32?
        let deadline = Date().addingTimeInterval(30)
        while found == nil, Date() < deadline, nspawn.isRunning {
            let pid = nspawn.processIdentifier
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            found = children.split(separator: " ").compactMap { Int32($0) }.first { child in
                (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) == "systemd\n"
            }
            if found == nil { usleep(20_000) }
        }
        guard let found else {
            nspawn.terminate()
            throw TestFailure("systemd-nspawn did not start a container: \(Self.text(of: log))")
        }
        leader = found
        var state = ""
        let booted = Date().addingTimeInterval(60)
        while Date() < booted {
            let asked = try run("systemctl is-system-running --wait")
            state = (asked.stdout + asked.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
            if state == "running" || state == "degraded" { return }
            usleep(100_000)
        }
        shutDown()
        throw TestFailure("the container did not finish booting (\(state)): \(Self.text(of: log))")
    }

    /// A shell command inside the container, as root, to completion.
    @discardableResult
    public func run(_ script: String) throws -> CommandOutput {
        try runCommand(
            URL(fileURLWithPath: "/usr/bin/nsenter"),
            [
                "--target=\(leader)", "--mount", "--uts", "--ipc", "--net", "--pid", "--cgroup", "--root", "--wd", "--",
                "/bin/sh", "-c", script,
            ],
            environment: [
                "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
                "SYSTEMD_PAGER": "",
            ])
    }

    /// A file inside the container, written whole.
    public func write(_ text: String, to path: String) throws {
        let staged = try Executables.temporaryDirectory().appendingPathComponent("file")
        try text.write(to: staged, atomically: true, encoding: .utf8)
        let copied = try runCommand(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "cat '\(staged.path)' > /proc/\(leader)/root\(path)"])
        guard copied.status == 0 else { throw TestFailure("writing \(path) in the container: \(copied.stderr)") }
    }

    /// A unit's properties (`systemctl show`), by name.
    public func properties(_ unit: String, _ names: [String]) throws -> [String: String] {
        let shown = try run("systemctl show \(unit) --property=\(names.joined(separator: ","))").stdout
        var out: [String: String] = [:]
        for line in shown.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            out[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return out
    }

    /// Polls until `condition` holds (an answer from inside the container), for at most `seconds`.
    public func waitUntil(_ what: String, seconds: Double = 20, _ condition: () throws -> Bool) throws {
        try eventually(what, timeout: seconds, every: 0.1, condition)
    }

    /// Halts the container (SIGTERM to systemd-nspawn is a clean poweroff) and, if it has not
    /// gone within 20 s, kills it. The ephemeral copy goes with it.
    public func shutDown() {
        guard
            stopped.withLock({
                let was = $0; $0 = true; return !was
            })
        else { return }
        guard nspawn.isRunning else { return }
        nspawn.terminate()
        let deadline = Date().addingTimeInterval(20)
        while nspawn.isRunning, Date() < deadline { usleep(50_000) }
        if nspawn.isRunning {
            // Killed outright, systemd-nspawn would leave the container's init running.
            kill(leader, SIGKILL)
            kill(nspawn.processIdentifier, SIGKILL)
        }
        nspawn.waitUntilExit()
    }

    deinit { shutDown() }

    static func text(of file: URL) -> String {
        (try? String(contentsOf: file, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
    }
}
