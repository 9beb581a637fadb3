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

    static let maxHeadBytes = 16 * 1024

    /// Parses the head at the start of `buffer`.
    package static func head(_ buffer: ArraySlice<UInt8>) throws(Failure) -> Step<Head> {
        guard let end = headEnd(buffer) else {
            if buffer.count > maxHeadBytes { throw Failure(status: 431, message: "request head over 16 KiB") }
            return .needMore
        }
        let text = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[1].hasPrefix("/") else {
            throw Failure(status: 400, message: "malformed request line")
        }
        guard requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            throw Failure(status: 400, message: "unsupported protocol \(requestLine[2])")
        }
        var head = Head(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: [], contentLength: nil,
            chunked: false, expectContinue: false, keepAlive: requestLine[2] == "HTTP/1.1")
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw Failure(status: 400, message: "malformed header line")
            }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].trimmingWhitespace)
            head.headers.append((name, value))
            switch name {
            case "content-length":
                guard let n = Int(value), n >= 0, head.contentLength == nil || head.contentLength == n else {
                    throw Failure(status: 400, message: "bad Content-Length")
                }
                head.contentLength = n
            case "transfer-encoding":
                guard value.lowercased() == "chunked" else {
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
        if head.chunked && head.contentLength != nil {
            throw Failure(status: 400, message: "both Content-Length and chunked")
        }
        return .done(head, consumed: end + 4 - buffer.startIndex)
    }

    /// Decodes a chunked body at the start of `buffer`, refusing more than `limit` bytes.
    package static func chunkedBody(_ buffer: ArraySlice<UInt8>, limit: Int) throws(Failure) -> Step<[UInt8]> {
        var body: [UInt8] = []
        var i = buffer.startIndex
        while true {
            guard let lineEnd = crlf(buffer, from: i) else { return .needMore }
            let sizeText = String(decoding: buffer[i..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingWhitespace, radix: 16), size >= 0 else {
                throw Failure(status: 400, message: "bad chunk size")
            }
            if size > limit - body.count { throw Failure(status: 413, message: "request body over the limit") }
            let dataStart = lineEnd + 2
            if size == 0 {
                // Trailers (ignored) end with an empty line.
                var j = dataStart
                while true {
                    guard let end = crlf(buffer, from: j) else { return .needMore }
                    if end == j { return .done(body, consumed: end + 2 - buffer.startIndex) }
                    j = end + 2
                }
            }
            guard buffer.endIndex >= dataStart + size + 2 else { return .needMore }
            body += buffer[dataStart..<dataStart + size]
            guard buffer[dataStart + size] == 13, buffer[dataStart + size + 1] == 10 else {
                throw Failure(status: 400, message: "chunk not followed by CRLF")
            }
            i = dataStart + size + 2
        }
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

    private static func headEnd(_ buffer: ArraySlice<UInt8>) -> Int? {
        var i = buffer.startIndex
        while i + 3 < buffer.endIndex {
            if buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }

    private static func crlf(_ buffer: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + 1 < buffer.endIndex {
            if buffer[i] == 13 && buffer[i + 1] == 10 { return i }
            i += 1
        }
        return nil
    }
}
