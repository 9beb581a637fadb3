import BeaconCore
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Storage

/// The state store on a real SQLite file in a temporary directory.
@Suite struct StateStoreTests {
    static let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    @Test func regionStatesRoundTripThroughTheFile() throws {
        let dir = try Executables.temporaryDirectory().path
        let snapshots = [
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "store", uuid: Self.uuid, dwell: [.minutes(2)]), state: .inside,
                lastSeen: Timestamp(nanoseconds: 1_000_000_123), enteredAt: Timestamp(nanoseconds: 5), dwellsFired: 1),
            RegionSnapshot(
                client: "app", spec: RegionSpec(id: "till", uuid: Self.uuid, major: 42, minor: 9, notifyOnExit: false),
                state: .outside, lastSeen: Timestamp(nanoseconds: 7), enteredAt: Timestamp(nanoseconds: 7),
                dwellsFired: 0),
        ]
        try StateStore(directory: dir).saveRegions(snapshots)
        // A new store on the same file, as after a restart
        let loaded = try StateStore(directory: dir).loadRegions()
        #expect(loaded.snapshots == snapshots && loaded.skipped == 0)
        // Saving again replaces, never duplicates
        try StateStore(directory: dir).saveRegions(Array(snapshots.prefix(1)))
        #expect(try StateStore(directory: dir).loadRegions().snapshots == Array(snapshots.prefix(1)))
    }

    @Test func assetsZoneMembershipsRoundTripThroughTheFile() throws {
        let dir = try Executables.temporaryDirectory().path
        let snapshots = [
            AssetSnapshot(
                asset: "cart-17", lastHeard: Timestamp(nanoseconds: 1_763_805_600_123_456_789),
                position: Point(x: 2.25, y: -0.5), level: 1, accuracy: 1.75,
                zones: [
                    .init(
                        zone: "stockroom", shape: "polygon 1: 0.0 0.0, 6.0 0.0, 6.0 3.0",
                        since: Timestamp(nanoseconds: 5),
                        dwellFired: ["long-stay", "out-of-hours"]),
                    .init(zone: "door", shape: "near hci1 2.0", since: Timestamp(nanoseconds: 7), dwellFired: []),
                ])
        ]
        try StateStore(directory: dir).saveAssets(snapshots)
        let loaded = try StateStore(directory: dir).loadAssets()
        #expect(loaded.snapshots == snapshots && loaded.skipped == 0)
        // Heard 5 s more and moved a metre: not worth a write yet; a minute more (the routine
        // writes' tick), or a zone change, is
        let store = try StateStore(directory: dir)
        #expect(try store.saveAssets(snapshots) == 1, "the first save writes every row")
        var later = snapshots[0]
        later.lastHeard = later.lastHeard + .seconds(5)
        later.position!.x += 1
        #expect(try store.saveAssets([later]) == 0)
        later.lastHeard = snapshots[0].lastHeard + .seconds(30)
        #expect(try store.saveAssets([later]) == 0)
        later.lastHeard = snapshots[0].lastHeard + .seconds(60)
        #expect(try store.saveAssets([later]) == 1)
        later.zones.removeLast()
        #expect(try store.saveAssets([later]) == 1)
        // An asset that left every zone is removed
        try StateStore(directory: dir).saveAssets([])
        #expect(try StateStore(directory: dir).loadAssets().snapshots.isEmpty)
    }

    /// Issue 53 (SPEC §4.4): an asset's saved position is at most a minute old while it moves,
    /// is not rewritten for jitter, and the save at a clean stop writes the latest.
    @Test func aMovingAssetsPositionIsSavedOnceAMinuteAndAtTheStop() throws {
        let dir = try Executables.temporaryDirectory().path
        let t0 = Timestamp.seconds(1_763_805_600)
        let first = AssetSnapshot(
            asset: "pallet-9", lastHeard: t0, position: Point(x: 1, y: 1), level: 0, accuracy: 2, zones: [])
        let store = try StateStore(directory: dir)
        #expect(try store.saveAssets([first]) == 1)
        func at(_ seconds: Int64, x: Double) -> AssetSnapshot {
            var s = first
            s.lastHeard = t0 + .seconds(seconds)
            s.position = Point(x: x, y: 1)
            return s
        }
        #expect(try store.saveAssets([at(30, x: 4)]) == 0, "moved, but the saved one is 30 s old")
        #expect(try store.saveAssets([at(59, x: 4.2)]) == 0)
        #expect(try store.saveAssets([at(60, x: 4.3)]) == 1, "a minute: the latest is written")
        #expect(try store.saveAssets([at(150, x: 4.5)]) == 0, "jitter within half a metre is the same place")
        var stop = EngineSnapshot(regions: [], assets: [at(110, x: 9)])
        #expect(try store.commit([], assets: stop.assets) == 0)
        stop.final = true
        #expect(try store.commit([], assets: stop.assets, final: stop.final) == 1, "the clean stop writes it")
        #expect(try StateStore(directory: dir).loadAssets().snapshots.first?.position == Point(x: 9, y: 1))
    }

    /// After a restart the minute is counted from the position the disk holds, not from the
    /// start: 40 s of downtime and 25 s heard again, and the moved position is written (before,
    /// the first save after the start began the minute: a kill 70 s after a restart found a
    /// position 104 s old on the disk, `PositionStateCrashTests` in CI).
    @Test func afterARestartTheMinuteCountsFromTheSavedPosition() throws {
        let dir = try Executables.temporaryDirectory().path
        let t0 = Timestamp.seconds(1_763_805_600)
        let first = AssetSnapshot(
            asset: "pallet-9", lastHeard: t0, position: Point(x: 1, y: 1), level: 0, accuracy: 2, zones: [])
        #expect(try StateStore(directory: dir).saveAssets([first]) == 1)
        let restarted = try StateStore(directory: dir)
        #expect(try restarted.loadAssets().snapshots.count == 1)
        func at(_ seconds: Int64, x: Double) -> AssetSnapshot {
            var s = first
            s.lastHeard = t0 + .seconds(seconds)
            s.position = Point(x: x, y: 1)
            return s
        }
        #expect(try restarted.saveAssets([at(40, x: 4)]) == 1, "the first save after a start writes every row")
        #expect(try restarted.saveAssets([at(65, x: 5)]) == 1, "a minute after the saved position")
        #expect(try restarted.saveAssets([at(100, x: 6)]) == 0, "35 s after that minute's tick")
    }

    /// A store whose file cannot be opened yet fails each use with the reason, and opens at the
    /// first use that can, telling `onOpen` once.
    @Test func aStoreThatCannotOpenYetOpensAtTheFirstUseThatCan() throws {
        let dir = try Executables.temporaryDirectory().appendingPathComponent("state").path
        #expect(FileManager.default.createFile(atPath: dir, contents: Data()), "a file where the directory goes")
        let opened = Mutex<[StateStore.Opened]>([])
        let store = StateStore.opening(
            directory: dir, setAsideSuffix: { "1" }, onOpen: { o in opened.withLock { $0.append(o) } })
        let event = { (n: Int) in
            StateStore.StoredEvent(id: "E\(n)", type: "beacond.region.enter", time: .seconds(Int64(n)), body: "{}")
        }
        #expect(throws: SQLiteError.self) { try store.append([event(1)]) }
        #expect(store.openFailure?.contains("unable to open") == true, "\(store.openFailure ?? "nil")")
        #expect(opened.withLock { $0.isEmpty })

        try FileManager.default.removeItem(atPath: dir)
        try store.append([event(2)])
        try store.append([event(3)])
        #expect(try store.events().map(\.id) == ["E2", "E3"])
        #expect(store.openFailure == nil)
        let told = opened.withLock { $0 }
        #expect(told.count == 1)
        #expect(told.first?.failedBefore?.contains("unable to open") == true)
        #expect(told.first?.setAside == nil)
    }

    @Test func eventHistoryKeepsTheNewestAndPagesAfterAnId() throws {
        let store = try StateStore(
            directory: try Executables.temporaryDirectory().path,
            retention: HistoryRetention(
                alerts: .init(maxAge: .hours(1), maxEvents: 5), telemetry: .init(maxAge: .hours(1), maxEvents: 5)))
        let events = (1...8).map {
            StateStore.StoredEvent(
                id: "ID\($0)", type: "beacond.region.enter", time: Timestamp(nanoseconds: Int64($0)), body: "{}")
        }
        try store.append(Array(events[0..<4]))
        try store.append(Array(events[4...]))
        try store.append([events[7]])  // a duplicate id is stored once
        #expect(try store.events().map(\.id) == ["ID4", "ID5", "ID6", "ID7", "ID8"])
        #expect(try store.events(after: "ID6").map(\.id) == ["ID7", "ID8"])
    }
}

/// The outbox, dead letters and API region changes on a real SQLite file.
@Suite struct OutboxStoreTests {
    func event(_ n: Int) -> StateStore.StoredEvent {
        StateStore.StoredEvent(
            id: "E\(n)", type: n % 2 == 0 ? "beacond.region.enter" : "beacond.ranging",
            time: Timestamp(nanoseconds: Int64(n)), body: "{\"n\":\(n)}")
    }

    @Test func eventsWaitPerWebhookInOrderUntilAcknowledged() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        // "crm" wants region events only; "all" wants everything
        try store.append((1...6).map(event), at: Timestamp(nanoseconds: 100)) { e in
            e.type == "beacond.region.enter" ? ["crm", "all"] : ["all"]
        }
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["E2", "E4", "E6"])
        let all = try store.pending(webhook: "all", limit: 4)
        #expect(all.map(\.eventID) == ["E1", "E2", "E3", "E4"])
        try store.delivered(webhook: "all", through: all[1].seq)
        #expect(try store.pending(webhook: "all", limit: 10).map(\.eventID) == ["E3", "E4", "E5", "E6"])
        #expect(try store.pending(webhook: "crm", limit: 10).count == 3, "one webhook's ack leaves the other's rows")
        #expect(try store.outboxDepths().map(\.pending) == [4, 3])
    }

    /// A new site locator's own alert that repeats what the site told (SPEC §6.3) leaves every
    /// outbox, and only that one: a copy that carries another locator's id stays. The history
    /// keeps both, the decided one under the locator's id, body and time (issue 51, item 0).
    @Test func anOwnRepeatLeavesEveryOutboxAndADecidedCopyStays() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([event(2), event(4)]) { _ in ["crm", "all"] }
        #expect(
            try store.takeDecision(
                ownID: "E4", id: "L4", body: "{\"id\":\"L4\"}", time: Timestamp(nanoseconds: 7), decider: "gw1",
                enqueuedAt: Timestamp(nanoseconds: 5)) == 2)
        #expect(try store.dropOwn(eventID: "E2") == 2)
        #expect(try store.dropOwn(eventID: "L4") == 0, "another locator's decision is not this gateway's own")
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["L4"])
        #expect(try store.pending(webhook: "all", limit: 10).map(\.eventID) == ["L4"])
        let history = try store.events()
        #expect(history.map(\.id) == ["E2", "L4"])
        #expect(history.last?.body == "{\"id\":\"L4\"}" && history.last?.time == Timestamp(nanoseconds: 7))
        // The same decision taken by a second copy: the history keeps one row of that id.
        try store.append([event(6)]) { _ in ["crm"] }
        try store.takeDecision(
            ownID: "E6", id: "L4", body: "{}", time: Timestamp(nanoseconds: 7), decider: "gw1",
            enqueuedAt: Timestamp(nanoseconds: 5))
        #expect(try store.events().map(\.id) == ["E2", "L4"])
        // The history's counts follow without a recount (a recount reads the whole history on
        // the engine's thread): two alerts, as the rows say.
        #expect(store.historyCounts.withLock { $0.map { [$0.alerts, $0.telemetry] } } == [2, 0])
    }

    /// Alerts no locator decided (older than its furthest delivery, less the overlap) leave
    /// every outbox at once, so that a gateway becoming the locator tells none of them on one
    /// webhook that another's outbox had dropped. Decided copies and newer own alerts stay.
    @Test func undecidedOwnAlertsLeaveEveryOutboxTogether() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([event(2), event(4)], at: Timestamp(nanoseconds: 100)) { _ in ["crm", "mqtt:events"] }
        try store.append([event(6)], at: Timestamp(nanoseconds: 300)) { _ in ["crm", "mqtt:events"] }
        try store.takeDecision(
            ownID: "E4", id: "L4", body: "{}", time: Timestamp(nanoseconds: 7), decider: "gw1",
            enqueuedAt: Timestamp(nanoseconds: 5))
        #expect(try store.dropOwn(enqueuedBefore: Timestamp(nanoseconds: 200)) == 2)
        for webhook in ["crm", "mqtt:events"] {
            #expect(try store.pending(webhook: webhook, limit: 10).map(\.eventID) == ["L4", "E6"])
        }
        #expect(try store.ownEntries(excluding: []).map(\.id) == ["E6"])
        #expect(try store.events().map(\.id) == ["E2", "L4", "E6"], "the history keeps what it made")
    }

    /// Events kept outside a full disk and taken back after a crash may have been stored just
    /// before it: stored again, they would be delivered twice.
    @Test func anEventStoredAlreadyIsNotRoutedAgain() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([event(2)]) { _ in ["crm"] }
        try store.append([event(2), event(4)]) { _ in ["crm"] }
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["E2", "E4"])
        #expect(try store.events().map(\.id) == ["E2", "E4"])
        try store.removeEvents(["E2"])
        #expect(try store.events().map(\.id) == ["E4"])
        #expect(try store.pending(webhook: "crm", limit: 10).count == 2, "removing history leaves the outbox")
        try store.removeAllEvents()
        #expect(try store.events().isEmpty)
    }

    @Test func oldEntriesBecomeDeadLettersAndDisabledStateFollowsTheURL() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append([event(2)], at: Timestamp(nanoseconds: 100)) { _ in ["crm"] }
        try store.append([event(4)], at: Timestamp(nanoseconds: 500)) { _ in ["crm"] }
        let moved = try store.expire(
            webhook: "crm", enqueuedBefore: Timestamp(nanoseconds: 300), at: Timestamp(nanoseconds: 900),
            reason: "max_age")
        #expect(moved == 1)
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["E4"])
        let dead = try store.deadLetters()
        #expect(dead.map(\.eventID) == ["E2"] && dead.first?.reason == "max_age")
        #expect(try store.outboxDepths().first?.deadLetters == 1)

        try store.setDisabled(webhook: "crm", url: "http://a", reason: "410 Gone", at: Timestamp(nanoseconds: 1))
        #expect(try store.disabledReason(webhook: "crm", url: "http://a") == "410 Gone")
        #expect(try store.disabledReason(webhook: "crm", url: "http://b") == nil, "a new url enables it")
    }

    /// A webhook dead for months must not fill the gateway's storage: past the cap, the
    /// oldest dead letters go, and how many went is kept, across a restart too.
    @Test func deadLettersAreCappedPerWebhookAndWhatWasDiscardedIsCounted() throws {
        let dir = try Executables.temporaryDirectory().path
        var store = try StateStore(directory: dir, deadLetterLimit: 3)
        try store.append((1...5).map { event($0) }, at: Timestamp(nanoseconds: 100)) { _ in ["crm", "wms"] }
        try store.append([event(6)], at: Timestamp(nanoseconds: 200)) { _ in ["crm"] }
        let cutoff = Timestamp(nanoseconds: 300)
        #expect(try store.expire(webhook: "crm", enqueuedBefore: cutoff, at: cutoff, reason: "max_age") == 6)
        #expect(try store.deadLetters().filter { $0.webhook == "crm" }.map(\.eventID) == ["E6", "E5", "E4"])
        // The other webhook's dead letters are its own
        #expect(try store.expire(webhook: "wms", enqueuedBefore: cutoff, at: cutoff, reason: "max_age") == 5)
        var depths = try store.outboxDepths()
        #expect(depths.map(\.deadLetters) == [3, 3])
        #expect(depths.map(\.deadLettersDiscarded) == [3, 2])
        store = try StateStore(directory: dir, deadLetterLimit: 3)
        try store.append([event(7)], at: Timestamp(nanoseconds: 400)) { _ in ["crm"] }
        try store.expire(webhook: "crm", enqueuedBefore: Timestamp(nanoseconds: 500), at: cutoff, reason: "gone")
        depths = try store.outboxDepths()
        #expect(depths.first?.deadLettersDiscarded == 4)
        #expect(try store.deadLetters().filter { $0.webhook == "crm" }.map(\.eventID) == ["E7", "E6", "E5"])
    }

    /// A webhook taken out of the configuration leaves nobody to deliver or expire its rows:
    /// they become dead letters at once, and the other webhooks' rows stay where they are.
    @Test func aRemovedWebhooksBacklogBecomesDeadLetters() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append((1...3).map { event($0) }, at: Timestamp(nanoseconds: 100)) { _ in ["crm", "wms"] }
        #expect(try store.retireWebhooks(keeping: ["crm", "wms"], at: Timestamp(nanoseconds: 200)) == [:])
        let moved = try store.retireWebhooks(keeping: ["crm"], at: Timestamp(nanoseconds: 200))
        #expect(moved == ["wms": 3])
        let depths = try store.outboxDepths()
        #expect(depths.map(\.webhook) == ["crm", "wms"])
        #expect(depths.map(\.pending) == [3, 0] && depths.map(\.deadLetters) == [0, 3])
        #expect(try store.deadLetters().allSatisfy { $0.webhook == "wms" && $0.reason == "removed" })
        #expect(try store.pending(webhook: "crm", limit: 10).map(\.eventID) == ["E1", "E2", "E3"])
    }

    @Test func apiRemovalsAreForgottenWhereTheyRemoveNothing() throws {
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.saveOverride(.monitor(client: "app", region: RegionSpec(id: "a", uuid: uuid)))
        try store.saveOverride(.remove(client: "app", region: "store"))
        try store.saveOverride(.remove(client: "app", region: "gone"))
        try store.forgetOverride(client: "app", region: "a")
        let file = [ClientSpec(id: "app", regions: [RegionSpec(id: "store", uuid: uuid)])]
        #expect(try store.forgetRemovals(keepingRegionsOf: file) == 1)
        #expect(try store.loadOverrides() == [.remove(client: "app", region: "store")])
    }

    @Test func apiRegionChangesReplayInOrder() throws {
        let dir = try Executables.temporaryDirectory().path
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let store = try StateStore(directory: dir)
        try store.saveOverride(.monitor(client: "app", region: RegionSpec(id: "a", uuid: uuid)))
        try store.saveOverride(.remove(client: "app", region: "store"))
        try store.saveOverride(.monitor(client: "app", region: RegionSpec(id: "a", uuid: uuid, major: 2)))
        let loaded = try StateStore(directory: dir).loadOverrides()
        #expect(
            loaded == [
                .remove(client: "app", region: "store"),
                .monitor(client: "app", region: RegionSpec(id: "a", uuid: uuid, major: 2)),
            ])
    }

    @Test func savingRegionsWritesChangesAndRemovals() throws {
        let dir = try Executables.temporaryDirectory().path
        let uuid = BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let store = try StateStore(directory: dir)
        let a = RegionSnapshot(
            client: "app", spec: RegionSpec(id: "a", uuid: uuid), state: .inside, lastSeen: Timestamp(nanoseconds: 1),
            enteredAt: Timestamp(nanoseconds: 1), dwellsFired: 0)
        var b = a
        b.spec.id = "b"
        try store.saveRegions([a, b])
        var a2 = a
        a2.lastSeen = Timestamp(nanoseconds: 2)
        try store.saveRegions([a2])  // a changed, b gone
        #expect(try StateStore(directory: dir).loadRegions().snapshots == [a2])
    }
}

/// The schema steps: applied once, counted in `user_version`, and files made by the earlier
/// GRDB-based store are carried forward without running a step twice.
@Suite struct StoreMigrationTests {
    @Test func aFileFromTheGRDBStoreIsUpgradedInPlace() throws {
        let dir = try Executables.temporaryDirectory().path
        // The shape GRDB left: its bookkeeping table and the first two steps' tables, with data.
        let old = try SQLiteDatabase(path: dir + "/beacond.sqlite", migrations: [])
        try old.write { (db) throws(SQLiteError) in
            try db.execute(
                """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1'), ('v2-outbox');
                """)
            try db.execute(StateStore.migrations[0].sql)
            try db.execute(StateStore.migrations[1].sql)
            try db.execute(
                "INSERT INTO event (id, type, time_ns, body) VALUES ('e1', 'region.enter', 5, '{}'), "
                    + "('e2', 'beacond.asset.position', 6, '{}')")
        }
        let store = try StateStore(directory: dir)
        #expect(try store.events().map(\.id) == ["e1", "e2"])
        // v7 sorted the older file's events into their classes
        let classes = try store.db.read { (db) throws(SQLiteError) in
            try db.scalarString("SELECT group_concat(telemetry) FROM (SELECT telemetry FROM event ORDER BY seq)")
        }
        #expect(classes == "0,1", "e1 an alert, e2 telemetry")
        // v4's table exists now, so alarm flags work; v1 and v2 did not run again (they would fail)
        try store.saveAlarmFlag("door", active: false)
        #expect(try store.loadAlarmFlags() == ["door": false])
        let version = try store.db.read { (db) throws(SQLiteError) in try db.scalarInt64("PRAGMA user_version") }
        #expect(version == Int64(StateStore.migrations.count))
        // And a second open applies nothing
        #expect(try StateStore(directory: dir).loadAlarmFlags() == ["door": false])
    }

    /// v12 (SPEC §10): a file whose analytics counted the live membership keeps its open visits,
    /// transitions and hours as the live kind; an hour's occupancy is its asset-seconds.
    @Test func aFileFromBeforeVisitsKeepsItsCountingAsTheLiveKind() throws {
        let dir = try Executables.temporaryDirectory().path
        let upTo = StateStore.migrations.firstIndex { $0.name == "v12-visit-analytics" }!
        let old = try SQLiteDatabase(path: dir + "/beacond.sqlite", migrations: Array(StateStore.migrations[..<upTo]))
        let hour = Timestamp.seconds(1_763_805_600)
        try old.write { (db) throws(SQLiteError) in
            try db.execute(
                """
                INSERT INTO zone_rollup_mark VALUES (1, \(hour.nanoseconds), 1, \(hour.nanoseconds), 0);
                INSERT INTO zone_open VALUES (0, 'dock', 'pallet-1', 5);
                INSERT INTO zone_transition (zone, asset, entered, time_ns) VALUES ('dock', 'cart-7', 1, 6);
                INSERT INTO zone_rollup VALUES (3600, 'dock', \(hour.nanoseconds - 3_600_000_000_000), 2, 2, 1,
                  1800000, NULL, NULL, NULL, '');
                """)
        }
        let store = try StateStore(directory: dir)
        let mark = try #require(try store.zoneRollupMark())
        #expect(mark.open == [ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: Timestamp(nanoseconds: 5))])
        #expect(try store.zoneTransitions(after: 0).map(\.transition.visit) == [false])
        let figures = try store.zoneFigures(span: .hours(1), zone: "dock", from: hour - .hours(1), to: hour)
        #expect(figures.first.map { $0.occupancySeconds == 1800 && abs($0.occupancyMean - 0.5) < 1e-9 } == true)
        // Both kinds open for one pallet: two rows, read back as they were.
        var both = mark
        both.open.append(
            ZoneHours.OpenVisit(zone: "dock", asset: "pallet-1", entered: Timestamp(nanoseconds: 7), visit: true))
        try store.saveRollup(both, .init(), keepAfter: hour - .hours(48))
        #expect(try store.zoneRollupMark()?.open.count == 2)
    }

    @Test func sqliteErrorsNameTheStatementAndTheReason() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        #expect {
            try store.db.write { (db) throws(SQLiteError) in try db.execute("INSERT INTO nowhere VALUES (1)") }
        } throws: { error in
            let text = "\(error)"
            return text.contains("no such table: nowhere") && text.contains("INSERT INTO nowhere")
        }
    }

    @Test func aStateDirectoryThatCannotBeMadeIsNamed() {
        #expect {
            try StateStore(directory: "/proc/beacond-cannot-be-here/state")
        } throws: { "\($0)".contains("/proc/beacond-cannot-be-here/") }
    }
}

/// The history keeps alerts and telemetry apart (`HistoryRetention`): a day of positions does
/// not push out the night's zone alerts, and each class is bounded by age and by count.
@Suite struct HistoryRetentionTests {
    static func event(_ n: Int, _ type: String, at seconds: Int64) -> StateStore.StoredEvent {
        StateStore.StoredEvent(
            id: String(format: "E%06d", n), type: type, time: Timestamp(nanoseconds: seconds * 1_000_000_000),
            body: "{\"n\":\(n)}")
    }

    @Test func aFloodOfPositionsKeepsEveryAlert() throws {
        let store = try StateStore(
            directory: try Executables.temporaryDirectory().path,
            retention: HistoryRetention(
                alerts: .init(maxAge: .hours(24 * 30), maxEvents: 1000),
                telemetry: .init(maxAge: .hours(6), maxEvents: 100)))
        var n = 0
        var alerts: [String] = []
        var positions: [String] = []
        for batch in 0..<50 {
            var events: [StateStore.StoredEvent] = []
            for _ in 0..<20 {
                n += 1
                events.append(Self.event(n, "beacond.asset.position", at: Int64(n)))
                positions.append(events.last!.id)
            }
            if batch % 10 == 0 {
                n += 1
                events.append(Self.event(n, "beacond.zone.enter", at: Int64(n)))
                alerts.append(events.last!.id)
            }
            try store.append(events)
        }
        let kept = try store.events(limit: 10_000)
        // Before: one shared count of 100 would have kept no alert at all.
        #expect(kept.filter { $0.type == "beacond.zone.enter" }.map(\.id) == alerts)
        #expect(kept.filter { $0.type == "beacond.asset.position" }.map(\.id) == Array(positions.suffix(100)))
    }

    @Test func eachClassIsTrimmedByItsOwnAgeAndByCountAcrossReopening() throws {
        let dir = try Executables.temporaryDirectory().path
        let retention = HistoryRetention(
            alerts: .init(maxAge: .hours(24 * 30), maxEvents: 3), telemetry: .init(maxAge: .hours(1), maxEvents: 1000))
        var store: StateStore? = try StateStore(directory: dir, retention: retention)
        let hour: Int64 = 3600
        try store!.append([
            Self.event(1, "beacond.region.enter", at: 0), Self.event(2, "beacond.ranging", at: 0),
            Self.event(3, "beacond.asset.position", at: 0),
        ])
        // Two hours later: the telemetry from then is past its hour; the alert is kept.
        try store!.append([Self.event(4, "beacond.asset.position", at: 2 * hour)])
        #expect(try store!.events().map(\.id) == ["E000001", "E000004"])
        store = nil
        // Reopened, the counts are taken again: three more alerts leave the newest three.
        store = try StateStore(directory: dir, retention: retention)
        try store!.append((5...7).map { Self.event($0, "beacond.zone.exit", at: 2 * hour) })
        #expect(try store!.events().map(\.id) == ["E000004", "E000005", "E000006", "E000007"])
        // A reload's new amounts apply from the next write on.
        var shorter = retention
        shorter.alerts.maxEvents = 1
        store!.setRetention(shorter)
        try store!.append([Self.event(8, "beacond.alarm", at: 2 * hour)])
        #expect(try store!.events().map(\.id) == ["E000004", "E000008"])
    }

    @Test func theHistoryReadsNewestFirstAndSinceATime() throws {
        let store = try StateStore(directory: try Executables.temporaryDirectory().path)
        try store.append(
            (1...6).map {
                Self.event($0, $0 % 2 == 0 ? "beacond.asset.position" : "beacond.zone.enter", at: Int64($0) * 60)
            })
        let newest = try store.events(limit: 3, order: .init(newestFirst: true))
        #expect(newest.map(\.id) == ["E000006", "E000005", "E000004"])
        let older = try store.events(limit: 3, order: .init(newestFirst: true, before: "E000004"))
        #expect(older.map(\.id) == ["E000003", "E000002", "E000001"])
        let since = try store.events(order: .init(since: Timestamp(nanoseconds: 240 * 1_000_000_000)))
        #expect(since.map(\.id) == ["E000004", "E000005", "E000006"])
        let zones = try store.events(matching: EventTypeGlob(["zone.*"]), order: .init(newestFirst: true))
        #expect(zones.map(\.id) == ["E000005", "E000003", "E000001"])
    }
}
