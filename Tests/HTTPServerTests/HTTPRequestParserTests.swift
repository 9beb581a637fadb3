import Testing

@testable import HTTPServer

/// Request framing on byte strings, including every malformed case the server answers.
@Suite struct HTTPRequestParserTests {
    func head(_ text: String) throws -> HTTPRequestParser.Head? {
        guard case let .done(head, _) = try HTTPRequestParser.head(Array(text.utf8)[...]) else { return nil }
        return head
    }

    @Test func parsesAHeadWithLengthAndKeepAlive() throws {
        let h = try #require(try head("PUT /v1/x?a=1 HTTP/1.1\r\nContent-Length: 5\r\nX-Y:  z \r\n\r\nhello"))
        #expect(h.method == "PUT" && h.target == "/v1/x?a=1" && h.contentLength == 5 && h.keepAlive)
        #expect(h.headers.last?.name == "x-y" && h.headers.last?.value == "z")
        #expect(try head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(try head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?.keepAlive == false)
    }

    @Test func waitsForTheWholeHead() throws {
        #expect(try head("GET / HTTP/1.1\r\nHost: x\r\n") == nil)
    }

    @Test func refusesMalformedHeads() {
        let cases: [(String, Int)] = [
            ("GARBAGE\r\n\r\n", 400), ("GET / SPDY/3\r\n\r\n", 400), ("GET / HTTP/1.1\r\nno colon\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            #expect(
                "\(text.debugDescription)", performing: { _ = try head(text) },
                throws: { ($0 as? HTTPRequestParser.Failure)?.status == status })
        }
        let huge = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 20000)
        #expect(performing: { _ = try head(huge) }, throws: { ($0 as? HTTPRequestParser.Failure)?.status == 431 })
    }

    @Test func decodesChunkedBodiesAndEnforcesTheLimit() throws {
        let body = Array("5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT".utf8)[...]
        guard case let .done(bytes, consumed) = try HTTPRequestParser.chunkedBody(body, limit: 100) else {
            Issue.record("incomplete")
            return
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "hello world")
        #expect(consumed == body.count - 4)
        guard case .needMore = try HTTPRequestParser.chunkedBody(body.prefix(12), limit: 100) else {
            Issue.record("a partial body is not complete")
            return
        }
        #expect(
            performing: { _ = try HTTPRequestParser.chunkedBody(body, limit: 8) },
            throws: {
                ($0 as? HTTPRequestParser.Failure)?.status == 413
            })
    }

    /// Found while writing the fuzzer's http target: a second chunk announcing Int.max bytes
    /// overflowed the running total and trapped, killing the daemon on one request.
    @Test func aChunkSizeNearIntMaxIsOverTheLimitNotATrap() {
        let body = Array("1\r\na\r\n7fffffffffffffff\r\n".utf8)[...]
        #expect(
            performing: { _ = try HTTPRequestParser.chunkedBody(body, limit: 1 << 20) },
            throws: { ($0 as? HTTPRequestParser.Failure)?.status == 413 })
    }

    @Test func splitsAndDecodesTargets() {
        let (path, query) = HTTPRequestParser.splitTarget("/v1/clients/a%20b/regions?type=region.*%2Czone.*&x")
        #expect(path == "/v1/clients/a b/regions")
        #expect(query == ["type": "region.*,zone.*", "x": ""])
    }
}
