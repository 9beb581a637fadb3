import BeaconCore
import Foundation
import TestSupport
import Testing

@testable import Storage

/// The state directory's reserve (`DiskReserve`), on real files: what is written reads back
/// after the file is opened again (as after a reboot), a torn record ends the reading without
/// taking the records before it, and emptying a part is final.
@Suite struct DiskReserveTests {
    static func event(_ n: Int, type: String = "beacond.zone.enter") -> StateStore.StoredEvent {
        .init(id: "E\(n)", type: type, time: .seconds(Int64(n)), body: "{\"n\":\(n)}")
    }

    static func states(_ region: RegionState, zoneSince: Int64) -> EngineSnapshot {
        EngineSnapshot(
            regions: [
                RegionSnapshot(
                    client: "app",
                    spec: RegionSpec(id: "door", uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!),
                    state: region, lastSeen: .seconds(7), enteredAt: .seconds(5), dwellsFired: 1)
            ],
            assets: [
                AssetSnapshot(
                    asset: "cart-1", lastHeard: .seconds(9), position: Point(x: 3, y: 4), level: 0, accuracy: 1.5,
                    zones: [.init(zone: "dock", shape: "polygon", since: .seconds(zoneSince), dwellFired: ["a"])])
            ])
    }

    static func path() throws -> String {
        try Executables.temporaryDirectory().appendingPathComponent(DiskReserve.fileName).path
    }

    @Test func eventsAndTheNewestStatesReadBackFromTheFileOpenedAgain() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == DiskReserve.defaultSize)
        #expect(try reserve.append([Self.event(1), Self.event(2)]) == 2)
        try reserve.write(Self.states(.inside, zoneSince: 1))
        #expect(try reserve.append([Self.event(3)]) == 1)
        try reserve.write(Self.states(.outside, zoneSince: 2))
        try reserve.write(Self.states(.inside, zoneSince: 3))
        reserve.close()

        var again = try DiskReserve(path: path)
        let contents = again.read()
        #expect(contents.events == [Self.event(1), Self.event(2), Self.event(3)])
        #expect(contents.states?.regions == Self.states(.inside, zoneSince: 3).regions)
        #expect(contents.states?.assets == Self.states(.inside, zoneSince: 3).assets)
        // What is appended after a reading follows what was read.
        try again.append([Self.event(4)])
        again.close()
        var third = try DiskReserve(path: path)
        #expect(third.read().events.map(\.id) == ["E1", "E2", "E3", "E4"])
    }

    /// A reserve opened again takes new events after those it holds, read or not: an append
    /// must never write over alerts an earlier run left there.
    @Test func anAppendAfterOpeningKeepsWhatWasThere() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path)
        try reserve.append([Self.event(1)])
        try reserve.write(Self.states(.inside, zoneSince: 1))
        reserve.close()
        var again = try DiskReserve(path: path)
        try again.append([Self.event(2)])
        try again.write(Self.states(.outside, zoneSince: 2))
        again.close()
        var third = try DiskReserve(path: path)
        let contents = third.read()
        #expect(contents.events.map(\.id) == ["E1", "E2"])
        #expect(contents.states?.regions.first?.state == .outside, "the newer states win")
    }

    @Test func emptyingEventsKeepsTheStatesAndEmptyingStatesKeepsTheEvents() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path)
        try reserve.append([Self.event(1), Self.event(2)])
        try reserve.write(Self.states(.inside, zoneSince: 1))
        try reserve.clearEvents()
        try reserve.append([Self.event(3)])
        var again = try DiskReserve(path: path)
        let contents = again.read()
        #expect(contents.events.map(\.id) == ["E3"], "the emptied events stay gone, though their bytes are there")
        #expect(contents.states != nil)
        try again.clearStates()
        var third = try DiskReserve(path: path)
        let last = third.read()
        #expect(last.states == nil)
        #expect(last.events.map(\.id) == ["E3"])
    }

    /// A power cut during an append leaves a torn record: the reading ends before it and
    /// keeps every record before it.
    @Test func aTornRecordEndsTheReadingAndKeepsWhatCameBefore() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path)
        try reserve.append([Self.event(1), Self.event(2), Self.event(3)])
        reserve.close()
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let data = try #require(try handle.readToEnd())
        // The last byte of the third record's payload: the "}" of its body's JSON.
        let third = try #require(data.range(of: Data("\"E3\"".utf8)))
        let end = try #require(data[third.upperBound...].firstIndex(of: 0)) - 1
        try handle.seek(toOffset: UInt64(end))
        handle.write(Data([0x20]))
        try handle.close()

        var again = try DiskReserve(path: path)
        #expect(again.read().events.map(\.id) == ["E1", "E2"])
        try again.append([Self.event(4)])
        var third2 = try DiskReserve(path: path)
        #expect(third2.read().events.map(\.id) == ["E1", "E2", "E4"], "written over the torn one")
    }

    @Test func aFullReserveTakesWhatFitsAndSaysHowMany() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path, size: 256 << 10)
        let big = (0..<1_000).map { n in
            StateStore.StoredEvent(
                id: "E\(n)", type: "beacond.zone.exit", time: .seconds(Int64(n)),
                body: String(repeating: "x", count: 500))
        }
        let fitted = try reserve.append(big)
        #expect(fitted > 100 && fitted < 1_000, "\(fitted)")
        #expect(try reserve.append([big[fitted]]) == 0, "the first that did not fit still does not")
        var again = try DiskReserve(path: path, size: 256 << 10)
        #expect(again.read().events.count == fitted)
    }

    /// A file that is not a whole reserve (cut short, or another size asked for) is made anew,
    /// with nothing in it.
    @Test func aFileThatIsNotAWholeReserveIsMadeAnew() throws {
        let path = try Self.path()
        var reserve = try DiskReserve(path: path)
        try reserve.append([Self.event(1)])
        reserve.close()
        #expect(truncate(path, off_t(DiskReserve.defaultSize / 2)) == 0)
        var again = try DiskReserve(path: path)
        #expect(again.read().events.isEmpty)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == DiskReserve.defaultSize)
    }
}
