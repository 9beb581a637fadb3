import BeaconCore
import CMosquitto
import Dispatch
import Glibc
import Logging
import POSIX
import Synchronization

/// One connection to an MQTT broker, kept up on a thread of its own: libmosquitto does the
/// protocol (MQTT 5, falling back to 3.1.1 for an older broker; TLS through OpenSSL), this
/// class does the life around it — connect, lose the broker, wait with backoff and jitter,
/// connect again, for as long as the daemon runs.
///
/// Why a thin adapter and not a protocol of our own: the broker is the site's meeting point,
/// and getting keepalives, QoS 1 retries, wills and TLS right is libmosquitto's job. What the
/// site needs on top (what to subscribe to after each connect, what to do with a message) is
/// given as `Hooks` at `start`, called on this client's thread.
/// `@unchecked Sendable`: the libmosquitto handle, the backoff and the hooks are used on the
/// client's thread only (the hooks set once before it starts); what others read is behind locks.
public final class MQTTClient: @unchecked Sendable {
    public struct Settings: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var tls: Bool
        /// Certificate authorities for TLS; nil: the system's (`/etc/ssl/certs`).
        public var caFile: String?
        public var username: String?
        public var password: String?
        public var clientID: String
        public var keepaliveSeconds: Int
        /// Published by the broker when this client vanishes without a clean disconnect.
        public var will: Message?
        /// The largest packet the broker may send this client (MQTT 5's Maximum Packet Size).
        public var maximumPacketSize = (1 << 20) + (64 << 10)

        public init(
            host: String, port: Int, tls: Bool = false, caFile: String? = nil, username: String? = nil,
            password: String? = nil, clientID: String, keepaliveSeconds: Int = 30, will: Message? = nil
        ) {
            self.host = host
            self.port = port
            self.tls = tls
            self.caFile = caFile
            self.username = username
            self.password = password
            self.clientID = clientID
            self.keepaliveSeconds = keepaliveSeconds
            self.will = will
        }
    }

    public struct Message: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: Int32
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: Int32, retain: Bool) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }

        public init(topic: String, text: String, qos: Int32, retain: Bool) {
            self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
        }
    }

    /// What the operator sees in `/v1/status` and `/metrics`.
    public struct State: Sendable, Equatable {
        public var connected = false
        /// Connections made after the first.
        public var reconnects = 0
        /// Why the last attempt failed or the connection ended; nil while connected.
        public var lastError: String?
        public var protocolVersion = 5
        /// Publishes the broker refused (its PUBACK reason), by reason.
        public var refused: [String: Int] = [:]
        public init() {}
    }

    public let settings: Settings
    /// What the client tells its owner on its own thread, given at `start`.
    public struct Hooks: Sendable {
        /// After every successful connect (subscribe here: a new session starts with none).
        public let onConnect: (@Sendable (MQTTClient) -> Void)?
        /// Each message: topic, payload, retained.
        public let onMessage: (@Sendable (String, UnsafeRawBufferPointer, Bool) -> Void)?
        /// A QoS 1 publish answered: its message id, and nil when the broker took it, or why it
        /// refused it (an MQTT 5 PUBACK reason of 0x80 or more: an ACL that denies the topic
        /// answers 0x87, "not authorized").
        public let onPublished: (@Sendable (Int32, String?) -> Void)?

        public init(
            onConnect: (@Sendable (MQTTClient) -> Void)? = nil,
            onMessage: (@Sendable (String, UnsafeRawBufferPointer, Bool) -> Void)? = nil,
            onPublished: (@Sendable (Int32, String?) -> Void)? = nil
        ) {
            (self.onConnect, self.onMessage, self.onPublished) = (onConnect, onMessage, onPublished)
        }
    }

    /// Given at `start`, before the client's thread exists, and never changed after: read only
    /// on that thread. (At `start`, not `init`: the site link that takes the messages needs the
    /// client to publish with, so it is made after the client.)
    private var hooks = Hooks()
    private let handle: OpaquePointer
    private let logger: Logger
    private let stateBox = Mutex(State())
    private let stopRequested = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private var backoff = ReconnectBackoff()
    private var everConnected = false
    /// When each refusal reason was last logged: once per reason every ten minutes.
    private var refusalLogged: [String: Double] = [:]
    /// Why the broker refused the last CONNECT, for the loop that sees the connection end.
    private var refusal: String?

    public var state: State { stateBox.withLock { $0 } }

    /// Why libmosquitto cannot be used (it is loaded at the first client: `CMosquitto`), or nil.
    public static var unavailableReason: String? {
        beacond_mosquitto_unavailable_reason().map { String(cString: $0) }
    }

    /// libmosquitto could not be loaded, or would not make a client: `reason` in its words.
    public struct Unavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Throws when libmosquitto cannot be loaded (the package depends on it, so only a broken
    /// installation gets here): the caller says so and what to install, rather than trapping.
    public init(settings: Settings, logger: Logger) throws(Unavailable) {
        self.settings = settings
        self.logger = logger
        guard let made = beacond_mosquitto_new(settings.clientID, true, nil) else {
            throw Unavailable(reason: Self.unavailableReason ?? "mosquitto_new failed: out of memory")
        }
        handle = made
        beacond_mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        _ = beacond_mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        _ = beacond_mosquitto_threaded_set(handle, true)
        configure()
        installCallbacks()
    }

    deinit { beacond_mosquitto_destroy(handle) }

    /// Starts the connection's thread, which tells `hooks` what happens; it connects, and
    /// reconnects, until `stop()`. Call once.
    public func start(threadName: String = "beacond-mqtt", hooks: Hooks = Hooks()) {
        self.hooks = hooks
        detachThread(named: threadName) { [self] in
            run()
            done.signal()
        }
    }

    /// Publishes `last` (the clean stop's "offline"), disconnects cleanly, so that the broker
    /// does not send the will, and waits up to `wait` for the thread to end.
    public func stop(last: Message? = nil, within wait: TimeSpan = .seconds(2)) {
        if let last, state.connected { _ = publish(last) }
        stopRequested.store(true, ordering: .relaxed)
        _ = beacond_mosquitto_disconnect(handle)
        wake.signal()
        _ = done.wait(timeout: .now() + .nanoseconds(Int(wait.nanoseconds)))
        // Stopped is not connected, whatever the loop last saw.
        stateBox.withLock { $0.connected = false }
    }

    /// Queues a message; its id, or nil when it could not be queued (not connected, for one).
    /// QoS 1 messages are acknowledged through `onPublished`.
    @discardableResult
    public func publish(_ message: Message) -> Int32? {
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            beacond_mosquitto_publish_v5(
                handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos, message.retain, nil)
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue ? mid : nil
    }

    /// Subscribes (call from `Hooks.onConnect`). `noLocal`: not sent this client's own messages
    /// (MQTT 5; ignored by a 3.1.1 broker, so readers still check the sender).
    public func subscribe(_ pattern: String, qos: Int32, noLocal: Bool = false) {
        let options = noLocal && state.protocolVersion == 5 ? Int32(MQTT_SUB_OPT_NO_LOCAL.rawValue) : 0
        let rc = beacond_mosquitto_subscribe_v5(handle, nil, pattern, qos, options, nil)
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            logger.warning("mqtt.subscribe_failed", metadata: ["topic": "\(pattern)", "error": "\(Self.describe(rc))"])
        }
    }

    private func configure() {
        if let username = settings.username {
            _ = beacond_mosquitto_username_pw_set(handle, username, settings.password)
        }
        if let will = settings.will {
            _ = will.payload.withUnsafeBytes {
                beacond_mosquitto_will_set_v5(
                    handle, will.topic, Int32($0.count), $0.baseAddress, will.qos, will.retain, nil)
            }
        }
        if settings.tls {
            // Verify the broker against the given CAs (or the system's); TLS 1.2 at least:
            // libmosquitto 2.0.11's own default still allowed 1.1.
            let rc = beacond_mosquitto_tls_set(
                handle, settings.caFile, settings.caFile == nil ? "/etc/ssl/certs" : nil, nil, nil, nil)
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                logger.error("mqtt.tls_failed", metadata: ["error": "\(Self.describe(rc))"])
            }
            _ = beacond_mosquitto_tls_opts_set(handle, 1, "tlsv1.2", nil)
        }
    }

    /// Connects (the TCP connect blocks this thread, and only this one: libmosquitto's own
    /// loop calls cannot take an asynchronous connect), gives the broker `connectDeadline` to
    /// accept, and runs the connection until it fails or `stop()`.
    private func run() {
        var attemptStarted: Double?
        while !stopRequested.load(ordering: .relaxed) {
            if !state.connected, attemptStarted == nil {
                let rc = connect()
                guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                    failed(Self.describe(rc))
                    continue
                }
                attemptStarted = monotonicSeconds()
            }
            let rc = beacond_mosquitto_loop(handle, 200, 1)
            guard !stopRequested.load(ordering: .relaxed) else { break }
            if state.connected { attemptStarted = nil }
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                attemptStarted = nil
                stateBox.withLock { $0.connected = false }
                failed(refusal.take() ?? Self.describe(rc))
            } else if let started = attemptStarted, monotonicSeconds() - started > Self.connectDeadline {
                attemptStarted = nil
                _ = beacond_mosquitto_disconnect(handle)
                failed("no answer from the broker within \(Int(Self.connectDeadline)) s")
            }
        }
    }

    /// Connects, asking the broker (MQTT 5) to send nothing larger than `maximumPacketSize`: a
    /// larger message is then dropped by the broker, not read into this process's memory.
    private func connect() -> Int32 {
        var properties: OpaquePointer?
        defer { beacond_mosquitto_property_free_all(&properties) }
        if state.protocolVersion == 5 {
            _ = beacond_mosquitto_property_add_int32(
                &properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(settings.maximumPacketSize))
        }
        return beacond_mosquitto_connect_bind_v5(
            handle, settings.host, Int32(settings.port), Int32(settings.keepaliveSeconds), nil, properties)
    }

    /// How long a broker may take to accept a connection before it is tried again.
    public static let connectDeadline = 10.0

    /// Records why the connection is down and waits before the next attempt.
    private func failed(_ reason: String) {
        let (delay, first) = stateBox.withLock { s -> (Double, Bool) in
            let first = s.lastError != reason
            s.lastError = reason
            s.connected = false
            return (backoff.next(), first)
        }
        if first {
            logger.warning(
                "mqtt.disconnected",
                metadata: [
                    "broker": "\(settings.host):\(settings.port)", "error": "\(reason)",
                    "next":
                        "retrying with backoff (\(Int(delay.rounded())) s now, at most \(Int(ReconnectBackoff.ceiling.seconds)) s)",
                ])
        }
        _ = wake.wait(timeout: .now() + .milliseconds(Int(delay * 1000)))
    }

    fileprivate func connected(reason: Int32) {
        guard reason == 0 else {
            // A 3.1.1-only broker refuses version 5: speak 3.1.1 to it from now on.
            if reason == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue) || reason == 1,
                state.protocolVersion == 5
            {
                _ = beacond_mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
                stateBox.withLock { $0.protocolVersion = 4 }
            }
            refusal = "refused: " + String(cString: beacond_mosquitto_reason_string(reason))
            _ = beacond_mosquitto_disconnect(handle)
            return
        }
        let reconnect = everConnected
        everConnected = true
        stateBox.withLock {
            $0.connected = true
            $0.lastError = nil
            if reconnect { $0.reconnects += 1 }
            backoff.reset()
        }
        logger.info(
            "mqtt.connected",
            metadata: [
                "broker": "\(settings.host):\(settings.port)", "client": "\(settings.clientID)",
                "protocol": "\(state.protocolVersion == 5 ? "5" : "3.1.1")",
            ])
        hooks.onConnect?(self)
    }

    private func installCallbacks() {
        beacond_mosquitto_connect_v5_callback_set(handle) { _, context, reason, _, _ in
            MQTTClient.from(context).connected(reason: reason)
        }
        beacond_mosquitto_message_v5_callback_set(handle) { _, context, message, _ in
            guard let message = message?.pointee else { return }
            let client = MQTTClient.from(context)
            let topic = String(cString: message.topic)
            let payload = UnsafeRawBufferPointer(start: message.payload, count: Int(message.payloadlen))
            client.hooks.onMessage?(topic, payload, message.retain)
        }
        beacond_mosquitto_publish_v5_callback_set(handle) { _, context, mid, reason, _ in
            MQTTClient.from(context).answered(mid, reason: reason)
        }
    }

    /// A PUBACK: a reason of 0x80 or more is a refusal, counted and logged (once per reason
    /// every ten minutes), and told to whoever waits for it.
    fileprivate func answered(_ mid: Int32, reason: Int32) {
        guard reason >= 0x80 else { return hooks.onPublished?(mid, nil) ?? () }
        let why = "\(String(cString: beacond_mosquitto_reason_string(reason))) (0x\(String(reason, radix: 16)))"
        stateBox.withLock { $0.refused[why, default: 0] += 1 }
        let now = monotonicSeconds()
        if now - (refusalLogged[why] ?? -.infinity) >= 600 {
            refusalLogged[why] = now
            logger.error(
                "mqtt.publish_refused",
                metadata: [
                    "broker": "\(settings.host):\(settings.port)", "client": "\(settings.clientID)",
                    "error": "\(why)",
                    "next":
                        "the broker's ACL must let this gateway's user write the site's topics (docs/sites.md); logged again in ten minutes if it goes on",
                ])
        }
        hooks.onPublished?(mid, why)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTClient {
        Unmanaged<MQTTClient>.fromOpaque(context!).takeUnretainedValue()
    }

    private func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: beacond_mosquitto_strerror(rc))
    }
}

/// How long to wait before connecting again (`Backoff`, as webhooks retry): from 1 s
/// doubling to 5 s, each wait between half and all of it, so that the gateways of a store
/// do not all reconnect to a restarted broker in the same instant.
struct ReconnectBackoff {
    static let floor = TimeSpan.seconds(1)
    /// A store's broker is on its own network: trying it every few seconds costs nothing, and
    /// the gateways of a site must come back together after it restarts (`SiteRoles.rejoinGrace`).
    static let ceiling = TimeSpan.seconds(5)
    private var failures = 0

    mutating func next() -> Double {
        failures += 1
        return Backoff.delay(
            failures: failures, first: Self.floor, longest: Self.ceiling, jitter: Double.random(in: 0..<1)
        ).seconds
    }

    mutating func reset() { failures = 0 }
}
