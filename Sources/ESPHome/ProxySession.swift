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
        /// Quiet this long, the session pings (aioesphomeapi's default keepalive).
        public var keepalive = TimeSpan.seconds(20)
        /// Quiet this long after a ping, the proxy is gone (4.5 keepalives, as aioesphomeapi).
        public var answerTimeout = TimeSpan.seconds(90)
        /// No Hello answered in this long: not a proxy, or one that hangs.
        public var helloTimeout = TimeSpan.seconds(15)

        public init(clientInfo: String = "beacond", password: String? = nil) {
            self.clientInfo = clientInfo
            self.password = password
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
    private var reader = PlaintextFrameReader()
    private var started: Timestamp
    private var lastHeard: Timestamp
    private var pingSent: Timestamp?

    public init(settings: Settings, at t: Timestamp) {
        self.settings = settings
        started = t
        lastHeard = t
    }

    /// The bytes that open the session: Hello and authentication together, as Home
    /// Assistant's client sends them.
    public func opening() -> [UInt8] {
        PlaintextFrames.encode(.hello(clientInfo: settings.clientInfo))
            + PlaintextFrames.encode(.authenticate(password: settings.password ?? ""))
    }

    /// Reads what the connection delivered.
    public mutating func receive(_ bytes: some Collection<UInt8>, at t: Timestamp) -> Output {
        var out = Output()
        guard phase != .closed else { return out }
        lastHeard = t
        pingSent = nil
        reader.append(bytes)
        do {
            while phase != .closed, let frame = try reader.next() {
                handle(try ProxyMessage(type: frame.type, payload: frame.payload), into: &out)
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
                out.send = PlaintextFrames.encode(.pingRequest)
            }
        }
        return out
    }

    /// Ends the session from this side (a stop, a reload): what to send before closing.
    public mutating func disconnect(_ reason: String) -> [UInt8] {
        guard phase != .closed else { return [] }
        phase = .closed
        closeReason = reason
        return PlaintextFrames.encode(.disconnectRequest)
    }

    private mutating func handle(_ message: ProxyMessage, into out: inout Output) {
        switch message {
        case let .hello(hello):
            guard phase == .greeting else { return }
            identity.name = hello.name
            identity.serverInfo = hello.serverInfo
            identity.apiVersion = hello.apiVersion
            phase = .listening
            out.send += PlaintextFrames.encode(.deviceInfoRequest) + PlaintextFrames.encode(.subscribeRawAdvertisements)
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
            out.send += PlaintextFrames.encode(.pingResponse)
        case .disconnectRequest:
            out.send += PlaintextFrames.encode(.disconnectResponse)
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
