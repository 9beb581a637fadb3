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

    /// RFC 9112's framing rules, each of which a lenient parser let through (issue 25, item 10):
    /// a space before the colon let `Content-Length` be ignored and the body run as a second
    /// request; signs, empty names, folding and bare CRs are refused the same way.
    @Test func refusesWhatRFC9112Refuses() {
        let cases: [(String, Int)] = [
            ("PUT / HTTP/1.1\r\nContent-Length : 45\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\n: empty\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", 400),
            ("PUT / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", 400),
            ("GET / HTTP/1.1\nX: a\r\n\r\n", 400),
            ("GET /a b HTTP/1.1\r\n\r\n", 400),
            ("G(T / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nX\u{0}Y: a\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ]
        for (text, status) in cases {
            #expect(
                "\(text.debugDescription)", performing: { _ = try head(text) },
                throws: { ($0 as? HTTPRequestParser.Failure)?.status == status })
        }
    }

    /// A head over 16 KiB is refused even when it arrives whole, in one read.
    @Test func aLongHeadIsRefusedEvenWhenItArrivesWhole() {
        let uri = "GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\n\r\n"
        let header = "GET / HTTP/1.1\r\nX: " + String(repeating: "b", count: 17_000) + "\r\n\r\n"
        for text in [uri, header] {
            #expect(
                performing: { _ = try head(text) }, throws: { ($0 as? HTTPRequestParser.Failure)?.status == 431 })
        }
    }

    /// Every part of chunked framing has a bound (item 3): a chunk-size line or extension
    /// that never ends is refused at 1 KiB, trailers that never end at 16 KiB, and a sign
    /// or a space before the size is not a size.
    @Test func chunkedFramingHasABoundOnEveryPart() {
        let cases: [(String, Int)] = [
            ("5;ext=" + String(repeating: "e", count: 2000), 400),
            (String(repeating: "0", count: 2000), 400),
            ("0\r\nX: " + String(repeating: "t", count: 20_000), 431),
            ("0\r\n" + String(repeating: "X: t\r\n", count: 4000), 431),
            ("+5\r\nhello\r\n0\r\n\r\n", 400),
            (" 5\r\nhello\r\n0\r\n\r\n", 400),
            ("5 x\r\nhello\r\n0\r\n\r\n", 400),
            ("5\r\nhelloXX0\r\n\r\n", 400),
        ]
        for (text, status) in cases {
            #expect(
                "\(text.prefix(40).debugDescription)",
                performing: { _ = try HTTPRequestParser.chunkedBody(Array(text.utf8)[...], limit: 1 << 20) },
                throws: { ($0 as? HTTPRequestParser.Failure)?.status == status })
        }
        // Extensions and whitespace before them are framing, not data.
        let ok = Array("5 ;a=b\r\nhello\r\n0\r\n\r\n".utf8)[...]
        guard case let .done(body, _)? = try? HTTPRequestParser.chunkedBody(ok, limit: 100) else {
            Issue.record("a chunk with an extension was refused")
            return
        }
        #expect(body == Array("hello".utf8))
    }

    /// A body of one-byte chunks fed as a socket delivers it (item 8): each feed takes every
    /// whole chunk it was given, so what waits for the next read is at most a partial line,
    /// and no byte is looked at again from the start of the body.
    @Test func aChunkedBodyIsDecodedAsItArrivesNotAgainFromItsStart() throws {
        let chunks = String(repeating: "1\r\nx\r\n", count: 100_000) + "0\r\n\r\n"
        let wire = Array(chunks.utf8)
        var decoder = ChunkedDecoder(limit: 1 << 20)
        var waiting: [UInt8] = []
        var offset = 0
        var feeds = 0
        while offset < wire.count {
            let piece = wire[offset..<min(wire.count, offset + 65_536)]
            offset += piece.count
            waiting += piece
            let used = try decoder.feed(waiting[...])
            waiting.removeFirst(used)
            feeds += 1
            #expect(waiting.count < 8, "only a partial chunk waits for the next read")
        }
        #expect(decoder.isDone && decoder.body.count == 100_000 && feeds == (wire.count + 65_535) / 65_536)
    }

    @Test func splitsAndDecodesTargets() {
        let (path, query) = HTTPRequestParser.splitTarget("/v1/clients/a%20b/regions?type=region.*%2Czone.*&x")
        #expect(path == "/v1/clients/a b/regions")
        #expect(query == ["type": "region.*,zone.*", "x": ""])
    }
}
