import CLinux
import Glibc

/// Starts `body` on a new detached POSIX thread. The daemon's long-lived loops (scanner,
/// engine, API server, each webhook) block in the kernel, so they get threads of their own
/// rather than places in a shared pool; Foundation's `Thread` is not needed for that.
/// `name` (at most 15 bytes are kept) is what `top -H`, `ps -T` and /proc show for it.
public func detachThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Box: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let named: @Sendable () -> Void = {
        if let name { _ = clinux_set_thread_name(String(name.utf8.prefix(15)) ?? "beacond") }
        body()
    }
    let context = Unmanaged.passRetained(Box(named)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(
        &thread, nil,
        { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, context)
    precondition(started == 0, "pthread_create failed: \(started)")
    pthread_detach(thread)
}
