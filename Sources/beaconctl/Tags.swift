import APIModel
import ArgumentParser
import BeaconCore

/// `beaconctl tags`: every asset's tag, worst first — missing, then low batteries (SPEC
/// §7.5) — as the walk through a store to change batteries and find lost tags starts.
struct Tags: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Assets' tags, worst first: missing, low battery, then the rest.")
    @OptionGroup var common: Common
    @Flag(help: "Only tags not heard for their missing_after.") var missing = false
    @Flag(name: .customLong("battery-low"), help: "Only tags whose battery is low.") var batteryLow = false

    func run() throws {
        var query: [String] = []
        if missing { query.append("missing=true") }
        if batteryLow { query.append("battery_low=true") }
        try common.show("/v1/tags" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))) { value in
            var t = Table(
                "ASSET", "STATE", "BATTERY_MV", "TEMP_C", "MOVING", "INTERVAL_MS", "LAST_SEEN", "LAST_POSITION")
            for tag in TagList(json: value).tags {
                let state = tag.missing ? "missing" : tag.batteryLow ? "battery low" : "ok"
                let position = tag.lastPosition.map { p in
                    "\(cell(p.x)),\(cell(p.y)) L\(p.level)" + (p.zones.isEmpty ? "" : " " + list(p.zones))
                }
                t.add(
                    tag.asset, state, tag.battery.map { "\($0.millivolts)" } ?? "-", cell(tag.temperatureC),
                    tag.moving.map(yes) ?? "-", tag.advertisingIntervalMilliseconds.map(String.init) ?? "-",
                    tag.lastSeen ?? "-", position ?? "-")
            }
            return t.text
        }
    }
}
