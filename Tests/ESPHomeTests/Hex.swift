/// Bytes from hex: the messages below were made by aioesphomeapi's own `api_pb2` and
/// `make_plain_text_packets` (46.23.0), the client Home Assistant uses, so they are ESPHome's
/// wire format by construction, not this client's idea of it.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count, by: 2).map { i in
        UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16)!
    }
}

enum Wire {
    static let opening = hex("000d010a07626561636f6e641001180a000003")
    static let afterHello = hex("0000090002420801")
    static let helloResponse = hex(
        "002b020801100c1a1c70726f78792d612028657370686f6d652076323032352e31312e3029220770726f78792d61")
    static let deviceInfo = hex(
        "006b0a120770726f78792d611a1141413a42423a43433a30303a31313a32322209323032352e31312e30321265737033322d6333"
            + "2d6465766b69746d2d3162094573707265737369666a0d4169736c6520332070726f7879787f92011141413a42423a43433a"
            + "30303a31313a3234")
    /// Two advertisements: an iBeacon (random address) and an Eddystone-UID with a name.
    static let advertisements = hex(
        "00545d0a2d08d588cd9192e2301085011801221e0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e0002a0007c50a"
            + "230893e2e9eea703109f0122170303aafe0c16aafe10ee02616263646500050954616731")
    static let ping = hex("000007")
    static let pingResponse = hex("000008")
}
