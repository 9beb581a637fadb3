import BeaconConfig
import Logging

/// A long-lived part of the daemon (the radio input, the engine's loop, the webhooks, the API,
/// systemd's notices): built with what it needs passed in, then started, told of new settings,
/// and stopped by a `ServiceGroup`, which knows the order and nothing else.
///
/// Taken from the shape of swift-service-lifecycle's `ServiceGroup` (start in order, stop in
/// reverse, one service ending ends them all), on threads rather than tasks: each service
/// owns the threads it starts, and `stop()` returns only once they have ended, so the next
/// service in the stop order may count on it (the engine saves what the input handed over).
public protocol DaemonService: AnyObject {
    /// For the log (`service.started name=…`).
    var name: String { get }
    /// The services this one needs running when it starts, and still running when it stops
    /// (by name; those not in the daemon's list, such as the site's without `site:`, are
    /// ignored). `ServiceGroup.start` refuses a list that starts one before what it needs:
    /// the order is declared here, not implied by list position.
    var startsAfter: [String] { get }
    /// Begins serving: returns once the service can be relied on (its socket listens, its
    /// thread runs). A throw stops the daemon's start; the services started before it are
    /// stopped, in reverse order.
    func start() throws
    /// Ends serving: returns once the service's threads have ended and what it holds is
    /// handed on or saved.
    func stop()
    /// A reload's new settings, in place (`ConfigReload.running`; `old` is what ran before).
    /// Returns what it did, for the `config.reloaded` line.
    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata
}

extension DaemonService {
    public func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata { [:] }
    public var startsAfter: [String] { [] }
}
