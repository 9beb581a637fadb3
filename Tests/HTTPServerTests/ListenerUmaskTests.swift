import Foundation
import Synchronization
import Testing

@testable import HTTPServer

/// The API socket is made `mode` without touching the process's umask: the umask is the
/// whole process's, and a thread that made a directory while it was narrowed got one without
/// its search bit (found 2026-12-07: a test process's temporary directory came out 0660 and
/// every later test there that connected as another user failed). Watched from another
/// thread through `/proc/self/status` while the listener binds a few thousand times; the
/// binding thread's own umask is checked after each too.
@Suite struct ListenerUmaskTests {
    static func umask() -> String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map(String.init)
    }

    @Test func bindingTheSocketLeavesTheUmaskAlone() throws {
        let before = try #require(Self.umask(), "no Umask: in /proc/self/status")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "umask-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("api.sock").path
        let done = Atomic<Bool>(false)
        let seen = Mutex<Set<String>>([])
        let watcher = Thread {
            while !done.load(ordering: .relaxed) {
                if let now = Self.umask() { _ = seen.withLock { $0.insert(now) } }
            }
        }
        watcher.start()
        for _ in 0..<3000 {
            let fd = try UnixListener.listen(path: path, mode: 0o660)
            close(fd)
            unlink(path)
        }
        done.store(true, ordering: .relaxed)
        usleep(50_000)
        #expect(seen.withLock { $0 } == [before], "the umask seen while binding: \(seen.withLock { $0 })")
        #expect(Self.umask() == before)
        // And the socket is still made with exactly its mode.
        let fd = try UnixListener.listen(path: path, mode: 0o660)
        defer { close(fd) }
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o660)
    }
}
