import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HTTPServer

/// `HTTPReply.later` on a real socket: an answer owed to one client holds up no other, the
/// same connection's next requests are answered after it and in order, and an answer for a
/// client that has gone is dropped.
@Suite struct LaterAnswerTests {
    /// A server whose `/slow` answers when the test says so (`owed`), and `/fast` at once.
    final class Owed: Sendable {
        let answers = Mutex<[@Sendable (HTTPResponse) -> Void]>([])
    }

    final class Server: Sendable {
        let server: HTTPServer
        let owed = Owed()
        var client: UnixHTTPClient { UnixHTTPClient(socketPath: server.settings.socketPath) }

        init() throws {
            let dir = try Executables.temporaryDirectory()
            let owed = self.owed
            server = HTTPServer(settings: .init(socketPath: dir.appendingPathComponent("s.sock").path)) { request in
                guard request.path == "/slow" else {
                    return .response(HTTPResponse(status: 200, contentType: "text/plain", body: "fast"))
                }
                return .later { answer in owed.answers.withLock { $0.append(answer) } }
            }
            try server.start()
            let server = self.server
            Thread { server.run() }.start()
        }

        deinit { server.stop() }

        /// Waits until `count` answers are owed.
        func waitForOwed(_ count: Int) throws {
            let deadline = Date().addingTimeInterval(5)
            while owed.answers.withLock({ $0.count }) < count {
                guard Date() < deadline else { throw TestFailure("\(count) answers were never owed") }
                usleep(1000)
            }
        }

        func answer(_ index: Int, _ body: String) {
            let answer = owed.answers.withLock { $0[index] }
            answer(HTTPResponse(status: 200, contentType: "text/plain", body: body))
        }
    }

    static let slowThenFast = Array(
        ("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8)

    @Test func anOwedAnswerHoldsUpOnlyItsOwnConnectionWhoseNextRequestFollowsIt() throws {
        let s = try Server()
        let received = Mutex<String?>(nil)
        let client = s.client
        Thread {
            let text = try? client.exchange(Self.slowThenFast, halfClose: true)
            received.withLock { $0 = text ?? "failed" }
        }.start()
        try s.waitForOwed(1)

        let other = try s.client.request("GET", "/fast")
        #expect(other.status == 200 && other.body == "fast")
        #expect(received.withLock { $0 } == nil, "the first connection's /fast waits behind its /slow")

        s.answer(0, "slow")
        try? eventually("the slow answer", timeout: 5, every: 0.001) { received.withLock { $0 } != nil }
        let text = try #require(received.withLock { $0 })
        let slow = try #require(text.range(of: "\r\n\r\nslow"), "\(text)")
        let fast = try #require(text.range(of: "\r\n\r\nfast"), "\(text)")
        #expect(slow.upperBound <= fast.lowerBound, "answered in the order asked")
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(text)")
    }

    @Test func anAnswerForAClientThatHasGoneIsDropped() throws {
        let s = try Server()
        let gone = try s.client.open(sending: Array("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        try s.waitForOwed(1)
        close(gone)

        // The next client may well be given the same descriptor: it must get its own answer
        let next = try s.client.open(sending: Self.slowThenFast)
        defer { close(next) }
        try s.waitForOwed(2)
        s.answer(0, "for the client that went")
        s.answer(1, "slow")
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(next, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let n = recv(next, &chunk, chunk.count, 0)
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("for the client that went"), "\(text)")
        #expect(text.contains("\r\n\r\nslow") && text.hasSuffix("\r\n\r\nfast"), "\(text)")
        #expect(try s.client.request("GET", "/fast").body == "fast")
    }
}
