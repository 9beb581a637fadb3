import Foundation
import TestSupport
import Testing

/// SIGHUP is handled from the moment the API socket answers, even while later services are
/// still starting: here the system bus accepts the connection and never answers, so the BlueZ
/// input waits its 3 s for it while the API already serves. A SIGHUP then used to kill the
/// daemon (its default action); now the reload waits for the start and is applied.
@Suite struct EarlyReloadTests {
    @Test func aReloadDuringTheStartIsAppliedOnceEveryServiceRuns() throws {
        let d = try APIDaemon()
        // A bus that takes connections and says nothing.
        let path = d.dir.appendingPathComponent("silent-bus").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(listener, 8) == 0)
        try d.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(path)"])
        kill(d.daemon!.process.processIdentifier, SIGHUP)
        try d.daemon!.waitUntil("the reload", timeout: 15) { _, logs in
            logs.contains { $0.isLog("config.reloaded") }
        }
        #expect(d.daemon!.process.isRunning)
        #expect(
            d.daemon!.logs.firstIndex { $0.isLog("beacond.started") }! < d.daemon!.logs.firstIndex {
                $0.isLog("config.reloaded")
            }!, "applied once every service runs")
        // The bus goes away, so the input's connection attempt ends (a bus that hangs for good
        // holds the stop until libdbus gives up: left open, see the issue notes).
        close(listener)
        #expect(d.stop() == 0)
    }
}
