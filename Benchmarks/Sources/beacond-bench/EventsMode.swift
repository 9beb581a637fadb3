import BeaconCore

#if canImport(Glibc)
    import Glibc
#endif

/// `beacond-bench --events [N]`: how fast events become CloudEvents text, as the publisher
/// and `beacond replay` write them. A store's mix: mostly `asset.position`, with ranging
/// (20 beacons), region enters and zone alerts. Prints events per CPU-second.
func eventsMode(count: Int) {
    let beacon = IBeaconID(
        uuid: BeaconUUID(high: 0xE2C5_6DB5_DFFB_48D2, low: 0xB060_D0F5_A710_96E0), major: 42, minor: 7)
    let ranged = (0..<20).map { i in
        RangedBeacon(
            beacon: IBeaconID(uuid: beacon.uuid, major: 42, minor: UInt16(i)), rssi: -60 - Double(i) * 1.37,
            distance: 0.4 + Double(i) * 0.71, proximity: .near, receiver: "gw1-hci0")
    }
    let mix: [EventPayload] = [
        .assetPosition(
            AssetFix(
                asset: "cart-17", position: Point(x: 12.3456, y: 7.891), level: 0, accuracy: 1.84, zones: ["aisle-3"],
                receivers: ["gw1-hci0", "gw2-hci0", "gw3-hci1"])),
        .assetPosition(
            AssetFix(
                asset: "pallet-204", position: Point(x: 31.02, y: 4.5), level: 1, accuracy: 2.7, zones: [],
                receivers: ["gw2-hci0", "gw3-hci1", "gw1-hci0"])),
        .ranging(client: "storefront", region: "aisle-3", beacons: ranged),
        .regionEnter(
            client: "storefront", region: "store", beacon: beacon, receiver: "gw1-hci0", rssi: -67, distance: 2.24),
        .zone(
            ZoneAlert(
                alarm: "exit-door", asset: "cart-17", zone: "exit", condition: .enter, position: Point(x: 1.5, y: 2),
                level: 0)),
    ]
    var ids = EventIDGenerator(nonce: 7)
    var bytes = 0
    let start = cpuSeconds()
    for n in 0..<count {
        let event = Event(time: Timestamp(nanoseconds: Int64(n) * 1_000_000), payload: mix[n % mix.count])
        bytes += CloudEvent.text(event, id: ids.next(for: event.time), gatewayID: "store-042-gw1").utf8.count
    }
    let cpu = cpuSeconds() - start
    print(
        "\(count) events as CloudEvents text (\(bytes / count) bytes each) in \(cpu) CPU-s: "
            + "\(Int(Double(count) / cpu)) events per CPU-second")
}
