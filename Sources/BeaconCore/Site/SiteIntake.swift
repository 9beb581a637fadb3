/// Takes what arrives on a site's `sightings/<id>` topics and decides what reaches the
/// engine: the records of known gateways and receivers, sorted by time; everything else
/// counted by reason, with the first problem of each message kept for a log line.
///
/// Why a value of its own: a site's broker is a shared place. A gateway with a broken clock,
/// a script publishing rubbish, a receiver renamed on one gateway and not in the site file,
/// a flood: each must cost a counter and a line now and then, never the engine's time or a
/// crash. Kept pure (no clock of its own, no I/O) so every case has an exact test.
public struct SiteIntake {
    /// What became of one message.
    public struct Outcome: Sendable, Equatable {
        public var sightings: [Sighting] = []
        /// Records (or, for `rejected`, the whole message) dropped, by reason.
        public var dropped: [String: Int] = [:]
        /// The whole message was refused for this reason (`too_large`, `bad_topic`,
        /// `unknown_gateway`, `bad_header`, `wrong_gateway`).
        public var rejected: String?
        /// The first problem found, with its line, for the log.
        public var problem: String?
        /// Batches missing before this one (by sequence number).
        public var lost = 0
        /// The message was a gateway's batch (a header line): a sign of life of that gateway.
        /// A message without one (an ESP32's plain lines, an empty message) is no such sign,
        /// or anyone could keep a hung locator "alive" by publishing empty messages on its topic.
        public var batch = false
    }

    /// What this gateway knows of another one, for `/v1/status` and `/metrics`.
    public struct Peer: Sendable, Equatable {
        public var lastBatch: Timestamp?
        public var batches = 0
        public var lost = 0
        public var lastSeq: Int64?
        /// Its clock minus ours when its last batch arrived (transit included): positive
        /// when it runs ahead.
        public var clockOffset: TimeSpan?
    }

    public let gateway: String
    /// The gateways the site file names (receivers' `gateway:`); empty: any.
    public let knownGateways: Set<String>
    /// The receivers the site file names; empty: any valid id.
    public let knownReceivers: Set<String>
    public private(set) var peers: [String: Peer] = [:]
    private var reader = SightingLineReader()
    /// At most this many peers are tracked, besides the gateways the site file names: ids
    /// come from the network.
    public static let maxPeers = 256
    /// A sequence gap up to this is counted as lost batches (4 a second: about four minutes).
    public static let maxGap: Int64 = 1000

    public init(gateway: String, knownGateways: Set<String>, knownReceivers: Set<String>) {
        self.gateway = gateway
        self.knownGateways = knownGateways
        self.knownReceivers = knownReceivers
    }

    /// Reads a message of `sightings/<sender>` that arrived at `now`. Nil for this gateway's
    /// own batches (a broker without MQTT 5's No Local sends them back).
    public mutating func take(sender: String, payload: UnsafeRawBufferPointer, at now: Timestamp) -> Outcome? {
        guard sender != gateway else { return nil }
        var out = Outcome()
        func reject(_ reason: String, _ problem: String) -> Outcome {
            out.rejected = reason
            out.dropped[reason, default: 0] += 1
            out.problem = problem
            return out
        }
        guard Identifier.problem(sender) == nil else {
            return reject("bad_topic", "the topic's last level is not a gateway id")
        }
        guard payload.count <= SightingBatch.maxBytes else {
            return reject("too_large", "\(payload.count) bytes, more than \(SightingBatch.maxBytes)")
        }
        var lines = Lines(payload)
        var first = lines.next()
        while let line = first, line.isBlank { first = lines.next() }
        var header: SightingBatch.Header?
        if let line = first, let read = SightingBatch.header(line.bytes) {
            switch read {
            case let .failure(error): return reject("bad_header", "line \(line.number): \(error.reason)")
            case let .success(h):
                guard h.gateway == sender else {
                    return reject("wrong_gateway", "the header says gateway \"\(h.gateway)\", the topic \"\(sender)\"")
                }
                header = h
            }
            first = lines.next()
        }
        if header != nil, !knownGateways.isEmpty, !knownGateways.contains(sender) {
            return reject("unknown_gateway", "gateway \"\(sender)\" is not named by any receiver of the site file")
        }
        // The gateways the site file names are always taken: junk ids cannot crowd them out.
        if peers[sender] == nil, peers.count >= Self.maxPeers, !knownGateways.contains(sender) {
            return reject("too_many_gateways", "more than \(Self.maxPeers) senders on the site's topics")
        }
        var line = first
        while let current = line {
            defer { line = lines.next() }
            if current.isBlank { continue }
            do throws(SightingRecordError) {
                let s = try reader.read(current.bytes)
                if !knownReceivers.isEmpty, !knownReceivers.contains(s.receiver) {
                    out.dropped["unknown_receiver", default: 0] += 1
                    if out.problem == nil {
                        out.problem = "line \(current.number): receiver \"\(s.receiver)\" is not in the site file"
                    }
                    continue
                }
                out.sightings.append(s)
            } catch {
                out.dropped["malformed", default: 0] += 1
                if out.problem == nil { out.problem = "line \(current.number): \(error.reason)" }
            }
        }
        out.sightings.sort { $0.time < $1.time }
        var peer = peers[sender] ?? Peer()
        peer.batches += 1
        peer.lastBatch = now
        if let header {
            out.batch = true
            // A gap wider than `maxGap` is no loss but a sequence that is not this gateway's
            // (another client publishing under its id): counted as lost it would say billions.
            if let last = peer.lastSeq, header.seq > last + 1, header.seq - last - 1 <= Self.maxGap {
                out.lost = Int(header.seq - last - 1)
            }
            peer.lastSeq = header.seq
            peer.lost += out.lost
            peer.clockOffset = header.sent - now
        }
        peers[sender] = peer
        return out
    }

    /// A peer's clock offset beyond this is worth a warning: its records are then taken at
    /// the wrong time (SPEC §6: as relays' are).
    public static let clockWarning = TimeSpan.seconds(2)
}

/// The lines of a payload, numbered from 1, without their newlines.
private struct Lines {
    struct Line {
        var bytes: UnsafeRawBufferPointer
        var number: Int
        var isBlank: Bool { bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
    }

    let payload: UnsafeRawBufferPointer
    var at = 0
    var number = 0

    init(_ payload: UnsafeRawBufferPointer) { self.payload = payload }

    mutating func next() -> Line? {
        guard at < payload.count else { return nil }
        var end = at
        while end < payload.count, payload[end] != 0x0A { end += 1 }
        defer { at = end + 1 }
        number += 1
        return Line(bytes: UnsafeRawBufferPointer(rebasing: payload[at..<end]), number: number)
    }
}
