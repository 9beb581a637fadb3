import BeaconCore

/// `esphome:` (SPEC §9): an ESPHome Bluetooth proxy the daemon connects to as a client of its
/// native API, each advertisement it forwards a sighting of `receiver` (a receiver of
/// `receivers[]`: its position, calibration and level are that entry's).
public struct ESPHomeProxySpec: Sendable, Equatable {
    public var receiver: String
    public var host: String
    public var port = 6053
    /// The proxy's `api: encryption: key:` (base64 of 32 bytes), in a file only the daemon's
    /// user reads — or inline (`encryption_key`), for a test bench.
    public var encryptionKeyFile: String?
    public var encryptionKey: String?
    /// The API password of old firmware (`api: password:`); nil for none.
    public var password: String?

    public init(receiver: String, host: String) {
        self.receiver = receiver
        self.host = host
    }

    /// A key's 32 bytes from its base64 text (surrounding white space ignored), or why not.
    public static func key(_ text: String) -> Result<[UInt8], KeyProblem> {
        let trimmed = text.trimmingWhitespace
        guard let bytes = Base64.decode(trimmed) else {
            return .failure(KeyProblem(message: "not base64 (ESPHome's api: encryption: key: is 44 characters)"))
        }
        guard bytes.count == 32 else {
            return .failure(KeyProblem(message: "\(bytes.count) bytes, ESPHome's keys are 32"))
        }
        return .success(bytes)
    }

    public struct KeyProblem: Error, Sendable, Equatable {
        public var message: String
        public init(message: String) { self.message = message }
    }
}

extension String {
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
