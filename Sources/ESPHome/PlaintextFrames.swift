/// ESPHome's plaintext framing: `0x00`, the payload's length and the message type as
/// varints, then the payload. Kept for proxies without an API encryption key (old firmware,
/// or `api:` without `encryption:`).
public enum PlaintextFrames {
    /// The largest payload accepted (aioesphomeapi's `MAX_PLAINTEXT_FRAME_SIZE`): a proxy's
    /// biggest message, a batch of raw advertisements, is a kilobyte or two.
    public static let maxPayload = 65_535

    public static func encode(_ message: ClientMessage) -> [UInt8] {
        let payload = message.payload
        var w = ProtobufWriter()
        w.varint(UInt64(payload.count))
        w.varint(UInt64(message.type))
        return [0x00] + w.bytes + payload
    }
}

/// One message as a frame carried it.
public struct Frame: Sendable, Equatable {
    public var type: UInt16
    public var payload: ArraySlice<UInt8>
}

/// Why a connection's bytes cannot be read on: the connection is closed with this, told
/// plainly in the log and the proxy's status.
public enum FrameProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The proxy speaks the encrypted protocol (`0x01`) and no key is configured.
    case encryptedProxy
    /// The proxy speaks plaintext (`0x00`) and a key is configured.
    case plaintextProxy
    case badPreamble(UInt8)
    case tooLarge(Int)
    case badVarint
    /// The frame decrypts to nothing this client can read (a wrong key, a damaged frame).
    case undecryptable(String)

    public var description: String {
        switch self {
        case .encryptedProxy:
            return
                "the proxy uses API encryption: set encryption_key_file (or encryption_key) to its api: encryption: key"
        case .plaintextProxy:
            return "the proxy has no API encryption: remove encryption_key, or add api: encryption: key: to its YAML"
        case let .badPreamble(b): return "not ESPHome's native API (first byte 0x\(String(b, radix: 16)))"
        case let .tooLarge(n):
            return "a frame of \(n) bytes, larger than any ESPHome sends (\(PlaintextFrames.maxPayload))"
        case .badVarint: return "a frame header's number runs over four bytes"
        case let .undecryptable(why): return why
        }
    }
}

/// Reads plaintext frames out of the bytes a connection delivers, however they were cut.
public struct PlaintextFrameReader: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0

    public init() {}

    public mutating func append(_ bytes: some Collection<UInt8>) { buffer += bytes }

    /// Bytes received and not yet read as a frame (a frame's start cut off by the connection).
    public var pending: Int { buffer.count - start }

    /// The next whole frame, nil until one has arrived.
    public mutating func next() throws(FrameProblem) -> Frame? {
        guard start < buffer.count else { return nil }
        switch buffer[start] {
        case 0x00: break
        case 0x01: throw .encryptedProxy
        case let other: throw .badPreamble(other)
        }
        var at = start + 1
        guard let length = try varint(&at), let type = try varint(&at) else { return nil }
        guard length <= UInt64(PlaintextFrames.maxPayload) else { throw .tooLarge(Int(length)) }
        guard buffer.count - at >= Int(length) else { return nil }
        let frame = Frame(type: UInt16(truncatingIfNeeded: type), payload: buffer[at..<(at + Int(length))])
        start = at + Int(length)
        compact()
        return frame
    }

    /// Drops what was read once it is most of the buffer.
    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096, start > buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// A varint of at most four bytes (as aioesphomeapi reads them), nil when cut off.
    private func varint(_ at: inout Int) throws(FrameProblem) -> UInt64? {
        var value: UInt64 = 0
        for i in 0..<4 {
            guard at < buffer.count else { return nil }
            let byte = buffer[at]
            at += 1
            value |= UInt64(byte & 0x7F) << (7 * UInt64(i))
            if byte < 0x80 { return value }
        }
        throw .badVarint
    }
}
