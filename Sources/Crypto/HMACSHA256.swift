import CCrypto

/// HMAC-SHA256 (RFC 2104), for the webhooks' `X-Beacond-Signature` and Standard Webhooks'
/// `webhook-signature`, from the system's libcrypto (3.3–6.7 times faster than the hand-written
/// one it replaced, BENCHMARKS.md). Nil only when libcrypto cannot be loaded
/// (`AES128.unavailableReason`): the delivery then fails with that reason and is retried.
public enum HMACSHA256 {
    /// A MAC as lower-case hex.
    public static func hex(_ mac: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in mac {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        let ok = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    beacond_hmac_sha256(k.baseAddress, k.count, m.baseAddress, m.count, o.baseAddress)
                }
            }
        }
        return ok == 1 ? out : nil
    }
}
