import BeaconCore
import CLinux
import Glibc

/// Room set aside on the state directory's own disk, while it has room, for what the state
/// store cannot write once that disk is full: alerts (every event but ranging and proximity; positions are never stored)
/// and the region and zone states they moved to.
///
/// Why: what the store cannot write is held in memory and copied to the runtime directory
/// (`UnsavedKeep`), which outlives a crash or a restart but not a reboot: `/run` is memory.
/// A power cut while the disk is full then lost every alert made since it filled, and the
/// next boot restored states from before it filled, so an asset that had entered a zone was
/// reported entering again. Here the room is taken when the file is made: every byte of it
/// is written once then, so writing into it later needs no new block, full disk or not. On
/// btrfs, which writes every change to new blocks, the file is made no-copy-on-write first,
/// so that it too is written in place (`DiskReserveFilesystemTests`: ext4, xfs, btrfs).
///
/// Layout: a header with the generation of each part; two slots for states, written in turn
/// so that a write torn by a power cut leaves the other; then records of events, appended.
/// Every record carries its part's generation and a CRC-32, so emptying a part is one write
/// of the header (its generation moves on), and a torn or stale record ends the reading.
public struct DiskReserve: Sendable {
    public static let fileName = "beacond.reserve"
    /// 4 MiB: about 6,000 alerts and the states of a few thousand assets in zones.
    public static let defaultSize = 4 << 20
    static let headerBytes = 4096
    static let magic: [UInt8] = Array("BCNRSV01".utf8)
    static let recordMagic: UInt32 = 0x4352_4542  // "BERC"
    static let recordHeaderBytes = 20

    public let path: String
    public let size: Int
    private let fd: Int32
    private let slotBytes: Int
    private var eventsGeneration: UInt64
    private var statesGeneration: UInt64
    /// Where the next event record goes, and the sequence number of the last states written:
    /// after what the file held when opened, so that nothing an earlier run left is written over.
    private var eventsEnd: Int
    private var statesSequence: UInt64 = 0
    /// What the file held when opened, until `read` hands it over.
    private var found = Contents()

    /// The events and the states the reserve holds.
    public struct Contents: Sendable {
        public var events: [StateStore.StoredEvent] = []
        public var states: EngineSnapshot?
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ what: String, errno e: Int32 = errno) { description = "\(what): \(String(cString: strerror(e)))" }
        init(message: String) { description = message }
    }

    /// Opens the reserve at `path`, making it (`size` bytes, every one written) if it is not
    /// there whole. Throws when it cannot be made — typically because the disk is full already.
    public init(path: String, size: Int = DiskReserve.defaultSize) throws(Failure) {
        self.path = path
        self.size = max(size, 256 << 10)
        slotBytes = max(64 << 10, (self.size / 8) & ~4095)
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure("cannot open \(path)") }
        var st = stat()
        let header = fstat(fd, &st) == 0 && Int(st.st_size) == self.size ? Self.readHeader(fd) : nil
        if let header {
            (eventsGeneration, statesGeneration) = header
        } else {
            // Fresh generations, so that no record of an earlier file counts.
            eventsGeneration = UInt64.random(in: 1 ... .max)
            statesGeneration = UInt64.random(in: 1 ... .max)
            do throws(Failure) {
                try Self.fill(fd, bytes: self.size, path: path)
            } catch {
                Glibc.close(fd)
                unlink(path)
                throw error
            }
        }
        eventsEnd = Self.headerBytes + 2 * slotBytes
        if header == nil {
            try writeHeader()
            Self.syncDirectory(of: path)
        } else {
            found = scan()
        }
    }

    public func close() { Glibc.close(fd) }

    /// Room for event records.
    public var eventBytes: Int { size - Self.headerBytes - 2 * slotBytes }

    // MARK: Reading

    /// What the reserve held when it was opened: the events appended since it was last
    /// emptied of them, in order, and the newest states written since it was last emptied of
    /// states. Handed over once (the daemon reads it at start); what is written since is not in it.
    public mutating func read() -> Contents {
        defer { found = Contents() }
        return found
    }

    /// Reads the records and places the next append and states after them.
    private mutating func scan() -> Contents {
        var contents = Contents()
        var offset = Self.headerBytes + 2 * slotBytes
        while let (payload, next) = readRecord(at: offset, generation: eventsGeneration, limit: size),
            let event = Self.event(from: payload)
        {
            contents.events.append(event)
            offset = next
        }
        eventsEnd = offset
        var newest: (sequence: UInt64, states: EngineSnapshot)?
        for slot in 0..<2 {
            let start = Self.headerBytes + slot * slotBytes
            guard let (payload, _) = readRecord(at: start, generation: statesGeneration, limit: start + slotBytes),
                let (sequence, states) = Self.states(from: payload)
            else { continue }
            if newest.map({ sequence > $0.sequence }) ?? true { newest = (sequence, states) }
        }
        statesSequence = newest?.sequence ?? 0
        contents.states = newest?.states
        return contents
    }

    /// The payload of the record at `offset` if it is whole, of `generation`, and ends by
    /// `limit`, with where the next record starts.
    private func readRecord(at offset: Int, generation: UInt64, limit: Int) -> ([UInt8], Int)? {
        guard offset + Self.recordHeaderBytes <= limit else { return nil }
        var head = [UInt8](repeating: 0, count: Self.recordHeaderBytes)
        guard Self.pread(fd, &head, at: offset) else { return nil }
        guard Self.uint32(head, 0) == Self.recordMagic, Self.uint64(head, 4) == generation else { return nil }
        let length = Int(Self.uint32(head, 12))
        let end = offset + Self.recordHeaderBytes + length
        guard end <= limit else { return nil }
        var payload = [UInt8](repeating: 0, count: length)
        guard Self.pread(fd, &payload, at: offset + Self.recordHeaderBytes) else { return nil }
        guard Self.checksum(generation: generation, payload) == Self.uint32(head, 16) else { return nil }
        return (payload, end)
    }

    // MARK: Writing

    /// Appends `events` and syncs them to the disk; returns how many fitted (the rest did not:
    /// the reserve is full).
    @discardableResult
    public mutating func append(_ events: [StateStore.StoredEvent]) throws(Failure) -> Int {
        var bytes: [UInt8] = []
        var fitted = 0
        for event in events {
            let record = Self.record(Self.payload(of: event), generation: eventsGeneration)
            guard eventsEnd + bytes.count + record.count <= size else { break }
            bytes += record
            fitted += 1
        }
        guard !bytes.isEmpty else { return 0 }
        try write(bytes, at: eventsEnd)
        eventsEnd += bytes.count
        return fitted
    }

    /// Writes `states` over the older of the two slots, and syncs it.
    public mutating func write(_ states: EngineSnapshot) throws(Failure) {
        let record = Self.record(Self.payload(of: states, sequence: statesSequence + 1), generation: statesGeneration)
        guard record.count <= slotBytes else {
            throw Failure(message: "the states take \(record.count) bytes, a slot has \(slotBytes)")
        }
        statesSequence += 1
        try write(record, at: Self.headerBytes + Int(statesSequence % 2) * slotBytes)
    }

    /// Empties the reserve of events: one write of the header.
    public mutating func clearEvents() throws(Failure) {
        eventsGeneration &+= 1
        eventsEnd = Self.headerBytes + 2 * slotBytes
        try writeHeader()
    }

    /// Empties the reserve of states.
    public mutating func clearStates() throws(Failure) {
        statesGeneration &+= 1
        statesSequence = 0
        try writeHeader()
    }

    private func writeHeader() throws(Failure) {
        var header = Self.magic
        Self.put(eventsGeneration, into: &header)
        Self.put(statesGeneration, into: &header)
        Self.put(CRC32.checksum(header), into: &header)
        try write(header, at: 0)
    }

    private func write(_ bytes: [UInt8], at offset: Int) throws(Failure) {
        let written = bytes.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == bytes.count else { throw Failure("cannot write \(path)") }
        guard fdatasync(fd) == 0 else { throw Failure("cannot sync \(path)") }
    }

    /// Writes `bytes` zeros (so that their blocks are the file's) and syncs them. On btrfs the
    /// empty file is made no-copy-on-write first, else each later write would need new blocks;
    /// elsewhere the flag does not exist and its refusal changes nothing.
    private static func fill(_ fd: Int32, bytes: Int, path: String) throws(Failure) {
        guard ftruncate(fd, 0) == 0 else { throw Failure("cannot empty \(path)") }
        _ = clinux_set_no_copy_on_write(fd)
        let chunk = [UInt8](repeating: 0, count: 64 << 10)
        var offset = 0
        while offset < bytes {
            let n = min(chunk.count, bytes - offset)
            let written = chunk.withUnsafeBytes { Glibc.pwrite(fd, $0.baseAddress, n, off_t(offset)) }
            guard written > 0 else { throw Failure("cannot make the \(bytes >> 10) KiB of \(path)") }
            offset += written
        }
        guard fsync(fd) == 0 else { throw Failure("cannot sync \(path)") }
    }

    private static func syncDirectory(of path: String) {
        let parent = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let dir = open(parent.isEmpty ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { return }
        fsync(dir)
        Glibc.close(dir)
    }

    /// The generations of a header that is whole, else nil.
    private static func readHeader(_ fd: Int32) -> (UInt64, UInt64)? {
        var header = [UInt8](repeating: 0, count: 28)
        guard pread(fd, &header, at: 0), Array(header[0..<8]) == magic,
            CRC32.checksum(header[0..<24]) == uint32(header, 24)
        else { return nil }
        return (uint64(header, 8), uint64(header, 16))
    }

    // MARK: Records

    static func record(_ payload: [UInt8], generation: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordHeaderBytes + payload.count)
        put(recordMagic, into: &bytes)
        put(generation, into: &bytes)
        put(UInt32(payload.count), into: &bytes)
        put(checksum(generation: generation, payload), into: &bytes)
        return bytes + payload
    }

    static func checksum(generation: UInt64, _ payload: [UInt8]) -> UInt32 {
        var g: [UInt8] = []
        put(generation, into: &g)
        return CRC32.checksum(payload, continuing: CRC32.checksum(g))
    }

    private static func pread(_ fd: Int32, _ buffer: inout [UInt8], at offset: Int) -> Bool {
        let n = buffer.count
        return buffer.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, n, off_t(offset)) } == n
    }

    static func put<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * $1) }
    }

    static func uint64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
    }
}
