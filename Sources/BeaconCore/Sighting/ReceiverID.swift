import Synchronization

/// A receiver's name as a number, the same for the same name everywhere in the process.
///
/// Why: every sighting names the receiver that heard it, and the engine looks its receiver up
/// at every one. As a `String` that was a hash of the text per sighting, and a heap copy per
/// sighting for a name past 15 bytes; as a number it is an array index. Producers (the line
/// reader, the D-Bus reader, a site's intake, the simulator) intern a name once and reuse its
/// id; the text is looked up again only where it is shown.
public struct ReceiverID: Hashable, Sendable, CustomStringConvertible {
    public let index: UInt32

    init(index: UInt32) { self.index = index }

    /// The id of `name`, interned now if it is new; nil once `ReceiverNames.limit` names are
    /// known (a relay inventing names cannot grow the table without bound).
    public init?(_ name: String) {
        guard let id = ReceiverNames.intern(name) else { return nil }
        self = id
    }

    public var name: String { ReceiverNames.name(of: self) }
    public var description: String { name }
}

/// The process's table of receiver names (`ReceiverID`). Append-only and bounded.
public enum ReceiverNames {
    /// More names than a store has receivers by orders of magnitude; the engine keeps its own,
    /// lower limit (`BeaconEngine.receiverLimit`). A sighting whose name finds the table full
    /// carries the name itself (`Sighting.receiver` still answers it), on a slower path.
    public static let limit = 65_536

    private struct Table {
        var ids: [String: UInt32] = [:]
        var names: [String] = []
    }

    private static let table = Mutex(Table())

    static func intern(_ name: String) -> ReceiverID? {
        table.withLock { t in
            if let index = t.ids[name] { return ReceiverID(index: index) }
            guard t.names.count < limit else { return nil }
            let index = UInt32(t.names.count)
            t.ids[name] = index
            t.names.append(name)
            return ReceiverID(index: index)
        }
    }

    static func name(of id: ReceiverID) -> String {
        table.withLock { t in Int(id.index) < t.names.count ? t.names[Int(id.index)] : "" }
    }

    /// Names interned so far.
    public static var count: Int { table.withLock { $0.names.count } }
}
