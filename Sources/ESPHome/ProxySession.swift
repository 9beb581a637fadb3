import BeaconCore

/// One connection to an ESPHome Bluetooth proxy, as a client that only listens: Hello and
/// authentication, device info, a subscription to raw advertisements, pings both ways, and
/// the reasons a connection ends. Pure: bytes and instants in, bytes to send, advertisements
/// and a verdict out — the socket, the thread and the reconnecting are the daemon's
/// (`ESPHomeProxies`), so every exchange is tested without one.
public struct ProxySession: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Shown by the proxy's logs as who connected.
        public var clientInfo = "beacond"
        public var password: String?
        /// The proxy's API encryption key (32 bytes): the session speaks Noise; nil: plaintext.
        public var psk: [UInt8]?
        /// Quiet this long, the session pings (aioesphomeapi's default keepalive).
        public var keepalive = TimeSpan.seconds(20)
        /// Quiet this long after a ping, the proxy is gone (4.5 keepalives, as aioesphomeapi).
        public var answerTimeout = TimeSpan.seconds(90)
        /// No Hello answered in this long: not a proxy, or one that hangs.
        public var helloTimeout = TimeSpan.seconds(15)

        public init(clientInfo: String = "beacond", password: String? = nil, psk: [UInt8]? = nil) {
            self.clientInfo = clientInfo
            self.password = password
            self.psk = psk
        }
    }

    public enum Phase: Sendable, Equatable {
        /// Hello sent, not answered yet.
        case greeting
        /// Answered and subscribed: advertisements flow.
        case listening
        /// Ended; `closeReason` says why.
        case closed
    }

    /// What one step of the session gives the daemon.
    public struct Output: Sendable, Equatable {
        public var send: [UInt8] = []
        public var advertisements: [RawAdvertisement] = []
        /// Set when the step ended the session: why, in words for the log and status.
        public var closed: String?
        public init() {}
    }

    public let settings: Settings
    public private(set) var phase = Phase.greeting
    public private(set) var identity = ProxyIdentity()
    public private(set) var closeReason: String?
    /// The framing under the messages: plaintext, or Noise with its handshake's state (one of
    /// the two is set; optionals, not an enum, so a frame is read where the buffer lies).
    private var plaintext: PlaintextFrameReader?
    private var noise: NoiseTransport?
    private var started: Timestamp
    private var lastHeard: Timestamp
    private var pingSent: Timestamp?

    /// `ephemeral`: the Noise handshake's private key (tests' fixed transcripts); random else.
    public init(settings: Settings, at t: Timestamp, ephemeral: [UInt8]? = nil) {
        self.settings = settings
        started = t
        lastHeard = t
        guard let psk = settings.psk else {
            plaintext = PlaintextFrameReader()
            return
        }
        do {
            noise = try NoiseTransport(psk: psk, ephemeral: ephemeral)
        } catch {
            (phase, closeReason) = (.closed, error.description)
        }
    }

    /// The bytes that open the session: in plaintext, Hello and authentication together, as
    /// Home Assistant's client sends them; encrypted, the Noise hello and handshake (Hello
    /// follows once the proxy has answered it). Empty when the session could not begin
    /// (`closeReason`: libcrypto cannot be loaded).
    public mutating func opening() -> [UInt8] {
        guard noise != nil else { return greeting() }
        do {
            return try noise!.opening()
        } catch {
            (phase, closeReason) = (.closed, error.description)
            return []
        }
    }

    private mutating func greeting() -> [UInt8] {
        encode(.hello(clientInfo: settings.clientInfo)) + encode(.authenticate(password: settings.password ?? ""))
    }

    private mutating func encode(_ message: ClientMessage) -> [UInt8] {
        guard noise != nil else { return PlaintextFrames.encode(message) }
        return noise!.encode(message) ?? []
    }

    /// The next message the bytes received so far hold; `established` when a Noise
    /// handshake just completed.
    private mutating func nextFrame() throws(FrameProblem) -> (frame: Frame?, established: Bool)? {
        guard noise != nil else { return try plaintext!.next().map { ($0, false) } }
        switch try noise!.next() {
        case nil: return nil
        case .established?: return (nil, true)
        case let .message(frame)?: return (frame, false)
        }
    }

    /// Reads what the connection delivered.
    public mutating func receive(_ bytes: some Collection<UInt8>, at t: Timestamp) -> Output {
        var out = Output()
        guard phase != .closed else { return out }
        lastHeard = t
        pingSent = nil
        plaintext?.append(bytes)
        noise?.append(bytes)
        do {
            while phase != .closed, let (frame, established) = try nextFrame() {
                if established {
                    identity.name = noise?.serverName ?? identity.name
                    out.send += greeting()
                }
                if let frame { handle(try ProxyMessage(type: frame.type, payload: frame.payload), into: &out) }
            }
        } catch let problem as FrameProblem {
            close(problem.description, into: &out)
        } catch {
            close("\(error)", into: &out)
        }
        return out
    }

    /// The clock moved: a ping when the proxy has been quiet, the end when it stays so.
    public mutating func tick(at t: Timestamp) -> Output {
        var out = Output()
        switch phase {
        case .closed: break
        case .greeting:
            if t - started >= settings.helloTimeout {
                close("no answer to Hello in \(settings.helloTimeout): is this ESPHome's API port?", into: &out)
            }
        case .listening:
            if t - lastHeard >= settings.answerTimeout {
                close("no answer for \(t - lastHeard): the proxy is unreachable or hung", into: &out)
            } else if pingSent == nil, t - lastHeard >= settings.keepalive {
                pingSent = t
                out.send = encode(.pingRequest)
            }
        }
        return out
    }

    /// The proxy closed the connection: why, as far as the session can tell. A proxy without
    /// encryption closes at once on an encrypted hello (it reads a byte it does not expect).
    public mutating func connectionClosed() -> String {
        let reason =
            noise?.state == .awaitingServerHello
            ? "the proxy closed the connection at the encrypted hello: it has no API encryption (remove encryption_key) or is not ESPHome"
            : "the proxy closed the connection"
        if phase != .closed { (phase, closeReason) = (.closed, reason) }
        return reason
    }

    /// Ends the session from this side (a stop, a reload): what to send before closing.
    public mutating func disconnect(_ reason: String) -> [UInt8] {
        guard phase != .closed else { return [] }
        let bytes = encode(.disconnectRequest)
        phase = .closed
        closeReason = reason
        return bytes
    }

    private mutating func handle(_ message: ProxyMessage, into out: inout Output) {
        switch message {
        case let .hello(hello):
            guard phase == .greeting else { return }
            identity.name = hello.name
            identity.serverInfo = hello.serverInfo
            identity.apiVersion = hello.apiVersion
            phase = .listening
            out.send += encode(.deviceInfoRequest) + encode(.subscribeRawAdvertisements)
        case .authenticationFailed:
            close(
                settings.password == nil
                    ? "the proxy asks for an API password: set password (or give it an encryption key)"
                    : "the proxy refused the password", into: &out)
        case let .deviceInfo(info):
            let (name, server, version) = (identity.name, identity.serverInfo, identity.apiVersion)
            identity = info
            if identity.name.isEmpty { identity.name = name }
            (identity.serverInfo, identity.apiVersion) = (server, version)
        case let .advertisements(list):
            if phase == .listening { out.advertisements += list }
        case .pingRequest:
            out.send += encode(.pingResponse)
        case .disconnectRequest:
            out.send += encode(.disconnectResponse)
            close("the proxy closed the connection (restarting, or another client took its place)", into: &out)
        case .pingResponse, .disconnectResponse, .other:
            break
        }
    }

    private mutating func close(_ reason: String, into out: inout Output) {
        phase = .closed
        closeReason = reason
        out.closed = reason
    }
}
