import Testing

@testable import BeaconCore

/// ESPresense's and OpenMQTTGateway's messages (SPEC §9), in exactly the shapes their firmware
/// publishes, read into sightings of the mapped receivers; everything else counted by reason.
@Suite struct ForeignMessageTests {
    static let t = Timestamp.seconds(1_763_805_600)

    static var settings: ForeignReceivers {
        var s = ForeignReceivers()
        s.espresense = .init(prefix: "espresense", receivers: ["kitchen": "rx-kitchen"])
        s.openMQTTGateway = .init(prefix: "home", receivers: ["OMG_lobby": "rx-lobby"])
        return s
    }

    func take(_ intake: inout ForeignIntake, _ topic: String, _ text: String) -> ForeignIntake.Outcome? {
        Array(text.utf8).withUnsafeBytes { intake.take(topic: topic, payload: $0, at: Self.t) }
    }

    /// `BleFingerprint::fill` of ESPresense 3.x for an iBeacon: its id, `rssi@1m` (the
    /// beacon's measured power), the median `rssi`, the node's own distance, the mac.
    @Test func anESPresenseIBeaconIsThatBeaconHeardByTheRoomsReceiver() throws {
        var intake = ForeignIntake(settings: Self.settings)
        let out = try #require(
            take(
                &intake, "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-7/kitchen",
                #"{"id":"iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-7","idType":10,"rssi@1m":-61,"rssi":-72,"raw":3.55,"distance":3.41,"speed":0.04,"mac":"f0a1b2c3d4e5","interval":102}"#
            ))
        let s = try #require(out.sighting)
        #expect(out.dropped == nil && s.receiver == "rx-kitchen" && s.rssi == -72 && s.time == Self.t)
        #expect(s.address == "F0:A1:B2:C3:D4:E5" && s.addressType == nil)
        guard case let .success(frame) = BeaconDecoder.decode(s), case let .ibeacon(id)? = frame.identity else {
            Issue.record("no iBeacon in \(s)")
            return
        }
        #expect(id.uuid.description == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" && id.major == 100 && id.minor == 7)
        #expect(frame.rssiAt1m == -61, "rssi@1m is the frame's measured power; the node's distance is not used")
    }

    /// A phone the node resolved itself (`irk:`), a known address, and fingerprints: the `mac`
    /// is the identity (a phone's is resolved again by beacond's own keys).
    @Test func otherESPresenseIdsAreTheirAddress() throws {
        var intake = ForeignIntake(settings: Self.settings)
        let phone = try #require(
            take(
                &intake, "espresense/devices/irk:ec0234a357c8ad05341010a60a397d9b/kitchen",
                #"{"id":"irk:ec0234a357c8ad05341010a60a397d9b","idType":120,"rssi@1m":-65,"rssi":-80.5,"raw":5.1,"distance":4.9,"speed":0,"mac":"7081940dfbaa","interval":301}"#
            )?.sighting)
        #expect(phone.address == "70:81:94:0D:FB:AA" && phone.rssi == -81)
        var resolver = AddressResolver(keys: [
            (asset: 0, key: IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!)
        ])
        #expect(resolver.asset(address: phone.address, type: phone.addressType) == 0)
        let known = try #require(
            take(
                &intake, "espresense/devices/known:d05e00000001/kitchen",
                #"{"id":"known:d05e00000001","rssi":-60,"mac":"d05e00000001"}"#)?.sighting)
        #expect(known.address == "D0:5E:00:00:00:01" && known.manufacturerData.isEmpty)
        let apple = take(&intake, "espresense/devices/apple:1005:9-26/kitchen", #"{"id":"apple:1005:9-26","rssi":-70}"#)
        #expect(apple?.dropped == "espresense.no_identity" && apple?.sighting == nil)
    }

    @Test func anUnmappedRoomIsCountedAndNamedOnce() {
        var intake = ForeignIntake(settings: Self.settings)
        let first = take(
            &intake, "espresense/devices/known:d05e00000001/garage", #"{"id":"x","rssi":-60,"mac":"d05e00000001"}"#)
        let second = take(
            &intake, "espresense/devices/known:d05e00000002/garage", #"{"id":"x","rssi":-60,"mac":"d05e00000002"}"#)
        #expect(first?.dropped == "espresense.unmapped_room" && first?.newUnmapped == "garage")
        #expect(second?.dropped == "espresense.unmapped_room" && second?.newUnmapped == nil && second?.problem == nil)
        let gateway = take(&intake, "home/OMG_attic/BTtoMQTT/D05E00000001", #"{"id":"D0:5E:00:00:00:01","rssi":-60}"#)
        #expect(gateway?.dropped == "openmqttgateway.unmapped_gateway" && gateway?.newUnmapped == "OMG_attic")
        // Not their topics: settings, room telemetry, another prefix.
        #expect(take(&intake, "espresense/rooms/kitchen/status", "online") == nil)
        #expect(take(&intake, "espresense/devices/x/kitchen/extra", "{}") == nil)
        #expect(take(&intake, "home/OMG_lobby/BTtoMQTT", "{}") == nil)
        #expect(take(&intake, "beacond/site/sightings/gw1", "") == nil)
    }

    @Test func brokenESPresenseMessagesAreCountedByReason() {
        var intake = ForeignIntake(settings: Self.settings)
        let topic = "espresense/devices/known:d05e00000001/kitchen"
        let cases: [(String, String)] = [
            ("not json", "espresense.malformed"), ("[1]", "espresense.malformed"),
            (#"{"id":"known:x","mac":"d05e00000001"}"#, "espresense.no_rssi"),
            (#"{"id":"known:x","rssi":-300,"mac":"d05e00000001"}"#, "espresense.no_rssi"),
            (#"{"id":"known:x","rssi":-60,"mac":"d05e0000"}"#, "espresense.malformed"),
            (#"{"id":"iBeacon:nonsense-1-2","rssi":-60}"#, "espresense.malformed"),
            (String(repeating: " ", count: 5000) + "{}", "espresense.too_large"),
        ]
        for (text, reason) in cases {
            let out = take(&intake, topic, text)
            #expect(out?.dropped == reason && out?.sighting == nil && out?.problem != nil, "\(text.prefix(40))")
        }
    }

    /// OpenMQTTGateway's documented example (docs/use/ble.md), an iBeacon's manufacturer data,
    /// and Theengs Gateway's four-digit service UUID.
    @Test func openMQTTGatewayMessagesAreSightingsAsRecordsAre() throws {
        var intake = ForeignIntake(settings: Self.settings)
        let plain = try #require(
            take(
                &intake, "home/OMG_lobby/BTtoMQTT/45E174126E00",
                #"{"id":"45:e1:74:12:6e:00","rssi":-89,"distance":21.51847,"servicedata":"fe0000000000000000000000000000000000000000"}"#
            ))
        #expect(plain.dropped == "openmqttgateway.bad_data", "service data without its uuid cannot be decoded")
        let ibeacon = try #require(
            take(
                &intake, "home/OMG_lobby/BTtoMQTT/C0A1B2C3D4E5",
                #"{"id":"C0:A1:B2:C3:D4:E5","mac_type":1,"adv_type":0,"manufacturerdata":"4c000215e2c56db5dffb48d2b060d0f5a71096e00064000bc5","rssi":-66,"txpower":-59}"#
            )?.sighting)
        #expect(ibeacon.receiver == "rx-lobby" && ibeacon.rssi == -66 && ibeacon.txPower == -59)
        guard case let .success(frame) = BeaconDecoder.decode(ibeacon), case let .ibeacon(id)? = frame.identity else {
            Issue.record("no iBeacon in \(ibeacon)")
            return
        }
        #expect(id.major == 100 && id.minor == 11)
        let eddystone = try #require(
            take(
                &intake, "home/OMG_lobby/BTtoMQTT/C0A1B2C3D4E6",
                #"{"name":"tag","id":"C0:A1:B2:C3:D4:E6","rssi":-70,"servicedata":"00e800112233445566778899aabbccddeeff0000","servicedatauuid":"feaa"}"#
            )?.sighting)
        #expect(eddystone.serviceData.first?.uuid == "0000feaa-0000-1000-8000-00805f9b34fb")
        guard case let .success(f2) = BeaconDecoder.decode(eddystone), case .eddystone? = f2.identity else {
            Issue.record("no Eddystone-UID in \(eddystone)")
            return
        }
        let bad = take(
            &intake, "home/OMG_lobby/BTtoMQTT/X", #"{"id":"C0:A1:B2:C3:D4:E6","rssi":-70,"manufacturerdata":"4c"}"#)
        #expect(bad?.dropped == "openmqttgateway.bad_data")
        let noID = take(&intake, "home/OMG_lobby/BTtoMQTT/X", #"{"rssi":-70}"#)
        #expect(noID?.dropped == "openmqttgateway.no_identity")
    }

    /// What the simulator publishes reads back as the sighting it played.
    @Test func encodedMessagesReadBackAsTheirSightings() throws {
        var intake = ForeignIntake(settings: Self.settings)
        let payload = IBeaconID(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
            .payload(measuredPower: -59)
        let beacon = Sighting(
            time: Self.t, receiver: "rx-lobby", address: "C0:5E:00:00:00:01", rssi: -67,
            manufacturerData: [ManufacturerDatum(company: 0x004C, payload: payload)])
        let (omgTopic, omgText) = OpenMQTTGatewayMessage.encode(beacon, prefix: "home", gateway: "OMG_lobby")
        #expect(omgTopic == "home/OMG_lobby/BTtoMQTT/C05E00000001")
        #expect(take(&intake, omgTopic, omgText)?.sighting == beacon)
        let (espTopic, espText) = ESPresenseMessage.encode(beacon, prefix: "espresense", room: "kitchen")
        #expect(espTopic == "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2/kitchen")
        var heard = beacon
        heard.receiver = "rx-kitchen"
        #expect(take(&intake, espTopic, espText)?.sighting == heard)
    }
}
