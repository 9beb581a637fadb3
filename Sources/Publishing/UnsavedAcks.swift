import Glibc
import Synchronization

/// Deliveries a receiver acknowledged whose deletion from the outbox the full disk refused,
/// kept beside `UnsavedKeep`'s copy in the runtime directory (one line per webhook: its
/// name, the outbox seq acknowledged through, and that entry's event id), and read back at
/// the next start.
///
/// Why: the worker remembered such an acknowledgement only in memory, so a restart (or a
/// crash, or a reload that replaced the worker) while the disk was full sent the receiver
/// those events a second time. Receivers may de-duplicate by id, but an operator restarting
/// a gateway whose disk filled expects no alert twice. Why the event id too: the seq alone
/// would skip the wrong events if the state store were replaced between runs; an entry whose
/// seq now holds another event is not trusted. A reboot empties `/run`, and with it this
/// file: those events are then sent again, with the same ids (at-least-once, as before).
public final class UnsavedAcks: Sendable {
    /// A webhook's acknowledgement the outbox does not have yet.
    public struct Ack: Sendable, Equatable {
        public var seq: Int64
        public var eventID: String

        public init(seq: Int64, eventID: String) {
            self.seq = seq
            self.eventID = eventID
        }
    }

    public let path: String
    private let directory: String
    private let acks: Mutex<[String: Ack]>

    /// Reads what an earlier run kept in `directory` (`UnsavedKeep.directory`), if anything;
    /// a line it cannot read is left out.
    public init(directory: String) {
        self.directory = directory
        path = directory + "/acks"
        acks = Mutex(Self.read(path))
    }

    /// What is kept for `webhook`, if anything.
    public func kept(webhook: String) -> Ack? { acks.withLock { $0[webhook] } }

    /// The outbox would not take `webhook`'s acknowledgement through `ack`: kept until
    /// `saved`. Throws when the runtime directory will not take it either (the worker then
    /// knows it only in memory, as before).
    public func unsaved(webhook: String, _ ack: Ack) throws(Failure) {
        try acks.withLock { (all) throws(Failure) in
            guard all[webhook] != ack else { return }
            var next = all
            next[webhook] = ack
            try write(next)
            all = next
        }
    }

    /// The outbox took `webhook`'s acknowledgement (or has no such entry any more).
    public func saved(webhook: String) {
        acks.withLock { all in
            guard all.removeValue(forKey: webhook) != nil else { return }
            if all.isEmpty {
                unlink(path)
                rmdir(directory)  // fails, as it should, while UnsavedKeep's copy is there
            } else {
                try? write(all)
            }
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Replaces the file in one step (a new file renamed over it), so that a crash mid-write
    /// leaves the old one.
    private func write(_ all: [String: Ack]) throws(Failure) {
        mkdir(directory, 0o700)
        let text = all.keys.sorted().map { "\($0)\t\(all[$0]!.seq)\t\(all[$0]!.eventID)\n" }.joined()
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "\(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let reason = written == bytes.count ? nil : String(cString: strerror(errno))
        close(fd)
        guard reason == nil, rename(temporary, path) == 0 else {
            let why = reason ?? String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "\(path): \(why)")
        }
    }

    private static func read(_ path: String) -> [String: Ack] {
        guard let file = fopen(path, "r") else { return [:] }
        defer { fclose(file) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            text += buffer[..<n]
        }
        var all: [String: Ack] = [:]
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            // An outbox seq is a SQLite rowid, 1 or more: anything else was not written by a
            // worker (and `seq - 1` of Int64.min would trap at every start).
            guard fields.count == 3, !fields[0].isEmpty, let seq = Int64(fields[1]), seq >= 1, !fields[2].isEmpty
            else { continue }
            all[String(fields[0])] = Ack(seq: seq, eventID: String(fields[2]))
        }
        return all
    }
}
