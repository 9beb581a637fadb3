import CCrypto

/// HMAC-SHA256 (RFC 2104), for the webhooks' `X-Beacond-Signature` and Standard Webhooks'
/// `webhook-signature`, from the system's libcrypto now that the daemon links it for AES.
public enum HMACSHA256 {
    /// The MAC of `message` under `key`, as lower-case hex.
    public static func hex(key: [UInt8], message: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in mac(key: key, message: message) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    public static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let done = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    // A zero-length key or message still needs a valid pointer.
                    var empty: UInt8 = 0
                    return withUnsafePointer(to: &empty) { e in
                        HMAC(
                            EVP_sha256(), UnsafeRawPointer(k.baseAddress ?? e), Int32(k.count), m.baseAddress ?? e,
                            m.count, o.baseAddress, &length)
                    }
                }
            }
        }
        precondition(done != nil && length == 32, "libcrypto's HMAC-SHA256 failed")
        return out
    }
}
