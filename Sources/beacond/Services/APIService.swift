import API
import ArgumentParser
import BeaconRuntime
import HTTPServer
import Logging

/// The Unix-socket API (`HTTPServer` with `APIRouter`) on its own thread. Started first, so
/// that it answers while the rest starts, and stopped last, so that `beaconctl` sees the stop
/// through. A socket that cannot be bound stops the start (exit 69).
final class APIService: DaemonService, @unchecked Sendable {
    let name = "api"
    let server: HTTPServer
    private let socket: String
    private let logger: Logger
    private let threads = ServiceThreads()

    init(router: APIRouter, socket: String, logger: Logger) {
        self.socket = socket
        self.logger = logger
        server = HTTPServer(settings: HTTPServer.Settings(socketPath: socket), handler: router.handle)
        router.attach(server)
    }

    func start() throws {
        do {
            try server.start()
        } catch {
            logger.error("api.unavailable", metadata: ["socket": "\(socket)", "error": "\(error)"])
            throw ExitCode(ExitStatus.unavailable)
        }
        threads.spawn(named: "beacond-api") { [server] in server.run() }
        logger.info("api.listening", metadata: ["socket": "\(socket)"])
    }

    func stop() {
        server.stop()
        threads.join()
    }
}
