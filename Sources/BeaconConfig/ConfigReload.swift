import BeaconCore

/// What a reload (SIGHUP) makes of a new file while the daemon runs on an old one: most
/// settings apply in place, a few only at the next start. Kept here, beside the `Config` it
/// compares, so that the daemon and the fuzzer's reload leg apply a reload the same way.
///
/// What waits for a restart is what the running process is built on: the gateway's id (the
/// `source` of every event, the name its history and outboxes were written under), the state
/// directory (the open state file) and the API's socket (what every client and the systemd
/// unit connect to). The log level and the API's admin group apply at once: an operator
/// turning on debug logging to look at a live fault, or taking someone's write access away,
/// should not have to restart the daemon and lose its ranging and positions to do it.
public struct ConfigReload: Sendable, Equatable {
    /// The configuration to run from now on: the new file, with the settings that need a
    /// restart kept as they were.
    public let running: Config
    /// Settings that changed but keep their old values until a restart (`gateway.id`,
    /// `gateway.state_dir`, `api.socket`, `site`), for the log and `/v1/status`.
    public let needsRestart: [String]

    public init(from old: Config, to new: Config) {
        var running = new
        var needsRestart: [String] = []
        func keep<T: Equatable>(_ key: String, _ path: WritableKeyPath<Config, T>) {
            guard new[keyPath: path] != old[keyPath: path] else { return }
            needsRestart.append(key)
            running[keyPath: path] = old[keyPath: path]
        }
        keep("gateway.id", \.gateway.id)
        keep("gateway.state_dir", \.gateway.stateDir)
        keep("api.socket", \.api.socket)
        // The listener is bound once, at start, like the API's socket.
        keep("http", \.http)
        // The broker connection, its will and the election are made once, at start.
        keep("site", \.site)
        // The engine's threads are started once, with the engine.
        keep("engine.threads", \.engine)
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
        summary.siteReplaced = reconfigureSite(
            new.siteModel, calibrations: new.engineConfiguration.receivers, at: t, events: &events)
        return (events, summary)
    }
}
