/// A chunked request body (RFC 9112 §7.1) decoded as its bytes arrive, each byte looked at
/// once: the server hands it what came and drops what it used, so a body of one-byte chunks
/// costs no more than one of large chunks, and every part of the framing has a bound — a
/// chunk-size line (with its extensions) of 1 KiB, trailers of 16 KiB, a body of `limit` —
/// so a sender cannot make the server hold more than that by never ending one of them.
package struct ChunkedDecoder {
    /// The longest chunk-size line, extensions included.
    package static let maxSizeLineBytes = 1024

    package let limit: Int
    /// The body decoded so far.
    package private(set) var body: [UInt8] = []
    private var phase = Phase.size
    private var trailerBytes = 0

    enum Phase: Equatable {
        case size
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    package init(limit: Int) { self.limit = limit }

    package var isDone: Bool { phase == .done }

    /// Takes what it can from the start of `input`; returns how many bytes it used. Bytes
    /// after the body's end are not used (they are the next request's).
    package mutating func feed(_ input: ArraySlice<UInt8>) throws(HTTPRequestParser.Failure) -> Int {
        var i = input.startIndex
        while i < input.endIndex {
            switch phase {
            case .size:
                guard let end = lineEnd(input, from: i) else {
                    if input.endIndex - i > Self.maxSizeLineBytes {
                        throw .init(status: 400, message: "chunk-size line over 1 KiB")
                    }
                    return i - input.startIndex
                }
                if end - i > Self.maxSizeLineBytes { throw .init(status: 400, message: "chunk-size line over 1 KiB") }
                let size = try chunkSize(input[i..<end])
                i = end + 2
                phase = size == 0 ? .trailers : .data(remaining: size)
            case let .data(remaining):
                let n = min(remaining, input.endIndex - i)
                body += input[i..<i + n]
                i += n
                phase = remaining == n ? .dataEnd : .data(remaining: remaining - n)
            case .dataEnd:
                guard input.endIndex - i >= 2 else { return i - input.startIndex }
                guard input[i] == 13, input[i + 1] == 10 else {
                    throw .init(status: 400, message: "chunk not followed by CRLF")
                }
                i += 2
                phase = .size
            case .trailers:
                let room = HTTPRequestParser.maxHeadBytes - trailerBytes
                guard let end = lineEnd(input, from: i) else {
                    if input.endIndex - i > room { throw .init(status: 431, message: "trailer fields over 16 KiB") }
                    return i - input.startIndex
                }
                if end + 2 - i > room { throw .init(status: 431, message: "trailer fields over 16 KiB") }
                trailerBytes += end + 2 - i
                if end == i { phase = .done }  // the empty line that ends the trailers (ignored)
                i = end + 2
            case .done:
                return i - input.startIndex
            }
        }
        return i - input.startIndex
    }

    /// `1*HEXDIG [BWS] [";" extensions]`: no sign, no leading space, at most what is left
    /// of the limit.
    private func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPRequestParser.Failure) -> Int {
        var size = 0
        var digits = 0
        var i = line.startIndex
        while i < line.endIndex, let v = Self.hexValue(line[i]) {
            size = size * 16 + v
            digits += 1
            if size > limit - body.count { throw .init(status: 413, message: "request body over the limit") }
            i += 1
        }
        guard digits > 0 else { throw .init(status: 400, message: "bad chunk size") }
        while i < line.endIndex, line[i] == 0x20 || line[i] == 0x09 { i += 1 }
        guard i == line.endIndex || line[i] == UInt8(ascii: ";") else {
            throw .init(status: 400, message: "bad chunk size")
        }
        return size
    }

    private static func hexValue(_ b: UInt8) -> Int? {
        switch b {
        case 0x30...0x39: Int(b - 0x30)
        case 0x41...0x46: Int(b - 0x41 + 10)
        case 0x61...0x66: Int(b - 0x61 + 10)
        default: nil
        }
    }

    /// Where the CRLF ending the line that starts at `start` is; a bare LF or CR is refused.
    private func lineEnd(_ input: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start
        while i + 1 < input.endIndex {
            if input[i] == 13 && input[i + 1] == 10 { return i }
            i += 1
        }
        return nil
    }
}
