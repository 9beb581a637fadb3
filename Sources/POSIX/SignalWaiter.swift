import Glibc

/// The daemon's signals, taken by a thread of its own waiting in `sigwait(2)` rather than by
/// dispatch sources. A dispatch source starts libdispatch's manager thread at the
/// user-initiated QoS, which libdispatch renices to -4; a daemon without `CAP_SYS_NICE` may
/// not, and libdispatch says so in the journal at every start ("Failed to set thread priority
/// for worker thread"). Blocked from the start, a signal that arrives before anything listens
/// waits for the waiter instead of killing the process with its default action.
public final class SignalWaiter: Sendable {
    private let signals: [Int32]

    /// Blocks `signals` in the calling thread, and so in every thread started from it later
    /// (libdispatch's own threads block every signal): made before the daemon starts any thread,
    /// no other thread can take them. Their actions are reset to the default, since a parent
    /// may have set one to be ignored (`nohup`), and an ignored signal is never waited for.
    public init(_ signals: [Int32]) {
        self.signals = signals
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals {
            sigaddset(&mask, number)
            signal(number, SIG_DFL)
        }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    /// Starts the waiting thread, which calls `handler` for each signal as it arrives, one at
    /// a time, for the rest of the process's life.
    public func start(named name: String, _ handler: @escaping @Sendable (Int32) -> Void) {
        let signals = signals
        detachThread(named: name) {
            var mask = sigset_t()
            sigemptyset(&mask)
            for number in signals { sigaddset(&mask, number) }
            while true {
                var number: Int32 = 0
                guard sigwait(&mask, &number) == 0 else { continue }
                handler(number)
            }
        }
    }
}
