import BeaconConfig
import BeaconCore
import BeaconRuntime
import BlueZ
import Dispatch
import Foundation
import Storage
import Synchronization

/// `beacond --config PATH`: wires BlueZ, the engine and the outputs, and runs until SIGTERM
/// or SIGINT. Until the API and webhooks exist, events go to standard output as CloudEvents
/// JSON Lines and logs to standard error.
struct LiveDaemon {
    let config: Config

    func run() {
        let ids = Mutex(EventIDGenerator(nonce: UInt32.random(in: .min ... .max)))
        let gateway = config.gateway.id
        let store = openStore()
        var core = BeaconEngine(configuration: config.engineConfiguration, start: WallClock.now())
        if let store { restoreRegions(from: store, into: &core) }
        let storeFailed = Atomic<Bool>(false)
        let engine = LiveEngine(
            engine: core, clock: WallClock.now,
            publish: { events in
                var stored: [StateStore.StoredEvent] = []
                var text = ""
                for event in events {
                    let id = ids.withLock { $0.next(for: event.time) }
                    let json = CloudEvent.json(event, id: id, gatewayID: gateway).serialized
                    stored.append(.init(id: id, type: "beacond." + event.payload.kind, time: event.time, body: json))
                    text += json
                    text += "\n"
                }
                // Durable first, then shown.
                do {
                    try store?.append(stored)
                } catch {
                    if !storeFailed.exchange(true, ordering: .relaxed) {
                        standardError("error: state.write_failed error=\(error) next=events are not kept")
                    }
                }
                writeAll(fd: 1, text)
            },
            persist: { snapshots in
                do {
                    try store?.saveRegions(snapshots)
                } catch {
                    if !storeFailed.exchange(true, ordering: .relaxed) {
                        standardError("error: state.write_failed error=\(error) next=region states are not kept")
                    }
                }
            })
        let scanner = BlueZScanner(
            settings: ScannerSettings(
                adapters: config.bluetooth.adapters.map(Set.init), minRSSI: config.bluetooth.minRSSI,
                passive: config.bluetooth.scan == .passive, silenceRestart: config.bluetooth.silenceRestart,
                deviceTTL: config.bluetooth.deviceTTL),
            clock: WallClock.now,
            output: { output in
                switch output {
                case let .sightings(batch): engine.submit(.sightings(batch))
                case let .adapter(status, t): engine.submit(.external(Event(time: t, payload: status.event)))
                }
            },
            log: { record in standardError("\(record.level.rawValue): \(record.text)") })

        let finished = DispatchGroup()
        // Shutdown runs in order: the scanner stops and hands over its last batch, then the
        // engine takes a final turn and saves region states, so nothing heard is dropped.
        let bodies: [@Sendable () -> Void] = [
            { engine.run() },
            {
                scanner.run()
                engine.stop()
            },
        ]
        for body in bodies {
            finished.enter()
            Thread.detachNewThread {
                body()
                finished.leave()
            }
        }
        // A parent (a test harness, a badly written supervisor) may hand us a blocked signal
        // mask; a daemon that cannot hear SIGTERM cannot flush and stop cleanly.
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&mask, number) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        let signals = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                standardError("info: beacond.stopping signal=\(number)")
                scanner.stop()
            }
            source.resume()
            return source
        }
        standardError("info: beacond.started gateway=\(gateway) version=\(BeaconVersion.string)")
        finished.wait()
        signals.forEach { $0.cancel() }
        let c = engine.counters
        standardError(
            "info: engine.summary sightings=\(c.sightings) decoded=\(c.decode.decoded) beacons=\(engine.beaconCount) "
                + "not_beacons=\(c.decode.totalNonMatches) without_identity=\(c.framesWithoutIdentity) "
                + "dbus_signals=\(scanner.signalsReceived.load(ordering: .relaxed))")
        standardError("info: beacond.stopped")
    }
}

extension LiveDaemon {
    /// The state store under `gateway.state_dir`; without it the daemon still runs, and says
    /// that a restart will forget region states.
    func openStore() -> StateStore? {
        do {
            return try StateStore(directory: config.gateway.stateDir)
        } catch {
            standardError(
                "warning: state.unavailable dir=\(config.gateway.stateDir) error=\(error) next=running without saved state"
            )
            return nil
        }
    }

    /// Puts back the region states saved before a restart: no second enter for a region that
    /// stayed inside, an exit dated from the last sighting for one whose beacons left.
    func restoreRegions(from store: StateStore, into engine: inout BeaconEngine) {
        do {
            let (snapshots, skipped) = try store.loadRegions()
            let restored = snapshots.filter { engine.restore($0) }.count
            standardError(
                "info: state.restored regions=\(restored) redefined_or_gone=\(snapshots.count - restored) unreadable=\(skipped)"
            )
        } catch {
            standardError("warning: state.unreadable error=\(error) next=regions start unknown")
        }
    }
}

/// `CLOCK_REALTIME` as a `Timestamp`: the production clock. Event times are wall-clock
/// times; timer waits are computed from differences, so a small step of the clock moves
/// deadlines with it rather than firing everything at once.
enum WallClock {
    @Sendable static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}
