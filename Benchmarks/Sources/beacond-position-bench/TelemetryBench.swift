import BeaconConfig
import BeaconCore
import Dispatch
import Foundation
import Simulation

/// Issue 40: what telemetry frames cost the engine. The store's receivers and 1,000 address
/// tags at 10 advertisements/s for 20 s, run through the engine as they are and with one
/// sighting in ten an Eddystone-TLM frame instead (as a tag interleaves them), alternately,
/// three times each; and the tag state each asset keeps.
///   swift run -c release beacond-position-bench telemetry
func telemetryBench() {
    let (config, settings, start) = thousandTags()
    var sim = SiteSimulator(config: config, settings: settings, seed: 7, start: start)
    var plain: [Sighting] = []
    while sim.now < start + .seconds(20) { plain += sim.advance().sightings }
    // 2,950 mV, 21.5 °C, counters.
    let tlm: [UInt8] = [0x20, 0x00, 0x0B, 0x86, 0x15, 0x80, 0, 0, 0x03, 0xE8, 0, 0, 0x03, 0xE8]
    var mixed = plain
    for i in stride(from: 9, to: mixed.count, by: 10) {
        mixed[i].manufacturerData = []
        mixed[i].serviceData = [ServiceDatum(uuid: BeaconDecoder.eddystoneServiceUUID, payload: tlm)]
    }
    func run(_ sightings: [Sighting]) -> (perSecond: Double, telemetry: Int) {
        var engine = BeaconEngine(configuration: config.engineConfiguration, start: start)
        let t0 = DispatchTime.now().uptimeNanoseconds
        var events = 0
        for s in sightings { events += engine.ingest(s).count }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        precondition(events >= 0)
        return (Double(sightings.count) / seconds, engine.counters.telemetryFrames)
    }
    print("telemetry: \(plain.count) sightings of 1,000 tags, 20 s; one in ten a TLM frame in the second run")
    var without: [Double] = []
    var with: [Double] = []
    for _ in 0..<3 {
        without.append(run(plain).perSecond)
        let mixedRun = run(mixed)
        with.append(mixedRun.perSecond)
        precondition(mixedRun.telemetry > plain.count / 20, "the TLM frames were not joined to their tags")
    }
    func k(_ v: [Double]) -> String { v.map { String(format: "%.0f k", $0 / 1000) }.joined(separator: ", ") }
    print("  without telemetry: \(k(without)) sightings/s")
    print("  one in ten TLM:    \(k(with)) sightings/s")
    let ratio = with.sorted()[1] / without.sorted()[1]
    print(
        String(
            format: "  median ratio: %.3f (%.1f %% %@)", ratio, abs(1 - ratio) * 100, ratio < 1 ? "slower" : "faster"))
    print(
        "  tag state per asset, inline: TagTelemetry \(MemoryLayout<TagTelemetry>.stride) B, "
            + "AdvertisingInterval \(MemoryLayout<AdvertisingInterval>.stride) B")
}
