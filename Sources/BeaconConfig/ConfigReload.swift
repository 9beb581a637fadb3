import BeaconCore

/// What a reload (SIGHUP) makes of a new file while the daemon runs on an old one: some
/// sections apply in place, others only at the next start. Kept here, beside the `Config` it
/// compares, so that the daemon and the fuzzer's reload leg apply a reload the same way.
public struct ConfigReload: Sendable, Equatable {
    /// The configuration to run from now on: the new file, with the sections that need a
    /// restart kept as they were.
    public let running: Config
    /// Sections that changed but keep their old values until a restart, for the log.
    public let needsRestart: [String]

    public init(from old: Config, to new: Config) {
        var running = new
        var needsRestart: [String] = []
        if new.gateway != old.gateway {
            needsRestart.append("gateway")
            running.gateway = old.gateway
        }
        if new.api != old.api {
            needsRestart.append("api")
            running.api = old.api
        }
        self.running = running
        self.needsRestart = needsRestart
    }
}

extension BeaconEngine {
    /// Applies a reload to an engine running on `old`: monitoring settings, the file's
    /// regions, and the site (receivers, assets, zones, alarms, positioning), each keeping the
    /// state of what did not change. Returns the events it caused and what changed.
    public mutating func apply(_ reload: ConfigReload, from old: Config, at t: Timestamp)
        -> (events: [Event], summary: ReloadSummary)
    {
        let new = reload.running
        if new.monitoring != old.monitoring { updateMonitoring(new.monitoring) }
        var (events, summary) = reconfigureRegions(from: old.clients, to: new.clients, at: t)
        summary.siteReplaced = reconfigureSite(new.site, calibrations: new.engineConfiguration.receivers, at: t)
        return (events, summary)
    }
}
