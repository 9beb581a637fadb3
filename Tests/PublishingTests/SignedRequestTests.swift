import BeaconCore
import Crypto
import Testing

@testable import Publishing

/// A delivery's body is written once, behind what its signature covers: the MAC taken over
/// that one buffer is the MAC of the prefix and the body as a receiver checks it.
@Suite struct SignedRequestTests {
    static func settings(secret: [UInt8]?, signature: WebhookSignature) -> WebhookWorker.Settings {
        WebhookWorker.Settings(
            id: "crm", url: "http://127.0.0.1:9/hook", events: EventTypeGlob(["*"]), secret: secret,
            signature: signature, schedule: DeliverySchedule(maxEvents: 10, maxDelay: .seconds(0), maxAge: .hours(1)),
            timeout: .seconds(5))
    }

    static let events = [#"{"id":"a"}"#, #"{"id":"b"}"#]
    static let body = Array(#"[{"id":"a"},{"id":"b"}]"#.utf8)
    static let key = Array("s3cret".utf8)

    @Test func theBeacondSignatureCoversTheTimestampAndTheBodySent() throws {
        let request = try SignedRequest(
            Self.settings(secret: Self.key, signature: .beacond), events: Self.events, at: .seconds(1_700_000_000),
            messageID: "a_b")
        #expect(Array(request.body) == Self.body)
        let mac = try #require(HMACSHA256.mac(key: Self.key, message: Array("1700000000.".utf8) + Self.body))
        let expected = HMACSHA256.hex(mac)
        #expect(request.headers.contains("X-Beacond-Signature: sha256=\(expected)"))
        #expect(request.headers.contains("X-Beacond-Timestamp: 1700000000"))
    }

    @Test func theStandardSignatureCoversTheIdTheTimestampAndTheBodySent() throws {
        let request = try SignedRequest(
            Self.settings(secret: Self.key, signature: .standard), events: Self.events, at: .seconds(1_700_000_000),
            messageID: "a_b")
        #expect(Array(request.body) == Self.body)
        let mac = try #require(HMACSHA256.mac(key: Self.key, message: Array("a_b.1700000000.".utf8) + Self.body))
        #expect(request.headers.contains("webhook-signature: v1,\(Base64.encode(mac))"))
        #expect(request.headers.contains("webhook-id: a_b"))
    }

    @Test func anUnsignedRequestIsTheBodyAlone() throws {
        let request = try SignedRequest(
            Self.settings(secret: nil, signature: .beacond), events: Self.events, at: .seconds(5), messageID: "a_b")
        #expect(Array(request.body) == Self.body)
        #expect(!request.headers.contains { $0.hasPrefix("X-Beacond-Signature") })
    }
}
