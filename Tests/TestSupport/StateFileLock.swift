import Foundation
import Synchronization

/// Another process holding a state file's write lock, as an operator's `sqlite3` shell with a
/// transaction open does: every write to the file fails until `release()`, whatever the file's
/// pages or the disk's free space. A test of what a failed write does uses it where a full disk
/// would decide by luck — on a full tmpfs a commit of a few small pages can still land in the
/// write-ahead log's last block, which is already allocated.
/// `release()` may come from another thread (a timer letting go while a write waits); it acts
/// once, under `released`, which is what makes the class safe to share.
public final class StateFileLock: @unchecked Sendable {
    static let script = """
        import sqlite3, sys
        c = sqlite3.connect(sys.argv[1], isolation_level=None)
        c.execute("BEGIN EXCLUSIVE")
        print("locked", flush=True)
        sys.stdin.read()
        c.execute("ROLLBACK")
        """

    let process = Process()
    let input = Pipe()
    private let released = Mutex(false)

    /// Returns once the lock on the SQLite file at `path` is held.
    public init(path: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.script, path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard said.hasPrefix("locked") else {
            release()
            throw LockError(said: said)
        }
    }

    /// Lets go of the lock and waits until the holder has gone; later calls do nothing.
    public func release() {
        released.withLock { done in
            guard !done else { return }
            done = true
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    deinit { if process.isRunning { process.terminate() } }

    struct LockError: Error, CustomStringConvertible {
        var said: String
        var description: String { "the lock was not taken: \(said)" }
    }
}
