import BeaconCore
import Crypto

/// One delivery's request: its events written once, as a CloudEvents JSON batch, into one
/// buffer that begins with what the signature covers before the body (`<timestamp>.`, or
/// `<id>.<timestamp>.` for Standard Webhooks), and its headers.
///
/// Why: the batch was joined into a string, copied into bytes, and copied again behind the
/// signing prefix: three copies of every byte a webhook receives. Here the MAC is taken over
/// the buffer as it lies, and the request sends the part after the prefix (ARCHITECTURE.md,
/// "The path of one advertisement").
struct SignedRequest {
    /// The signing prefix, then the body.
    private let bytes: [UInt8]
    private let bodyStart: Int
    let headers: [String]

    /// The request's body: `[event,event,…]`.
    var body: ArraySlice<UInt8> { bytes[bodyStart...] }

    /// `messageID` names the batch, the same on every retry of it (a Standard Webhooks
    /// receiver de-duplicates by `webhook-id`). Fails only when libcrypto cannot be loaded to
    /// sign (then retried as an unreachable receiver is).
    init(
        _ settings: WebhookWorker.Settings, events: some Collection<String>, at t: Timestamp, messageID: String
    ) throws(DeliveryFailure) {
        var headers = [
            "Content-Type: application/cloudevents-batch+json", "User-Agent: beacond",
            "X-Beacond-Webhook: \(settings.id)",
        ]
        if let gateway = settings.gateway { headers.append("X-Beacond-Gateway: \(gateway)") }
        let timestamp = String(t.nanoseconds / 1_000_000_000)
        let prefix: String
        switch (settings.secret, settings.signature) {
        case (nil, _): prefix = ""
        case (_, .beacond): prefix = timestamp + "."
        case (_, .standard): prefix = "\(messageID).\(timestamp)."
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(prefix.utf8.count + 2 + events.reduce(0) { $0 + $1.utf8.count + 1 })
        bytes += prefix.utf8
        bytes.append(UInt8(ascii: "["))
        for (i, event) in events.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += event.utf8
        }
        bytes.append(UInt8(ascii: "]"))
        if let secret = settings.secret {
            let cannotSign = DeliveryFailure.unreachable(
                "cannot sign: \(AES128.unavailableReason ?? "libcrypto failed")")
            guard let mac = HMACSHA256.mac(key: secret, message: bytes) else { throw cannotSign }
            switch settings.signature {
            case .beacond:
                headers.append("X-Beacond-Timestamp: \(timestamp)")
                headers.append("X-Beacond-Signature: sha256=\(HMACSHA256.hex(mac))")
            case .standard:
                headers.append("webhook-id: \(messageID)")
                headers.append("webhook-timestamp: \(timestamp)")
                headers.append("webhook-signature: v1,\(Base64.encode(mac))")
            }
        }
        (self.bytes, bodyStart, self.headers) = (bytes, prefix.utf8.count, headers)
    }
}
