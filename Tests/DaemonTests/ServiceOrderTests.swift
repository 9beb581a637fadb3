import Foundation
import TestSupport
import Testing

/// ARCHITECTURE.md's "Services, in start order" is the order the daemon starts them: a daemon
/// with every optional service (`http:`, `site:`) logs the names it started
/// (`beacond.started services=...`), and they are the documented list, in its order.
@Suite struct ServiceOrderTests {
    /// The service names of ARCHITECTURE.md's numbered list: the backticked names before each
    /// item's type (`1. \`api\` (\`APIService\`): ...`), in order.
    static func documented() throws -> [String] {
        let text = try String(
            contentsOf: Executables.packageRoot.appendingPathComponent("ARCHITECTURE.md"), encoding: .utf8)
        let section = text.components(separatedBy: "## Services, in start order")[1]
            .components(separatedBy: "\n## ")[0]
        // Each item names its services in code before its first colon outside code:
        // "8. `bluez` (`RadioInput`) or `simulator` (`SimulatedInput`): ...".
        var names: [String] = []
        for line in section.split(separator: "\n") where line.first?.isNumber == true {
            for (index, part) in line.split(separator: "`", omittingEmptySubsequences: false).enumerated() {
                if index % 2 == 0 {
                    if part.contains(":") { break }
                } else if part.allSatisfy({ $0.isLowercase || $0 == "-" }) {
                    names.append(String(part))
                }
            }
        }
        return names
    }

    @Test func theDaemonStartsItsServicesInTheDocumentedOrder() throws {
        let documented = try Self.documented()
        #expect(documented.count == 13, "\(documented)")
        let broker = try PrivateBroker()
        let port = try freeLoopbackPort()
        let d = try APIDaemon(
            extra: "site:\n  id: store-1\n  mqtt: {url: \"\(broker.url)\"}\n" + APIEndpointTests.site
                + "http: {listen: \"127.0.0.1:\(port)\"}\n")
        try d.start()
        // Logged once every service runs, which may be after the API answers.
        try eventually("beacond.started in the log") {
            d.daemon?.logs.contains { $0.contains("event=beacond.started") } == true
        }
        let line = try #require(d.daemon?.logs.first { $0.contains("event=beacond.started") }, "no beacond.started")
        let started = try #require(line.split(separator: " ").first { $0.hasPrefix("services=") })
            .dropFirst("services=".count).split(separator: ",").map(String.init)
        #expect(started.count >= 9, "\(started)")
        #expect(documented.filter(started.contains) == started, "started \(started), documented \(documented)")
        #expect(d.stop() == 0)
    }
}
