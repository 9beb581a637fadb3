import BeaconConfig
import BeaconCore
import Testing

/// What SIGHUP applies from a new file (`ConfigReload`), as both the daemon and the fuzzer's
/// reload leg use it.
@Suite struct ConfigReloadTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    static func config(gateway: String = "gw", enterSightings: Int = 1, exitTimeout: String = "30s", regions: [Int])
        throws -> Config
    {
        try ConfigLoader.load(
            yaml: """
                gateway: {id: \(gateway)}
                monitoring: {enter_sightings: \(enterSightings), exit_timeout: \(exitTimeout)}
                clients:
                  - id: app
                    regions:

                """ + regions.map { "      - {id: r\($0), uuid: \(uuid), major: \($0)}\n" }.joined(),
            file: "beacond.yaml")
    }

    @Test func sectionsThatNeedARestartKeepTheirOldValues() throws {
        let old = try Self.config(regions: [1])
        let new = try Self.config(gateway: "renamed", enterSightings: 3, exitTimeout: "10s", regions: [1])
        let reload = ConfigReload(from: old, to: new)
        #expect(reload.needsRestart == ["gateway.id"])
        #expect(reload.running.gateway.id == "gw")
        #expect(reload.running.monitoring.enterSightings == 3, "applies live")
        #expect(reload.running.monitoring.exitTimeout == .seconds(10), "applies live")
        #expect(ConfigReload(from: old, to: old).needsRestart.isEmpty)
        #expect(ConfigReload(from: old, to: old).running == old)
    }

    /// The log level and the admin group apply live; the id, the state directory and the
    /// socket wait for a restart, each named.
    @Test func onlyTheIdTheStateDirectoryAndTheSocketWaitForARestart() throws {
        let old = try ConfigLoader.load(
            yaml: "gateway: {id: gw, state_dir: /var/lib/a, log_level: info}\n"
                + "api: {socket: /run/a/api.sock, admin_group: ops}", file: "beacond.yaml")
        let live = try ConfigLoader.load(
            yaml: "gateway: {id: gw, state_dir: /var/lib/a, log_level: debug}\n"
                + "api: {socket: /run/a/api.sock, admin_group: wheel}", file: "beacond.yaml")
        let both = ConfigReload(from: old, to: live)
        #expect(both.needsRestart.isEmpty)
        #expect(both.running == live)

        let moved = try ConfigLoader.load(
            yaml: "gateway: {id: gw2, state_dir: /var/lib/b, log_level: debug}\n"
                + "api: {socket: /run/b/api.sock, admin_group: wheel}", file: "beacond.yaml")
        let reload = ConfigReload(from: old, to: moved)
        #expect(reload.needsRestart == ["gateway.id", "gateway.state_dir", "api.socket"])
        #expect(reload.running.gateway.id == "gw" && reload.running.gateway.stateDir == "/var/lib/a")
        #expect(reload.running.api.socket == "/run/a/api.sock")
        #expect(reload.running.gateway.logLevel == .debug && reload.running.api.adminGroup == "wheel")
    }

    /// The scanner takes a new `bluetooth:` section live (`BluetoothReloadTests`).
    @Test func theBluetoothSectionAppliesWithoutARestart() throws {
        let old = try ConfigLoader.load(yaml: "bluetooth: {adapters: [hci0], min_rssi: -100}", file: "beacond.yaml")
        let new = try ConfigLoader.load(
            yaml: "bluetooth: {adapters: [hci1], min_rssi: -80, scan: passive}", file: "beacond.yaml")
        let reload = ConfigReload(from: old, to: new)
        #expect(reload.needsRestart.isEmpty)
        #expect(reload.running.bluetooth == new.bluetooth)
    }

    static let t0 = Timestamp.seconds(1_767_225_600)

    /// An iBeacon of the test's uuid with this major, heard at `t`.
    static func inside(_ major: UInt8, _ t: Timestamp) -> Sighting {
        let id = BeaconUUID(uuid)!
        let uuidBytes = [id.high, id.low].flatMap { half in
            stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: half >> UInt64($0)) }
        }
        return Sighting(
            time: t, receiver: "hci0", address: "C3:11:22:33:44:0\(major)", rssi: -60,
            manufacturerData: [
                ManufacturerDatum(company: 0x004C, payload: [0x02, 0x15] + uuidBytes + [0, major, 0, 1, 0xC5])
            ])
    }

    /// `enter_sightings` changed by a reload counts from the sightings already heard: fewer
    /// enter at the next one, more need the rest. Regions start outside (2 s of nothing).
    @Test func enterSightingsChangedByAReloadCountsOnFromWhatWasHeard() throws {
        let t0 = Self.t0
        for (from, to, heardBefore, enterAt) in [(4, 3, 2, 0.0), (2, 4, 1, 2.0)] {
            let old = try Self.config(enterSightings: from, exitTimeout: "2s", regions: [1])
            var engine = BeaconEngine(configuration: old.engineConfiguration, start: t0)
            _ = engine.advance(to: t0 + .seconds(3))
            for n in 0..<heardBefore {
                #expect(engine.ingest(Self.inside(1, t0 + .milliseconds(3_000 + Int64(n) * 200))).isEmpty)
            }
            let new = try Self.config(enterSightings: to, exitTimeout: "2s", regions: [1])
            _ = engine.apply(ConfigReload(from: old, to: new), from: old, at: t0 + .seconds(4))
            var entered: Double?
            for n in 0..<4 where entered == nil {
                let t = t0 + .milliseconds(4_000 + Int64(n) * 1_000)
                if engine.ingest(Self.inside(1, t)).contains(where: { $0.payload.kind == "region.enter" }) {
                    entered = Double(n)
                }
            }
            #expect(entered == enterAt, "enter_sightings \(from) → \(to) after \(heardBefore) heard")
        }
    }

    /// On a running engine: an unchanged region keeps its state (no second enter), an added
    /// one starts, a removed one stops, and the shorter exit timeout applies at once.
    @Test func anEngineReloadedKeepsWhatDidNotChange() throws {
        let old = try Self.config(regions: [1, 2])
        let t0 = Self.t0
        var engine = BeaconEngine(configuration: old.engineConfiguration, start: t0)
        let inside = Self.inside
        var events = engine.ingest(inside(1, t0 + .seconds(1)))
        #expect(events.map(\.payload.kind) == ["region.state"], "the first state: inside")

        let new = try Self.config(exitTimeout: "10s", regions: [1, 3])
        let applied = engine.apply(ConfigReload(from: old, to: new), from: old, at: t0 + .seconds(2))
        #expect(applied.summary.unchanged == 1 && applied.summary.added == 1 && applied.summary.removed == 1)
        #expect(!applied.summary.siteReplaced, "no receivers, assets or zones either side")
        events = engine.ingest(inside(1, t0 + .seconds(3)))
        #expect(events.isEmpty, "r1 is still inside: no second state or enter (\(events.map(\.payload.kind)))")
        events = engine.advance(to: t0 + .seconds(14))
        #expect(
            events.map(\.payload.kind) == ["region.state", "region.exit"], "10 s after its last sighting, not 30 s")
    }
}
