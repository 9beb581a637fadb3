import Foundation
import TestSupport
import Testing

/// SIGHUP is handled from the moment the API socket answers, even while later services are
/// still starting: here the system bus accepts the connection and never answers, so the BlueZ
/// input waits its 3 s for it while the API already serves. A SIGHUP then used to kill the
/// daemon (its default action); now the reload waits for the start and is applied.
@Suite struct EarlyReloadTests {
    /// A bus that takes connections and says nothing: its listening socket.
    static func silentBus(at path: String) -> Int32 {
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
        return listener
    }

    @Test func aReloadDuringTheStartIsAppliedOnceEveryServiceRuns() throws {
        let d = try APIDaemon()
        let path = d.dir.appendingPathComponent("silent-bus").path
        let listener = Self.silentBus(at: path)
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
        close(listener)
        #expect(d.stop() == 0)
    }

    /// A bus that never answers does not hold the stop: the scanner stuck in its connect is
    /// left behind after 5 s, said in the log, and the daemon exits 0 (it was killed by the
    /// harness after 10 s before).
    @Test func aBusThatNeverAnswersDoesNotHoldTheStop() throws {
        let d = try APIDaemon()
        let path = d.dir.appendingPathComponent("silent-bus").path
        let listener = Self.silentBus(at: path)
        defer { close(listener) }
        try d.start(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(path)"])
        #expect(d.stop() == 0)
        #expect(d.daemon!.logs.contains { $0.isLog("bluez.stop_abandoned", level: "warning") }, "\(d.daemon!.logs)")
        #expect(d.daemon!.logs.contains { $0.isLog("beacond.stopped") })
    }
}
