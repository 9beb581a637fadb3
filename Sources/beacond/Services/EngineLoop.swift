import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging

/// The engine's own thread (`LiveEngine.run`): batches in, timers fired, events out. Stopped
/// after the input, so that it takes the input's last batch, makes its final turn and saves
/// region and zone states before the outputs stop.
final class EngineLoop: DaemonService, Sendable {
    let name = "engine"
    /// Its final turn's events are stored, and delivered, by the outputs after it stops.
    let startsAfter = ["webhooks", "held-events"]
    let engine: LiveEngine
    private let threads = ServiceThreads()
    private let maxIdleWait: TimeSpan
    private let onTurn: @Sendable (LiveEngine, Timestamp) -> Void

    /// `onTurn` runs on the engine's thread after every turn (the watchdog, held events, the
    /// running totals); `maxIdleWait` is shorter under a fast watchdog.
    init(
        engine: LiveEngine, maxIdleWait: TimeSpan?, onTurn: @escaping @Sendable (LiveEngine, Timestamp) -> Void
    ) {
        self.engine = engine
        self.maxIdleWait = maxIdleWait ?? .seconds(1)
        self.onTurn = onTurn
    }

    /// The live engine's hooks: time since boot, and each step of the wall clock logged.
    static func hooks(logger: Logger) -> LiveEngine.Hooks {
        LiveEngine.Hooks(elapsed: BootClock.elapsed) { step in
            logger.warning(
                "clock.step",
                metadata: [
                    "by_s": "\(Int(step.seconds.rounded()))",
                    "next": "not taken as time passing: region, dwell and asset timers moved with the clock",
                ])
        }
    }

    func start() throws {
        threads.spawn(named: "beacond-engine") { [engine, maxIdleWait, onTurn] in
            engine.run(maxIdleWait: maxIdleWait) { t in onTurn(engine, t) }
        }
    }

    func stop() {
        engine.stop()
        threads.join()
    }

    /// Regions, monitoring, assets, zones and alarms, in place on the engine's thread.
    func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
        let summary = engine.perform { e, now in
            let applied = e.apply(reload, from: old, at: now)
            return (applied.summary, applied.events)
        }
        return [
            "regions_added": "\(summary?.added ?? 0)", "regions_replaced": "\(summary?.replaced ?? 0)",
            "regions_removed": "\(summary?.removed ?? 0)", "regions_unchanged": "\(summary?.unchanged ?? 0)",
            "site": "\(summary?.siteReplaced == true ? "replaced" : "unchanged")",
        ]
    }
}
