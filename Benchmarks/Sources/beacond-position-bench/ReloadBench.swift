import BeaconConfig
import BeaconCore
import Dispatch
import Foundation

/// Issue 51, item 17: a reload and a restart's restore looked every asset up by scanning the
/// assets, quadratic in them. `ASSETS` address tags and 50 zones: the engine reloaded with one
/// asset renamed (every other asset adopted), and every asset's saved state restored into a
/// fresh engine, each timed.
///   swift run -c release beacond-position-bench reload 20000
func reloadBench(assets count: Int) {
    let zones = (0..<50).map { z in
        "  - {id: zone-\(z), level: 0, polygon: [[\(z % 10 * 3), \(z / 10 * 3)], [\(z % 10 * 3 + 2), \(z / 10 * 3)], "
            + "[\(z % 10 * 3 + 2), \(z / 10 * 3 + 2)], [\(z % 10 * 3), \(z / 10 * 3 + 2)]]}"
    }.joined(separator: "\n")
    func yaml(renaming first: String) -> String {
        let assets = (0..<count).map { i in
            let a = i + 1
            let id = i == 0 ? first : "asset-\(i)"
            return "  - {id: \(id), beacon: {address: \"D0:00:00:\(hex(a >> 16)):\(hex(a >> 8)):\(hex(a))\"}}"
        }.joined(separator: "\n")
        return """
            receivers:
              - {id: r1, position: {x: 0, y: 0}}
              - {id: r2, position: {x: 30, y: 0}}
              - {id: r3, position: {x: 0, y: 15}}
            assets:
            \(assets)
            zones:
            \(zones)

            """
    }
    func hex(_ v: Int) -> String {
        let s = String(v & 0xFF, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }
    let start = Timestamp.seconds(1_763_805_600)
    let before = try! ConfigLoader.load(yaml: yaml(renaming: "asset-0"), file: "bench.yaml")
    let after = try! ConfigLoader.load(yaml: yaml(renaming: "asset-renamed"), file: "bench.yaml")
    var engine = BeaconEngine(configuration: before.engineConfiguration, start: start)
    // Each asset's saved state as a restart reads it (no zone: the lookup is what is timed).
    let saved = before.assets.map {
        AssetSnapshot(asset: $0.id, lastHeard: start, position: Point(x: 1, y: 1), level: 0, accuracy: 1, zones: [])
    }
    var t0 = DispatchTime.now().uptimeNanoseconds
    let changed = engine.reconfigureSite(
        after.engineConfiguration.site, calibrations: after.engineConfiguration.receivers, at: start + .seconds(1))
    let reload = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
    precondition(changed)
    var fresh = BeaconEngine(configuration: before.engineConfiguration, start: start)
    t0 = DispatchTime.now().uptimeNanoseconds
    let restored = saved.filter { fresh.restore($0) }.count
    let restore = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6
    print(
        "reload: \(count) assets, 50 zones: the reload \((reload * 10).rounded() / 10) ms, "
            + "restoring \(saved.count) saved assets \((restore * 10).rounded() / 10) ms (\(restored) with zones)")
}
