import Foundation
import TestSupport
import Testing

/// `signature: standard`: real deliveries verified by the `standardwebhooks` package from PyPI,
/// as a receiver in any language would verify them with its own Standard Webhooks library.
@Suite(.serialized) struct StandardWebhooksTests {
    /// 32 random bytes as a Standard Webhooks secret.
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+Dw1EYcAQt0="

    static func daemon(_ receiver: WebhookReceiver, secretText: String = secret, fail: Bool = false) throws
        -> APIDaemon
    {
        let dir = try Executables.temporaryDirectory()
        let file = dir.appendingPathComponent("hook.secret").path
        try (secretText + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        return try APIDaemon(
            extra: WebhookDeliveryTests.site(regions: 3) + "webhooks:\n"
                + WebhookDeliveryTests.webhook("crm", receiver, secretFile: file, extra: ", signature: standard"),
            monitoring: WebhookDeliveryTests.monitoring, dir: dir)
    }

    @Test func deliveriesVerifyWithTheStandardWebhooksLibrary() throws {
        let receiver = try WebhookReceiver(standardSecret: Self.secret, fail: 1)
        let other = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let wrongKey = try WebhookReceiver(standardSecret: other)
        let d = try Self.daemon(receiver)
        try d.start()
        try d.post((1...3).map { APIDaemon.sighting(major: $0) })
        try receiver.waitUntil("every event delivered") { _ in receiver.acceptedIDs.count == 3 }
        let expected = try d.history(type: "region.*").compactMap { $0["id"] as? String }
        let requests = receiver.requests
        #expect(requests.allSatisfy { $0["standard_ok"] as? Bool == true }, "\(requests)")
        #expect(requests.allSatisfy { $0["tampered_rejected"] as? Bool == true }, "a changed body fails")
        // The refused first batch is retried with the same webhook-id (receivers de-duplicate
        // by it), and beacond's own signature headers are not sent.
        let headers = requests.map { $0["headers"] as? [String: String] ?? [:] }
        #expect(headers[0]["webhook-id"] != nil && headers[0]["webhook-id"] == headers[1]["webhook-id"])
        #expect(Set(headers.compactMap { $0["webhook-id"] }).count == requests.count - 1)
        #expect(
            headers.allSatisfy { $0["x-beacond-signature"] == nil && $0["webhook-signature"]?.hasPrefix("v1,") == true }
        )
        #expect(receiver.acceptedIDs.sorted() == expected.sorted())
        #expect(d.stop() == 0)

        // The same deliveries, to a receiver holding another key: the library refuses them.
        let d2 = try Self.daemon(wrongKey)
        try d2.start()
        try d2.post([APIDaemon.sighting(major: 1)])
        try wrongKey.waitUntil("a delivery") { !$0.isEmpty }
        #expect(wrongKey.requests.first?["standard_ok"] as? Bool == false)
        #expect((wrongKey.requests.first?["standard_error"] as? String)?.contains("No matching signature") == true)
        #expect(d2.stop() == 0)
    }

    /// A gateway whose clock is 10 minutes behind signs with a stale timestamp, and the
    /// library refuses it as a replay: what a receiver sees of a wrong clock.
    @Test func aStaleTimestampFailsVerification() throws {
        guard FileManager.default.fileExists(atPath: WallClockStepTests.libfaketime) else {
            throw TestFailure("libfaketime is missing: scripts/deps installs it")
        }
        let receiver = try WebhookReceiver(standardSecret: Self.secret)
        let d = try Self.daemon(receiver)
        try d.start(
            environment: [
                "LD_PRELOAD": WallClockStepTests.libfaketime, "FAKETIME": "-600", "DONT_FAKE_MONOTONIC": "1",
            ], launcher: ["/usr/bin/env"])
        try d.post([APIDaemon.sighting(major: 1)])
        try receiver.waitUntil("a delivery") { !$0.isEmpty }
        let first = receiver.requests[0]
        #expect(first["standard_ok"] as? Bool == false)
        #expect((first["standard_error"] as? String)?.contains("too old") == true, "\(first)")
        #expect(d.stop() == 0)
    }

    /// --check-config refuses a standard signature without a secret, or with a secret that
    /// is not a whsec_ key, at the `signature` key's line.
    @Test func checkConfigRefusesAStandardSignatureWithoutAWhsecSecret() throws {
        let receiver = try WebhookReceiver()
        for (text, message) in [
            ("s3cret", "is not a Standard Webhooks secret: a Standard Webhooks secret starts with \"whsec_\""),
            ("whsec_not*base64", "what follows \"whsec_\" is not Base64"),
            ("whsec_c2hvcnQ=", "the key is 5 bytes; Standard Webhooks keys are 24 to 64 bytes"),
        ] {
            let d = try Self.daemon(receiver, secretText: text)
            let check = try runCommand(Executables.built("beacond"), ["--check-config", "--config", d.configPath])
            #expect(
                check.status == 78 && check.stderr.contains("webhooks[0].signature") && check.stderr.contains(message),
                "\(check.stderr)")
        }
    }
}
