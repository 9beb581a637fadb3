import Testing

@testable import BeaconCore

/// SPEC §6.2: a site's sighting batches, and what each kind of bad message costs.
@Suite struct SiteIntakeTests {
    static func sighting(_ t: Double, _ receiver: String, rssi: Int = -60) -> Sighting {
        Sighting(
            time: Fixture.at(t), receiver: receiver, address: "C3:11:22:33:44:55", rssi: rssi,
            manufacturerData: [ManufacturerDatum(company: 76, payload: [0x02, 0x15] + Array(repeating: 7, count: 21))])
    }

    func take(
        _ intake: inout SiteIntake, _ sender: String, _ bytes: [UInt8], at t: Double = 100
    ) -> SiteIntake.Outcome? {
        bytes.withUnsafeBytes { intake.take(sender: sender, payload: $0, at: Fixture.at(t)) }
    }

    func batch(_ gateway: String, seq: Int64, sent: Double = 100, _ sightings: [Sighting]) -> [UInt8] {
        SightingBatch.encode(.init(gateway: gateway, seq: seq, sent: Fixture.at(sent)), sightings)
    }

    var intake: SiteIntake {
        SiteIntake(gateway: "gw1", knownGateways: ["gw1", "gw2"], knownReceivers: ["rx-a", "rx-b"])
    }

    @Test func aBatchReadsBackSortedWithItsPeerKnown() throws {
        var i = intake
        let sent = [Self.sighting(99.5, "rx-b", rssi: -71), Self.sighting(99.25, "rx-a")]
        let out = try #require(take(&i, "gw2", batch("gw2", seq: 1, sent: 101.5, sent)))
        #expect(out.sightings == [sent[1], sent[0]])
        #expect(out.dropped.isEmpty && out.rejected == nil && out.lost == 0)
        #expect(i.peers["gw2"]?.batches == 1)
        #expect(i.peers["gw2"]?.clockOffset == .milliseconds(1_500))
        #expect(i.peers["gw2"]?.lastBatch == Fixture.at(100))
    }

    @Test func ownBatchesComingBackAreIgnored() {
        var i = intake
        #expect(take(&i, "gw1", batch("gw1", seq: 1, [Self.sighting(1, "rx-a")])) == nil)
        #expect(i.peers.isEmpty)
    }

    @Test func gapsInTheSequenceAreLostBatchesAndARestartIsNot() throws {
        var i = intake
        _ = take(&i, "gw2", batch("gw2", seq: 1, []))
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 2, []))).lost == 0)
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 6, []))).lost == 3)
        // The sender restarted and counts from 1 again.
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 1, []))).lost == 0)
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 2, []))).lost == 0)
        #expect(i.peers["gw2"]?.lost == 3)
        #expect(i.peers["gw2"]?.batches == 5)
    }

    @Test func plainJSONLinesFromAnyRadioAreTaken() throws {
        var i = intake
        let lines = Array(
            (SightingRecord.text(Self.sighting(5, "rx-a")) + "\n\n" + SightingRecord.text(Self.sighting(4, "rx-b")))
                .utf8)
        let out = try #require(take(&i, "esp32-kitchen", lines))
        #expect(out.sightings.map(\.receiver) == ["rx-b", "rx-a"])
        #expect(i.peers["esp32-kitchen"]?.lastSeq == nil)
    }

    @Test func badRecordsAreCountedAndTheRestTaken() throws {
        var i = intake
        var bytes = batch("gw2", seq: 1, [Self.sighting(1, "rx-a"), Self.sighting(2, "rx-unknown")])
        bytes += Array("not json\n{\"t\":1,\"receiver\":\"rx-a\"}\n".utf8)
        let out = try #require(take(&i, "gw2", bytes))
        #expect(out.sightings.count == 1)
        #expect(out.dropped == ["unknown_receiver": 1, "malformed": 2])
        #expect(out.problem == #"line 3: receiver "rx-unknown" is not in the site file"#)
    }

    @Test(arguments: [
        ("gw3", #"{"batch":1,"gateway":"gw3","seq":1,"sent":1}"#, "unknown_gateway"),
        ("gw2", #"{"batch":1,"gateway":"gw9","seq":1,"sent":1}"#, "wrong_gateway"),
        ("gw2", #"{"batch":2,"gateway":"gw2","seq":1,"sent":1}"#, "bad_header"),
        ("gw2", #"{"batch":1,"gateway":"gw2","seq":-1,"sent":1}"#, "bad_header"),
        ("gw2", #"{"batch":1,"gateway":"gw2","seq":1,"sent":"x"}"#, "bad_header"),
        ("gw2", #"{"batch":1,"gateway""#, "bad_header"),
        ("g w", #"{"t":1}"#, "bad_topic"),
    ])
    func wholeMessagesRefused(sender: String, header: String, reason: String) throws {
        var i = intake
        let out = try #require(
            take(&i, sender, Array((header + "\n" + SightingRecord.text(Self.sighting(1, "rx-a"))).utf8)))
        #expect(out.rejected == reason)
        #expect(out.sightings.isEmpty && out.dropped == [reason: 1] && out.problem != nil)
    }

    @Test func aFloodOfBytesIsRefusedUnread() throws {
        var i = intake
        let out = try #require(take(&i, "gw2", [UInt8](repeating: 0x7B, count: 10 << 20)))
        #expect(out.rejected == "too_large")
        #expect(i.peers.isEmpty)
    }

    @Test func anOpenSiteTakesAnyGatewayAndReceiver() throws {
        var i = SiteIntake(gateway: "gw1", knownGateways: [], knownReceivers: [])
        let out = try #require(take(&i, "gw7", batch("gw7", seq: 1, [Self.sighting(1, "gw7.hci0")])))
        #expect(out.sightings.map(\.receiver) == ["gw7.hci0"])
    }

    @Test func sendersAreBounded() throws {
        var i = SiteIntake(gateway: "gw1", knownGateways: [], knownReceivers: [])
        for n in 0..<SiteIntake.maxPeers { _ = take(&i, "gw-\(n)", Array("\n".utf8)) }
        #expect(try #require(take(&i, "one-more", Array("\n".utf8))).rejected == "too_many_gateways")
        #expect(i.peers.count == SiteIntake.maxPeers)
    }

    /// Issue 38 #5: 260 junk sender ids filled the table, and a gateway of the site restarted
    /// meanwhile had no batch taken. The gateways the site file names are never crowded out.
    @Test func namedGatewaysAreNeverCrowdedOutByJunkSenders() throws {
        var i = intake
        for n in 0..<(SiteIntake.maxPeers + 4) { _ = take(&i, "junk-\(n)", Array("\n".utf8)) }
        #expect(try #require(take(&i, "junk-more", Array("\n".utf8))).rejected == "too_many_gateways")
        let out = try #require(take(&i, "gw2", batch("gw2", seq: 1, [Self.sighting(99, "rx-a")])))
        #expect(out.rejected == nil && out.sightings.count == 1 && out.batch)
    }

    /// Issue 38 #4: sequence numbers from another client publishing under gw2's id counted
    /// 80,999,225 lost batches in 20 s; and empty messages on a gateway's topic were taken as
    /// its sign of life. A gap wider than `maxGap` is not loss; only a batch is a sign of life.
    @Test func forgedSequencesCountNoLossAndEmptyMessagesAreNoSignOfLife() throws {
        var i = intake
        _ = take(&i, "gw2", batch("gw2", seq: 50, []))
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 81_000_000, []))).lost == 0)
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 51, []))).lost == 0)
        #expect(try #require(take(&i, "gw2", batch("gw2", seq: 54, []))).lost == 2)
        #expect(i.peers["gw2"]?.lost == 2)
        let empty = try #require(take(&i, "gw2", []))
        #expect(empty.rejected == nil && !empty.batch)
        let plain = try #require(take(&i, "gw2", Array("\n".utf8)))
        #expect(!plain.batch)
    }
}
