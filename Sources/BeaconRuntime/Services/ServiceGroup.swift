import BeaconConfig
import BeaconCore
import Dispatch
import Logging
import POSIX
import Synchronization

/// The daemon's services in start order: started one after another, stopped in reverse, each
/// stop waiting for the service's threads. What stops the group: `requestStop()` (SIGTERM) or
/// a service that ends on its own (`serviceEnded`, the input losing for good), whichever
/// comes first.
///
/// Made before the services (an input's end must be able to stop the group it is in), then
/// given them, once, in `start`.
public final class ServiceGroup: Sendable {
    private let services = Mutex<[any DaemonService & Sendable]>([])
    private let logger: Logger
    private let stopRequested = DispatchSemaphore(value: 0)
    private let started = Mutex<Int>(0)
    private let stopping = Atomic<Bool>(false)

    public init(logger: Logger) {
        self.logger = logger
    }

    /// The services' names in start order.
    public var names: [String] { services.withLock { $0.map(\.name) } }

    /// A list that starts a service before one it needs (`DaemonService.startsAfter`).
    public struct OrderError: Error, CustomStringConvertible {
        public var service: String
        public var needs: String
        public var description: String { "service \(service) starts before \(needs), which it needs running" }
    }

    /// Why `list` cannot be started in its order, or nil when every service comes after what
    /// it needs.
    public static func orderProblem(_ list: [any DaemonService]) -> OrderError? {
        let position = Dictionary(list.enumerated().map { ($1.name, $0) }) { first, _ in first }
        for (index, service) in list.enumerated() {
            for needed in service.startsAfter {
                if let at = position[needed], at > index { return OrderError(service: service.name, needs: needed) }
            }
        }
        return nil
    }

    /// Starts each in order. If one throws, those started are stopped (in reverse) and the
    /// error is rethrown; a list in the wrong order (`orderProblem`) starts nothing.
    public func start(_ list: [any DaemonService & Sendable]) throws {
        if let problem = Self.orderProblem(list) { throw problem }
        services.withLock { $0 = list }
        for (index, service) in list.enumerated() {
            do {
                try service.start()
            } catch {
                logger.error("service.start_failed", metadata: ["service": "\(service.name)", "error": "\(error)"])
                stopStarted()
                throw error
            }
            started.withLock { $0 = index + 1 }
            logger.debug("service.started", metadata: ["service": "\(service.name)"])
        }
    }

    /// Asks the group to stop: `waitForStopRequest` returns. Safe from any thread, any number
    /// of times.
    public func requestStop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stopRequested.signal()
    }

    /// A service whose work ended without being asked to: the daemon stops rather than run
    /// without it.
    public func serviceEnded(_ name: String) {
        guard !stopping.load(ordering: .acquiring) else { return }
        logger.warning("service.ended", metadata: ["service": "\(name)", "next": "stopping the daemon"])
        requestStop()
    }

    /// Blocks until `requestStop()`.
    public func waitForStopRequest() { stopRequested.wait() }

    /// Stops the services started, in reverse order, each after the one started after it.
    public func stop() { stopStarted() }

    /// Tells each service, in start order, its new settings; the metadata they return, merged.
    public func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for service in services.withLock({ $0 }) { metadata.merge(service.apply(reload, from: old)) { $1 } }
        return metadata
    }

    private func stopStarted() {
        let count = started.withLock { count in
            defer { count = 0 }
            return count
        }
        for service in services.withLock({ $0 }).prefix(count).reversed() {
            service.stop()
            logger.debug("service.stopped", metadata: ["service": "\(service.name)"])
        }
    }
}

/// The threads a service runs, and a wait for all of them to end (its `stop()`).
public final class ServiceThreads: Sendable {
    private let group = DispatchGroup()

    public init() {}

    /// Runs `body` on a thread of its own, named `name` (15 bytes at most: `top -H`).
    public func spawn(named name: String, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        detachThread(named: name) { [group] in
            body()
            group.leave()
        }
    }

    /// Blocks until every thread spawned so far has ended.
    public func join() { group.wait() }

    /// The same, for at most `wait`: false if a thread is still running then.
    public func join(within wait: TimeSpan) -> Bool {
        group.wait(timeout: .now() + .nanoseconds(Int(wait.nanoseconds))) == .success
    }
}
