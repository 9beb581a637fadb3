import BeaconCore

/// HTTP/1.1 request framing (RFC 9112), on bytes as they arrive: the head, then a body
/// framed by Content-Length or chunked encoding. Pure, so every malformed input can be
/// tested; each failure names the status to answer with.
package enum HTTPRequestParser {
    package struct Head: Equatable {
        package var method: String
        package var target: String
        package var headers: [(name: String, value: String)]
        package var contentLength: Int?
        package var chunked: Bool
        package var expectContinue: Bool
        package var keepAlive: Bool

        package static func == (a: Head, b: Head) -> Bool {
            a.method == b.method && a.target == b.target && a.headers.elementsEqual(b.headers, by: { $0 == $1 })
                && a.contentLength == b.contentLength && a.chunked == b.chunked
        }
    }

    package struct Failure: Error, Equatable {
        package var status: Int
        package var message: String
    }

    package enum Step<Value> {
        case needMore
        case done(Value, consumed: Int)
    }

    /// The most a request's head (request line and header fields) may take: larger gets 431.
    package static let maxHeadBytes = 16 * 1024

    /// Parses the head at the start of `buffer`. RFC 9112's rules are applied strictly, since
    /// a lenient reading of framing is how a body gets taken for a second request: no space
    /// before a field's colon, field names that are tokens, a Content-Length of digits only,
    /// no line folding, no bare CR.
    package static func head(_ buffer: ArraySlice<UInt8>) throws(Failure) -> Step<Head> {
        guard let end = headEnd(buffer) else {
            if buffer.count > maxHeadBytes { throw Failure(status: 431, message: "request head over 16 KiB") }
            return .needMore
        }
        if end - buffer.startIndex > maxHeadBytes {
            throw Failure(status: 431, message: "request head of \(end - buffer.startIndex) bytes is over 16 KiB")
        }
        let headBytes = buffer[buffer.startIndex..<end]
        if headBytes.contains(0) { throw Failure(status: 400, message: "NUL byte in the request head") }
        var lines = try split(headBytes)
        let requestLine = lines.removeFirst()
        let words = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard words.count == 3, !words[0].isEmpty, words[0].allSatisfy(isTokenByte), words[1].first == 0x2F,
            words[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else {
            throw Failure(status: 400, message: "malformed request line")
        }
        let version = String(decoding: words[2], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw Failure(status: 400, message: "unsupported protocol \(version)")
        }
        var head = Head(
            method: String(decoding: words[0], as: UTF8.self), target: String(decoding: words[1], as: UTF8.self),
            headers: [], contentLength: nil, chunked: false, expectContinue: false, keepAlive: version == "HTTP/1.1")
        for line in lines {
            try field(line, into: &head)
        }
        if head.chunked && head.contentLength != nil {
            throw Failure(status: 400, message: "both Content-Length and chunked")
        }
        return .done(head, consumed: end + 4 - buffer.startIndex)
    }

    /// One header field line: `name ":" OWS value OWS`.
    private static func field(_ line: ArraySlice<UInt8>, into head: inout Head) throws(Failure) {
        guard let first = line.first else { throw Failure(status: 400, message: "empty header line") }
        if first == 0x20 || first == 0x09 {
            throw Failure(status: 400, message: "obsolete line folding in the header")
        }
        guard let colon = line.firstIndex(of: 0x3A) else {
            throw Failure(status: 400, message: "malformed header line (no colon)")
        }
        let nameBytes = line[line.startIndex..<colon]
        guard !nameBytes.isEmpty else { throw Failure(status: 400, message: "empty header name") }
        guard nameBytes.allSatisfy(isTokenByte) else {
            throw Failure(status: 400, message: "malformed header name (whitespace before the colon?)")
        }
        var valueBytes = line[(colon + 1)...]
        while let b = valueBytes.first, b == 0x20 || b == 0x09 { valueBytes.removeFirst() }
        while let b = valueBytes.last, b == 0x20 || b == 0x09 { valueBytes.removeLast() }
        if valueBytes.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
            throw Failure(status: 400, message: "control character in a header value")
        }
        let name = String(decoding: nameBytes, as: UTF8.self).lowercased()
        let value = String(decoding: valueBytes, as: UTF8.self)
        head.headers.append((name, value))
        switch name {
        case "content-length":
            guard !valueBytes.isEmpty, valueBytes.count <= 18, valueBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let n = Int(value), head.contentLength == nil || head.contentLength == n
            else {
                throw Failure(status: 400, message: "bad Content-Length")
            }
            head.contentLength = n
        case "transfer-encoding":
            guard value.lowercased() == "chunked", !head.chunked else {
                throw Failure(status: 501, message: "unsupported Transfer-Encoding \(value)")
            }
            head.chunked = true
        case "expect":
            head.expectContinue = value.lowercased() == "100-continue"
        case "connection":
            let v = value.lowercased()
            if v.contains("close") { head.keepAlive = false }
            if v.contains("keep-alive") { head.keepAlive = true }
        default: break
        }
    }

    /// RFC 9110's `tchar`: what a method or a field name may be made of.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// Lines of a head split at CRLF; a bare CR or LF is refused rather than guessed at.
    private static func split(_ bytes: ArraySlice<UInt8>) throws(Failure) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == 13 {
                guard i + 1 < bytes.endIndex, bytes[i + 1] == 10 else {
                    throw Failure(status: 400, message: "bare CR in the request head")
                }
                lines.append(bytes[start..<i])
                i += 2
                start = i
            } else if b == 10 {
                throw Failure(status: 400, message: "bare LF in the request head")
            } else {
                i += 1
            }
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    /// Decodes a whole chunked body at the start of `buffer`, refusing more than `limit`
    /// bytes (the server feeds a `ChunkedDecoder` as bytes arrive instead).
    package static func chunkedBody(_ buffer: ArraySlice<UInt8>, limit: Int) throws(Failure) -> Step<[UInt8]> {
        var decoder = ChunkedDecoder(limit: limit)
        let used = try decoder.feed(buffer)
        guard decoder.isDone else { return .needMore }
        return .done(decoder.body, consumed: used)
    }

    /// Splits a target into a percent-decoded path and query parameters.
    package static func splitTarget(_ target: String) -> (path: String, query: [String: String]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[percentDecode(kv[0])] = kv.count == 2 ? percentDecode(kv[1]) : ""
            }
        }
        return (percentDecode(parts[0], plusIsSpace: false), query)
    }

    static func percentDecode(_ text: Substring, plusIsSpace: Bool = true) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "%"), bytes.count >= 2,
                let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else if b == UInt8(ascii: "+") && plusIsSpace {
                out.append(0x20)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Where the head's closing empty line starts, searching from `from` (what an earlier
    /// call already searched, less three bytes), so a head arriving a byte at a time is not
    /// scanned again from its start at every byte.
    package static func headEnd(_ buffer: ArraySlice<UInt8>, from: Int? = nil) -> Int? {
        var i = max(buffer.startIndex, from ?? buffer.startIndex)
        while i + 3 < buffer.endIndex {
            if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }
}
