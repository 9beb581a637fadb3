import API
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logs
import POSIX
import Publishing
import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The API as the daemon assembles it, once per fuzzing process: the fuzz site's engine on
/// its own thread, a state store in a new temporary directory, no webhooks.
enum FuzzAPI {
    /// Where the state store lives; removed when the process exits.
    static let directory: String = {
        var template = Array("/tmp/beacond-fuzz-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { fatalError("mkdtemp failed") }
        atexit {
            for name in ["beacond.sqlite", "beacond.sqlite-wal", "beacond.sqlite-shm"] {
                unlink(FuzzAPI.directory + "/" + name)
            }
            rmdir(FuzzAPI.directory)
        }
        return String(cString: dir)
    }()

    static let router: APIRouter = {
        let store = try? StateStore(directory: directory)
        let config = FuzzSite.config
        let publisher = EventPublisher(
            gateway: config.gateway.id, store: store, workers: [], echo: false, clock: now, logger: .silent)
        let engine = LiveEngine(
            engine: BeaconEngine(configuration: config.engineConfiguration, start: now()), clock: now,
            publish: { publisher.publish($0) })
        detachThread { engine.run() }
        let context = APIContext(
            configuration: { config }, version: "fuzz", started: now(), engine: engine, store: store,
            publisher: publisher, runtime: { RuntimeStatus() }, errors: RecentErrors(), clock: now,
            ingest: { engine.submit(.sightings($0)) })
        return APIRouter(context: context, stream: EventStreamHub(store: store))
    }()

    @Sendable static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }
}
