import API
import ArgumentParser
import BeaconConfig
import BeaconRuntime
import HTTPServer
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The Unix-socket API (`HTTPServer` with `APIRouter`) on its own thread. Started first, so
/// that it answers while the rest starts, and stopped last, so that `beaconctl` sees the stop
/// through. A socket that cannot be bound stops the start (exit 69).
final class APIService: DaemonService, Sendable {
    let name: String
    /// The TCP listener counts the socket's connections in its answers.
    var startsAfter: [String] { name == "http" ? ["api"] : [] }
    let server: HTTPServer
    private let socket: String
    private let logger: Logger
    private let threads = ServiceThreads()

    init(router: APIRouter, socket: String, logger: Logger) {
        name = "api"
        self.socket = socket
        self.logger = logger
        server = router.server(HTTPServer.Settings(socketPath: socket))
    }

    /// The read-only TCP listener (`http:`): the same answers, behind `gate`, on a server and
    /// thread of its own, so that its clients (a thousand idle ones, a slow dashboard) cannot
    /// hold up the socket's. Its connections are counted in `/metrics` apart from the socket's.
    init(listening http: HTTPListenSettings, router: APIRouter, gate: ReadOnlyGate, logger: Logger) {
        socket = "\(http.host):\(http.port)"
        self.logger = logger
        name = "http"
        server = router.server(HTTPServer.Settings(tcpHost: http.host, port: http.port)) { request in
            gate.refusal(request, router: router)
        }
    }

    func start() throws {
        do {
            try server.start()
        } catch {
            var metadata: Logger.Metadata = ["socket": "\(socket)", "error": "\(error)"]
            if "\(error)".contains("Permission denied") { metadata["next"] = "\(Self.permissionHint(socket: socket))" }
            logger.error("api.unavailable", metadata: metadata)
            throw ExitCode(ExitStatus.unavailable)
        }
        threads.spawn(named: name == "api" ? "beacond-api" : "beacond-http") { [server] in server.run() }
        logger.info(name == "api" ? "api.listening" : "http.listening", metadata: ["socket": "\(socket)"])
    }

    /// What a user other than root does when the socket's directory is not theirs (the
    /// packaged paths under /run and /var/lib are made by systemd for the beacond user).
    static func permissionHint(socket: String) -> String {
        let user = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "uid \(geteuid())"
        return "\(user) may not create \(socket): run as root or as the beacond user (the unit does), or give "
            + "api.socket and gateway.state_dir paths \(user) can write; ./scripts/run-example puts both in a "
            + "temporary directory"
    }

    func stop() {
        server.stop()
        threads.join()
    }
}
