import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

/// Issue 38 #10: 100 clients that asked for a 12 MiB floor plan and never read it took the
/// daemon's RSS from 21 to 1,261 MiB; 200 streams that stopped reading, to 840 MiB. One
/// budget holds every answer and stream queued on a server's connections.
@Suite struct OutputBudgetTests {
    final class StreamList: Sendable {
        let ids = Mutex<[StreamID]>([])
    }

    static func server(_ budget: Int, streams: StreamList? = nil) throws -> HTTPServer {
        let dir = try Executables.temporaryDirectory()
        var settings = HTTPServer.Settings(socketPath: dir.appendingPathComponent("s.sock").path)
        settings.maxQueuedOutputBytes = budget
        settings.streamBufferLimit = budget
        let plan = [UInt8](repeating: 0x50, count: 4 << 20)
        let server = HTTPServer(settings: settings) { request in
            guard request.path == "/stream", let streams else {
                return .response(HTTPResponse(status: 200, headers: [("Content-Type", "image/png")], body: plan))
            }
            return .stream(head: HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")])) { id in
                streams.ids.withLock { $0.append(id) }
            }
        }
        try server.start()
        Thread { server.run() }.start()
        return server
    }

    /// Asks for `target` on the socket at `path` and never reads the answer; the connection.
    static func askAndNeverRead(_ path: String, _ target: String) throws -> Int32 {
        let fd = try UnixHTTPClient(socketPath: path).connect()
        let request = Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }

    @Test func largeAnswersPastTheBudgetGet503AndWhatIsHeldStaysWithinIt() throws {
        let server = try Self.server(10 << 20)
        defer { server.stop() }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<8 { held.append(try Self.askAndNeverRead(server.settings.socketPath, "/plan")) }
        try? eventually("five refusals", timeout: 5, every: 0.002) { (server.refusalCounts["output_budget"] ?? 0) >= 5 }
        // Two 4 MiB plans fit in 10 MiB (less what the kernel took); the rest were refused.
        #expect((server.refusalCounts["output_budget"] ?? 0) >= 5)
        #expect(server.outputTallyBytes <= 10 << 20)
        // The next one is told why at once: a 503, read right away.
        let fd = try Self.askAndNeverRead(server.settings.socketPath, "/plan")
        held.append(fd)
        var first = [UInt8](repeating: 0, count: 256)
        let n = recv(fd, &first, first.count, 0)
        #expect(n > 0 && String(decoding: first[0..<max(n, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 503"))
    }

    @Test func streamsThatStoppedReadingAreClosedFullestFirstPastTheBudget() throws {
        let streams = StreamList()
        let server = try Self.server(2 << 20, streams: streams)
        defer { server.stop() }
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<8 { held.append(try Self.askAndNeverRead(server.settings.socketPath, "/stream")) }
        try? eventually("eight streams", timeout: 5, every: 0.001) { streams.ids.withLock { $0.count } >= 8 }
        let chunk = [UInt8](repeating: 0x41, count: 64 * 1024)
        for _ in 0..<16 { for id in streams.ids.withLock({ $0 }) { server.send(chunk, to: id) } }  // 8 MiB in all
        try? eventually("three streams dropped", timeout: 5, every: 0.001) {
            server.streamsDropped.load(ordering: .relaxed) >= 3
        }
        #expect(server.streamsDropped.load(ordering: .relaxed) >= 3)
        usleep(200_000)
        #expect(server.outputTallyBytes <= 2 << 20)
    }
}
