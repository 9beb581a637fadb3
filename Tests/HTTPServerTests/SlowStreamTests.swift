import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

/// The server on a real socket: a stream whose client stops reading is dropped once its
/// unsent output passes the limit, and writing to it never blocks the writer.
@Suite struct SlowStreamTests {
    @Test func aClientThatStopsReadingIsDroppedAndNeverBlocksTheSender() throws {
        let dir = try Executables.temporaryDirectory()
        var settings = HTTPServer.Settings(socketPath: dir.appendingPathComponent("s.sock").path)
        settings.streamBufferLimit = 256 * 1024
        let opened = Mutex<StreamID?>(nil)
        let closed = Atomic<Int>(0)
        let hooks = HTTPServer.Hooks(onStreamClosed: { _ in closed.add(1, ordering: .relaxed) })
        let server = HTTPServer(settings: settings, hooks: hooks) { _ in
            .stream(head: HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream")])) { id in
                opened.withLock { $0 = id }
            }
        }
        try server.start()
        let thread = Thread { server.run() }
        thread.start()
        defer { server.stop() }

        // A client that sends its request and then never reads
        let reader = try UnixHTTPClient(socketPath: settings.socketPath).stream()
        try? eventually("the stream opened", timeout: 5, every: 0.001) { opened.withLock { $0 } != nil }
        let id = try #require(opened.withLock { $0 })

        let chunk = [UInt8](repeating: 0x41, count: 16 * 1024)
        let started = Date()
        for _ in 0..<256 { server.send(chunk, to: id) }  // 4 MiB, far past the socket's buffer and the limit
        #expect(Date().timeIntervalSince(started) < 1, "send only queues")
        try? eventually("the stream closed", timeout: 5, every: 0.001) { closed.load(ordering: .relaxed) != 0 }
        #expect(closed.load(ordering: .relaxed) == 1)
        #expect(server.streamsDropped.load(ordering: .relaxed) == 1)
        #expect(server.openStreams.load(ordering: .relaxed) == 0)
        reader.close()
    }
}
