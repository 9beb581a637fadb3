import Foundation
import Synchronization

/// Finds the project's executables and test resources from inside a test process.
public enum Executables {
    /// The package root (this file is Tests/TestSupport/Executables.swift).
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// An executable built next to the running test binary (`beacond`, `beaconctl`, `bluez-emitter`, …).
    public static func built(_ name: String) -> URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // The test binary may sit inside a .xctest bundle directory.
        while !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path), dir.path != "/" {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent(name)
    }

    /// The Python of scripts/python-tools' virtualenv: standardwebhooks, openapi-spec-validator
    /// and jsonschema, the tools the tests check beacond's conventions with.
    public static var toolsPython: String {
        let venv =
            ProcessInfo.processInfo.environment["BEACOND_TOOLS_VENV"]
            ?? packageRoot.appendingPathComponent(".build/tools-venv").path
        return venv + "/bin/python3"
    }

    /// A new empty directory under this test process's own temporary directory, which is
    /// removed when the process exits (so that test runs do not pile up in /tmp).
    public static func temporaryDirectory() throws -> URL {
        let dir = processDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// `beacond-test-PID` under the system's temporary directory, made on first use.
    static let processDirectory: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-test-\(getpid())")
        atexit { try? FileManager.default.removeItem(at: Executables.processDirectory) }
        return dir
    }()
}

/// The result of running a command to completion.
public struct CommandOutput: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs a command to completion and captures its output.
public func runCommand(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil
) throws -> CommandOutput {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.currentDirectoryURL = directory ?? Executables.packageRoot
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes concurrently so neither can fill up and block the child.
    let errData = Mutex<Data>(Data())
    let errReader = Thread { errData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
    errReader.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while errReader.isExecuting || !errReader.isFinished { usleep(1000) }
    return CommandOutput(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: errData.withLock { $0 }, as: UTF8.self))
}
