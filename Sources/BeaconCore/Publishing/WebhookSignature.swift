/// How a webhook's deliveries are signed (`webhooks[].signature`).
///
/// Why two: `beacond` (`X-Beacond-Timestamp`, `X-Beacond-Signature: sha256=<hex>` over
/// `timestamp.body`) is what existing receivers verify, so it stays the default; `standard`
/// is the Standard Webhooks scheme (standardwebhooks.com), which receivers verify with an
/// off-the-shelf library in any language instead of code of their own.
public enum WebhookSignature: String, Sendable, Equatable, CaseIterable {
    case beacond
    case standard

    /// The HMAC key of a Standard Webhooks secret: `whsec_` then Base64 of at least 24 bytes
    /// (the spec's range is 24 to 64), or why the text is not one.
    public static func standardKey(_ secret: String) -> Result<[UInt8], SecretProblem> {
        guard secret.hasPrefix("whsec_") else {
            return .failure(SecretProblem(message: "a Standard Webhooks secret starts with \"whsec_\""))
        }
        guard let key = Base64.decode(String(secret.dropFirst(6))) else {
            return .failure(SecretProblem(message: "what follows \"whsec_\" is not Base64"))
        }
        guard (24...64).contains(key.count) else {
            return .failure(
                SecretProblem(message: "the key is \(key.count) bytes; Standard Webhooks keys are 24 to 64 bytes"))
        }
        return .success(key)
    }

    public struct SecretProblem: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
