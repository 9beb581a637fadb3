import Foundation
import Synchronization

/// A private `dbus-daemon` with python-dbusmock's `bluez5` template playing bluetoothd on
/// it: the real D-Bus daemon and a real BlueZ object tree, no mock of our own code.
public final class PrivateBlueZ: @unchecked Sendable {
    public let address: String
    private let bus: Process
    private var mock: Process?
    static let support = Executables.packageRoot.appendingPathComponent("Tests/BlueZTests/Support")

    public init() throws {
        bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = [
            "--config-file=" + Self.support.appendingPathComponent("bus.conf").path, "--print-address=1", "--nofork",
        ]
        let out = Pipe()
        bus.standardOutput = out
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        var line = Data()
        let handle = out.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let b = byte.first, b != 0x0A else { break }
            line.append(b)
        }
        address = String(decoding: line, as: UTF8.self)
        guard address.hasPrefix("unix:") else { throw TestFailure("dbus-daemon printed no address") }
    }

    deinit {
        // SIGKILL: processes started from a test inherit its blocked signal mask, so SIGTERM
        // may never be delivered to them.
        stopBlueZ(hard: true)
        if let avahi {
            kill(avahi.processIdentifier, SIGKILL)
            avahi.waitUntilExit()
        }
        kill(bus.processIdentifier, SIGKILL)
        bus.waitUntilExit()
    }

    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        return env
    }

    /// Starts the bluez5 template (bluetoothd appears on the bus) and waits for its name.
    public func startBlueZ() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-m", "dbusmock", "--template", "bluez5", "--system"]
        p.environment = environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        mock = p
        try drive("wait")
    }

    /// Starts `bluez-emitter` (the benchmark's fast bluetoothd stand-in) in place of the
    /// template, and returns once it owns org.bluez.
    public func startEmitter(count: Int, trigger: String) throws {
        mock = try startReady(Executables.built("bluez-emitter"), ["--count", String(count), "--trigger", trigger])
    }

    /// Starts a stand-in on the bus and returns once it prints "ready" (its name is owned).
    private func startReady(_ executable: URL, _ arguments: [String]) throws -> Process {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        p.environment = environment
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        _ = out.fileHandleForReading.readData(ofLength: 6)  // "ready\n"
        return p
    }

    /// Starts Avahi's stand-in (Tests/BlueZTests/Support/avahi_mock.py) announcing `services`
    /// (JSON: name, type, host, address, port, txt), and returns once it owns its name.
    public func startAvahi(services: String) throws {
        let file = try Executables.temporaryDirectory().appendingPathComponent("services.json")
        try services.write(to: file, atomically: true, encoding: .utf8)
        avahi = try startReady(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [Self.support.appendingPathComponent("avahi_mock.py").path, file.path])
    }

    private var avahi: Process?

    /// Ends the template with `kill -9`, as a bluetoothd crash would.
    public func stopBlueZ(hard: Bool = true) {
        guard let p = mock else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        mock = nil
    }

    /// Runs `bluez_mock.py` with these arguments (see its usage) and returns its output.
    @discardableResult
    public func drive(_ arguments: String...) throws -> String {
        let out = try runCommand(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [Self.support.appendingPathComponent("bluez_mock.py").path] + arguments, environment: environment)
        guard out.status == 0 else { throw TestFailure("bluez_mock.py \(arguments): \(out.stderr)") }
        return out.stdout
    }

    /// The method names called on an adapter object, in order.
    public func calls(_ adapter: String) throws -> [String] {
        try drive("calls", adapter).split(separator: "\n").map(String.init)
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A running `beacond` whose standard output (events) and error (logs) are collected live.
public final class RunningDaemon: @unchecked Sendable {
    public let process = Process()
    private let stdoutLines = LineCollector()
    private let stderrLines = LineCollector()

    /// `launcher`: a system program and its arguments that exec the daemon (`/usr/bin/env`
    /// for preloaded libraries that must initialise in a process before ours, `prlimit`,
    /// `unshare`). Never a script a test has just written: a child another test forks at
    /// that moment holds its write descriptor, and exec fails with ETXTBSY.
    public init(
        arguments: [String], environment: [String: String], executable: String = "beacond", launcher: [String] = []
    ) throws {
        // A path is a program of the system's (a real Prometheus); a name is one of ours.
        let program = executable.hasPrefix("/") ? URL(fileURLWithPath: executable) : Executables.built(executable)
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = launcher.dropFirst() + [program.path] + arguments
        } else {
            process.executableURL = program
            process.arguments = arguments
        }
        process.environment = environment
        process.currentDirectoryURL = Executables.packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        Self.collect(out, into: stdoutLines)
        Self.collect(err, into: stderrLines)
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Lines from `pipe`, as they come, until it ends. The handler keeps the pipe (and so its
    /// descriptor) open until the end, and reads with `read(2)`: `availableData` traps on an
    /// error, and a descriptor closed under a handler still queued (the daemon object freed as
    /// a test ended) took a whole test process down with EBADF.
    static func collect(_ pipe: Pipe, into lines: LineCollector) {
        pipe.fileHandleForReading.readabilityHandler = { handle in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let n = read(handle.fileDescriptor, &buffer, buffer.count)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { return }
            guard n > 0 else {
                handle.readabilityHandler = nil
                lines.finish()
                _ = pipe
                return
            }
            lines.append(Data(buffer[0..<n]))
        }
    }

    public var events: [String] { stdoutLines.lines }
    public var logs: [String] { stderrLines.lines }
    /// Events with the wall-clock time each reached this process.
    public var timedEvents: [(line: String, arrived: Date)] { stdoutLines.timedLines }

    /// Waits (up to `timeout` seconds) until `condition` holds for the collected output.
    /// A deadline, not a guess: it returns as soon as the condition is true.
    public func waitUntil(
        _ what: String, timeout: Double = 10, _ condition: (_ events: [String], _ logs: [String]) -> Bool
    ) throws {
        try eventually(
            what, timeout: timeout,
            detail: { "\nevents:\n\(self.events.joined(separator: "\n"))\nlogs:\n\(self.logs.joined(separator: "\n"))" }
        ) { condition(events, logs) }
    }

    /// SIGTERM, then the exit status (SIGKILL after 10 s, which fails the caller's check).
    public func stop() -> Int32 {
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // Every line the daemon wrote is in once both pipes have reached their end.
        stdoutLines.waitUntilFinished()
        stderrLines.waitUntilFinished()
        return process.terminationStatus
    }
}

/// Splits a byte stream into lines, from any thread.
/// Splits a byte stream into lines, from any thread, noting when each line arrived.
final class LineCollector: Sendable {
    private let state = Mutex<(partial: Data, lines: [String], arrivals: [Date])>((Data(), [], []))

    func append(_ data: Data) {
        let now = Date()
        state.withLock { s in
            s.partial.append(data)
            while let newline = s.partial.firstIndex(of: 0x0A) {
                s.lines.append(String(decoding: s.partial[s.partial.startIndex..<newline], as: UTF8.self))
                s.arrivals.append(now)
                s.partial.removeSubrange(s.partial.startIndex...newline)
            }
        }
    }

    private let ended = DispatchSemaphore(value: 0)

    /// The pipe reached its end: nothing more will come.
    func finish() { ended.signal() }

    /// Waits (at most 5 s: a child that inherited the pipe may hold it open) for the end.
    func waitUntilFinished() {
        if ended.wait(timeout: .now() + 5) == .success { ended.signal() }
    }

    var lines: [String] { state.withLock { $0.lines } }
    var timedLines: [(line: String, arrived: Date)] { state.withLock { Array(zip($0.lines, $0.arrivals)) } }
}
