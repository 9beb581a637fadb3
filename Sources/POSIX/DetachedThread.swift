import Glibc

/// Starts `body` on a new detached POSIX thread. The daemon's long-lived loops (scanner,
/// engine, API server, each webhook) block in the kernel, so they get threads of their own
/// rather than places in a shared pool; Foundation's `Thread` is not needed for that.
public func detachThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
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
