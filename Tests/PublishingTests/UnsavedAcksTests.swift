import BeaconCore
import Foundation
import Storage
import Synchronization
import Testing

@testable import Publishing

/// An acknowledgement the full disk would not save, kept for the next run (`UnsavedAcks`):
/// what the next worker skips, and when it does not trust what was kept.
@Suite struct UnsavedAcksTests {
    static func directory() -> String { NSTemporaryDirectory() + "beacond-acks-\(UUID().uuidString)" }

    /// Runs a worker over `store` with `acks` until its outbox is empty; the batches it sent.
    static func deliver(_ store: StateStore, acks: UnsavedAcks) throws -> [[String]] {
        let transport = OutboxWorkerTests.ScriptedTransport([])
        let worker = OutboxWorkerTests.worker(store, transport, hooks: .init(acks: acks))
        worker.stop()
        worker.run()
        return transport.batches.withLock { $0 }
    }

    @Test func whatWasKeptIsReadBackByTheNextRunAndGoesOnceSaved() throws {
        let directory = Self.directory()
        try UnsavedAcks(directory: directory).unsaved(webhook: "crm", .init(seq: 7, eventID: "e7"))
        try UnsavedAcks(directory: directory).unsaved(webhook: "wms", .init(seq: 3, eventID: "e3"))
        let next = UnsavedAcks(directory: directory)
        #expect(next.kept(webhook: "crm") == .init(seq: 7, eventID: "e7"))
        #expect(next.kept(webhook: "wms") == .init(seq: 3, eventID: "e3"))
        next.saved(webhook: "crm")
        #expect(UnsavedAcks(directory: directory).kept(webhook: "crm") == nil)
        next.saved(webhook: "wms")
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing left: the directory goes")
    }

    @Test func aLineThatCannotBeReadIsLeftOut() throws {
        let directory = Self.directory()
        try UnsavedAcks(directory: directory).unsaved(webhook: "crm", .init(seq: 2, eventID: "e2"))
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/acks"))
        try file.seekToEnd()
        try file.write(
            contentsOf: Data("wms\tnot-a-seq\te9\nlow\t-9223372036854775808\te1\nzero\t0\te0\ntorn".utf8))
        try file.close()
        let read = UnsavedAcks(directory: directory)
        #expect(read.kept(webhook: "crm") == .init(seq: 2, eventID: "e2"))
        #expect(read.kept(webhook: "wms") == nil && read.kept(webhook: "torn") == nil)
        // Issue 51, item 14: a seq no outbox has (Int64.min made every start trap) is left out,
        // and a worker starts over what was read.
        #expect(read.kept(webhook: "low") == nil && read.kept(webhook: "zero") == nil)
    }

    /// Issue 51, item 14: a crafted line with the lowest seq made every start trap until `/run`
    /// was emptied; now it is not read, and the worker sends its outbox.
    @Test func theLowestSeqIsNotReadAndTheWorkerStarts() throws {
        let directory = Self.directory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("crm\t-9223372036854775808\te1\n".utf8).write(to: URL(fileURLWithPath: directory + "/acks"))
        let acks = UnsavedAcks(directory: directory)
        #expect(acks.kept(webhook: "crm") == nil)
        #expect(try Self.deliver(try OutboxWorkerTests.store(events: ["e1"]), acks: acks) == [["e1"]])
    }

    /// The next run's worker does not send again what the receiver acknowledged through the
    /// kept entry, and the note goes once the outbox took the acknowledgement.
    @Test func theNextWorkerSkipsWhatWasAcknowledged() throws {
        let store = try OutboxWorkerTests.store(events: ["e1", "e2", "e3"])
        let second = try store.pending(webhook: "crm", limit: 10)[1]
        let acks = UnsavedAcks(directory: Self.directory())
        try acks.unsaved(webhook: "crm", .init(seq: second.seq, eventID: "e2"))
        #expect(try Self.deliver(store, acks: acks) == [["e3"]])
        #expect(acks.kept(webhook: "crm") == nil)
        #expect(try store.pending(webhook: "crm", limit: 10).isEmpty)
    }

    /// A kept seq that now holds another event (the state store was replaced between runs)
    /// is not trusted: everything is sent.
    @Test func aKeptAcknowledgementForAnotherEventIsIgnored() throws {
        let store = try OutboxWorkerTests.store(events: ["e1", "e2", "e3"])
        let second = try store.pending(webhook: "crm", limit: 10)[1]
        let acks = UnsavedAcks(directory: Self.directory())
        try acks.unsaved(webhook: "crm", .init(seq: second.seq, eventID: "from-another-store"))
        #expect(try Self.deliver(store, acks: acks) == [["e1", "e2", "e3"]])
        #expect(acks.kept(webhook: "crm") == nil)
    }

    /// An entry already gone (the delete was saved after all) leaves nothing to skip.
    @Test func aKeptAcknowledgementTheOutboxNoLongerHasIsDropped() throws {
        let store = try OutboxWorkerTests.store(events: ["e1", "e2"])
        let first = try store.pending(webhook: "crm", limit: 10)[0]
        try store.delivered(webhook: "crm", through: first.seq)
        let acks = UnsavedAcks(directory: Self.directory())
        try acks.unsaved(webhook: "crm", .init(seq: first.seq, eventID: "e1"))
        #expect(try Self.deliver(store, acks: acks) == [["e2"]])
        #expect(acks.kept(webhook: "crm") == nil)
    }
}
