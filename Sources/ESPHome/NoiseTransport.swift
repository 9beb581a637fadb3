import BeaconCore

/// ESPHome's encrypted framing (`api: encryption: key:`): `0x01`, a 16-bit big-endian length,
/// then the frame. The client opens with an empty frame and its handshake message; the proxy
/// answers with its hello (the protocol it chose, its name and MAC) and the handshake's
/// answer; from then on each frame is one message, encrypted: its type and length (16 bits
/// each, big-endian) then its payload.
struct NoiseTransport: Sendable {
    enum State: Sendable { case awaitingServerHello, awaitingHandshake, ready }

    /// What the bytes received gave.
    enum Step: Sendable {
        /// The handshake completed: messages may be sent now.
        case established
        case message(Frame)
    }

    private(set) var state = State.awaitingServerHello
    private var handshake: NoiseHandshake
    private var sender: NoiseCipher?
    private var receiver: NoiseCipher?
    private var buffer: [UInt8] = []
    private var start = 0
    /// As the proxy's hello gave them.
    private(set) var serverName = ""
    private(set) var serverMAC = ""

    init(psk: [UInt8], ephemeral: [UInt8]? = nil) throws(NoiseHandshake.Failure) {
        handshake = try NoiseHandshake(psk: psk, ephemeral: ephemeral)
    }

    /// The client's hello (an empty frame) and the handshake's first message, behind a zero.
    mutating func opening() throws(NoiseHandshake.Failure) -> [UInt8] {
        [0x01, 0x00, 0x00] + Self.frame([0x00] + (try handshake.firstMessage()))
    }

    static func frame(_ data: [UInt8]) -> [UInt8] {
        [0x01, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
    }

    /// `message` encrypted into its frame; nil before the handshake completed.
    mutating func encode(_ message: ClientMessage) -> [UInt8]? {
        let payload = message.payload
        let header = [
            UInt8(message.type >> 8), UInt8(message.type & 0xFF), UInt8(payload.count >> 8),
            UInt8(payload.count & 0xFF),
        ]
        guard state == .ready, let sealed = sender?.encrypt(header + payload) else { return nil }
        return Self.frame(sealed)
    }

    mutating func append(_ bytes: some Collection<UInt8>) { buffer += bytes }

    /// The next step the bytes received so far make, nil until a whole frame has arrived.
    mutating func next() throws(FrameProblem) -> Step? {
        while let data = try frame() {
            switch state {
            case .awaitingServerHello:
                try readServerHello(data)
            case .awaitingHandshake:
                guard let first = data.first else { throw .undecryptable("the proxy's handshake answer is empty") }
                guard first == 0 else { throw Self.refusal(Self.said(data.dropFirst())) }
                do {
                    (sender, receiver) = try handshake.readSecond(Array(data.dropFirst()))
                } catch {
                    throw .undecryptable(error.description)
                }
                state = .ready
                return .established
            case .ready:
                guard let plain = receiver?.decrypt(data), plain.count >= 4 else {
                    throw .undecryptable("a frame from the proxy does not decrypt under the session's key")
                }
                let type = UInt16(plain[0]) << 8 | UInt16(plain[1])
                let length = Int(plain[2]) << 8 | Int(plain[3])
                guard length == plain.count - 4 else {
                    throw .undecryptable("a decrypted frame says \(length) bytes and holds \(plain.count - 4)")
                }
                return .message(Frame(type: type, payload: plain[4...]))
            }
        }
        return nil
    }

    private mutating func readServerHello(_ data: [UInt8]) throws(FrameProblem) {
        guard data.first == 0x01 else {
            throw .undecryptable(
                "the proxy chose encryption protocol \(data.first.map(String.init) ?? "none"), not Noise (1)")
        }
        let fields = data.dropFirst().split(separator: 0, omittingEmptySubsequences: false)
        serverName = fields.first.map(Self.said) ?? ""
        serverMAC = fields.count > 1 ? Self.said(fields[1]) : ""
        state = .awaitingHandshake
    }

    /// What a device sent as text, as beacond keeps it: anyone on the address can answer the
    /// handshake, and the text goes to the status, the log and `beaconctl` (`OutsideText`).
    static func said(_ bytes: some Collection<UInt8>) -> String {
        OutsideText.line(String(decoding: bytes.prefix(256), as: UTF8.self), limit: 120)
    }

    /// The proxy's refusal of the handshake, in words that say what to check.
    static func refusal(_ explanation: String) -> FrameProblem {
        explanation == "Handshake MAC failure"
            ? .undecryptable(
                "the proxy refused the encryption key (Handshake MAC failure): it is not the proxy's api: encryption: key:"
            )
            : .undecryptable("the proxy refused the handshake: \(explanation)")
    }

    /// The next frame's data, nil until whole.
    private mutating func frame() throws(FrameProblem) -> [UInt8]? {
        guard start < buffer.count else { return nil }
        switch buffer[start] {
        case 0x01: break
        case 0x00: throw .plaintextProxy
        case let other: throw .badPreamble(other)
        }
        guard buffer.count - start >= 3 else { return nil }
        let length = Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
        guard buffer.count - start - 3 >= length else { return nil }
        let data = Array(buffer[(start + 3)..<(start + 3 + length)])
        start += 3 + length
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            buffer.removeFirst(start)
            start = 0
        }
        return data
    }
}
