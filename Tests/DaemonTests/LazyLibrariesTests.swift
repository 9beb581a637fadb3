import Foundation
import TestSupport
import Testing

/// libmosquitto, libcrypto and libcurl are loaded when first needed (a site, a phone's key, a
/// webhook), not at start: a gateway alone with no webhook never maps them (BENCHMARKS.md,
/// the Service section's idle memory).
@Suite(.serialized) struct LazyLibrariesTests {
    /// The daemon's mapped files (read with cat: Foundation reads a /proc file's first page only,
    /// as its size says 0).
    static func mapped(_ d: APIDaemon) throws -> String {
        try runCommand(URL(fileURLWithPath: "/bin/cat"), ["/proc/\(d.daemon!.process.processIdentifier)/maps"]).stdout
    }

    @Test func aGatewayAloneMapsNoMQTTNoCryptoNoCurl() throws {
        let d = try APIDaemon(extra: AssetAPITests.site)
        try d.start()
        let maps = try Self.mapped(d)
        for library in ["libmosquitto", "libcrypto", "libssl", "libcurl"] {
            #expect(!maps.contains(library), "\(library) mapped by a gateway with no site, phone or webhook")
        }
        #expect(d.stop() == 0)
    }

    @Test func aSiteLoadsMQTTAndAPhoneLoadsCrypto() throws {
        let broker = try PrivateBroker()
        let d = try APIDaemon(
            extra: ForeignReceiverTests.site(broker)
                .replacingOccurrences(
                    of: "assets:\n", with: "assets:\n  - {id: anna, beacon: {irk: ec0234a357c8ad05341010a60a397d9b}}\n"),
            gatewayID: "gw1")
        try d.start()
        try eventually("libmosquitto and libcrypto mapped") {
            let maps = try Self.mapped(d)
            return maps.contains("libmosquitto") && maps.contains("libcrypto")
        }
        #expect(d.stop() == 0)
    }
}
