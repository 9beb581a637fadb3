import Foundation
import TestSupport
import Testing

/// One of the floor view's watching scripts (`Tests/DaemonTests/Support/floor_*.py`) run on a
/// thread of its own against a daemon's page, while the test acts on the daemon: the script
/// writes `ready` once the page is live, and prints what it saw as one JSON object.
final class FloorViewWatch: @unchecked Sendable {
    let ready: URL
    private let done = DispatchSemaphore(value: 0)
    /// Written by the script's thread before `done` is signalled, read after.
    private var output: CommandOutput?

    init(_ script: String, port: Int, daemon d: APIDaemon, arguments: [String]) {
        ready = d.dir.appendingPathComponent("page-live")
        let path = Executables.packageRoot.appendingPathComponent("Tests/DaemonTests/Support/\(script)").path
        let ready = ready
        Thread { [self] in
            output = try? runCommand(
                URL(fileURLWithPath: "/usr/bin/python3"), [path, "http://127.0.0.1:\(port)/", ready.path] + arguments,
                environment: ["PATH": "/usr/bin:/bin", "HOME": d.dir.path])
            done.signal()
        }.start()
    }

    /// Whether the script has finished, waiting at most `seconds`.
    func finished(within seconds: Double) -> Bool { done.wait(timeout: .now() + seconds) == .success }

    /// What it printed (empty before it finished, or when it printed nothing readable).
    var seen: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data((output?.stdout ?? "").utf8))) as? [String: Any] ?? [:]
    }

    /// Whether it saw what it waited for, and its whole output for a failure's message.
    var succeeded: Bool { output?.status == 0 && seen["failed"] == nil }
    var transcript: String { (output?.stdout ?? "") + (output?.stderr ?? "") }
}
