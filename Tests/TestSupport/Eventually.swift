import Foundation

/// Waits until `condition` holds, looking every `every` seconds, and fails with `what` after
/// `timeout` seconds, adding `detail()` (what was seen instead). The one way the tests wait
/// for another thread or process: a condition, not a fixed sleep, so a fast machine does not
/// wait and a slow one does not flake.
public func eventually(
    _ what: String, timeout: Double = 10, every: Double = 0.02, detail: () -> String = { "" },
    _ condition: () throws -> Bool
) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() >= deadline {
            let seen = detail()
            throw TestFailure("timed out waiting for \(what)" + (seen.isEmpty ? "" : "; \(seen)"))
        }
        usleep(useconds_t(every * 1_000_000))
    }
}

/// Checks that `condition` keeps holding for `seconds`: what must not happen, given the time
/// it would take to happen. Fails with `what` at the first look where it does not hold.
public func stays(_ what: String, for seconds: Double, every: Double = 0.05, _ condition: () throws -> Bool) throws {
    let end = Date().addingTimeInterval(seconds)
    repeat {
        if try !condition() { throw TestFailure("\(what) stopped holding") }
        usleep(useconds_t(every * 1_000_000))
    } while Date() < end
}
