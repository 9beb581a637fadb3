import BeaconConfig
import BeaconRuntime
import Logging
import Synchronization
import Testing

/// The daemon's services start in their order and stop in reverse, each stop after the
/// service started after it has stopped; a failed start unwinds; one service's end stops all.
@Suite struct ServiceGroupTests {
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    final class Part: DaemonService, @unchecked Sendable {
        let name: String
        let journal: Journal
        let failsToStart: Bool
        let startsAfter: [String]
        init(_ name: String, _ journal: Journal, failsToStart: Bool = false, after: [String] = []) {
            self.name = name
            self.journal = journal
            self.failsToStart = failsToStart
            startsAfter = after
        }
        struct Refused: Error {}
        func start() throws {
            if failsToStart { throw Refused() }
            journal.add("start \(name)")
        }
        func stop() { journal.add("stop \(name)") }
        func apply(_ reload: ConfigReload, from old: Config) -> Logger.Metadata {
            journal.add("apply \(name)")
            return ["\(name)": "done"]
        }
    }

    static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The order is declared by each service (`startsAfter`), not implied by list position:
    /// a list that starts one before what it needs starts nothing.
    @Test func aListThatStartsAServiceBeforeWhatItNeedsStartsNothing() throws {
        let journal = Journal()
        let group = ServiceGroup(logger: Self.silent)
        let wrong: [any DaemonService & Sendable] = [
            Part("api", journal), Part("input", journal, after: ["engine"]), Part("engine", journal),
        ]
        #expect(
            ServiceGroup.orderProblem(wrong)?.description
                == "service input starts before engine, which it needs running")
        #expect(throws: ServiceGroup.OrderError.self) { try group.start(wrong) }
        #expect(journal.all.isEmpty)
        // What it needs but the list has not (the site's, without `site:`) is no obstacle
        let right: [any DaemonService & Sendable] = [
            Part("api", journal), Part("engine", journal, after: ["site-connection"]),
            Part("input", journal, after: ["engine"]),
        ]
        #expect(ServiceGroup.orderProblem(right) == nil)
        try group.start(right)
        #expect(journal.all == ["start api", "start engine", "start input"])
        group.stop()
    }

    @Test func startsInOrderAndStopsInReverse() throws {
        let journal = Journal()
        let group = ServiceGroup(logger: Self.silent)
        try group.start([Part("api", journal), Part("engine", journal), Part("input", journal)])
        #expect(group.names == ["api", "engine", "input"])
        group.requestStop()
        group.waitForStopRequest()
        group.stop()
        #expect(
            journal.all == ["start api", "start engine", "start input", "stop input", "stop engine", "stop api"])
        group.stop()
        #expect(journal.all.count == 6, "stopped once")
    }

    @Test func aFailedStartStopsWhatStartedAndRethrows() {
        let journal = Journal()
        let group = ServiceGroup(logger: Self.silent)
        #expect(throws: Part.Refused.self) {
            try group.start([
                Part("api", journal), Part("engine", journal), Part("input", journal, failsToStart: true),
                Part("systemd", journal),
            ])
        }
        #expect(journal.all == ["start api", "start engine", "stop engine", "stop api"])
    }

    @Test func aServiceThatEndsOnItsOwnStopsTheGroupOnce() throws {
        let journal = Journal()
        let group = ServiceGroup(logger: Self.silent)
        try group.start([Part("api", journal), Part("input", journal)])
        group.serviceEnded("input")
        group.serviceEnded("input")
        group.waitForStopRequest()  // returns: the end asked for the stop
        group.stop()
        #expect(journal.all.suffix(2) == ["stop input", "stop api"])
    }

    @Test func aReloadTellsEachServiceInOrderAndMergesWhatTheyDid() throws {
        let journal = Journal()
        let group = ServiceGroup(logger: Self.silent)
        try group.start([Part("engine", journal), Part("webhooks", journal)])
        let config = Config()
        let done = group.apply(ConfigReload(from: config, to: config), from: config)
        #expect(journal.all.suffix(2) == ["apply engine", "apply webhooks"])
        #expect(done.keys.sorted() == ["engine", "webhooks"])
        group.stop()
    }

    /// A service's threads have all ended when `join` returns.
    @Test func threadsAreJoinedAtTheStop() {
        let threads = ServiceThreads()
        let ran = Atomic<Int>(0)
        for _ in 0..<4 { threads.spawn(named: "test") { ran.add(1, ordering: .relaxed) } }
        threads.join()
        #expect(ran.load(ordering: .relaxed) == 4)
    }
}
