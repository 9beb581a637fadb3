/// The manufacturer and service data of one advertisement, held in the value itself.
///
/// Why: a `Sighting` is made and dropped millions of times (replay, a site's locator, a busy
/// store's D-Bus stream). Held as arrays, each one cost three heap allocations — the payload,
/// the array of data, an address string — about 40 % of what reading a sighting cost. A legacy
/// advertisement holds at most 31 bytes (with a scan response, 62), so its data fits in 64
/// bytes inside the value; larger ones (extended advertising, long service data) spill into
/// one array, the slower and rarer path.
///
/// The bytes are entries in received order, each `kind`, key, a 2-byte little-endian payload
/// length, then the payload: manufacturer (company, 2 bytes), service by 16-bit UUID (2 bytes),
/// by 128-bit UUID (16 bytes, most significant first), or by a key that is no UUID (its text,
/// with a 2-byte length: records may carry any key, and it is kept as given).
public struct AdvertisementData: Sendable {
    static let capacity = 64
    private var inline: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var inlineCount: UInt8 = 0
    /// Where the manufacturer entries end and the service entries begin.
    private var manufacturerEnd: UInt32 = 0
    /// Every entry, once they no longer fit inline; nil on the common path.
    private var spill: [UInt8]?

    enum Kind: UInt8 {
        case manufacturer = 0, service16 = 1, service128 = 2, serviceText = 3
    }

    public init() {}

    public var isEmpty: Bool { inlineCount == 0 && spill == nil }

    /// Whether the entries are held in the value itself (false once they spilled to the heap).
    public var isInline: Bool { spill == nil }

    /// The entries' bytes, wherever they are.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if let spill { return try spill.withUnsafeBytes(body) }
        return try withUnsafeBytes(of: inline) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(inlineCount)])) }
    }

    /// Appends manufacturer data: `company`, then `payload` as it follows the company id.
    public mutating func appendManufacturer(company: UInt16, payload: UnsafeRawBufferPointer) {
        appendManufacturer(company: company, count: payload.count) { out in
            if payload.count > 0 { out.baseAddress!.copyMemory(from: payload.baseAddress!, byteCount: out.count) }
        }
    }

    /// Appends manufacturer data whose payload `write` writes into `count` bytes (the line
    /// reader's hex digits, decoded in place); an entry holds at most 65,535 bytes, and `write`
    /// gets a buffer of what it holds, which it must not write past. Manufacturer entries come before service
    /// entries whatever the order they are appended in, so two values holding the same data
    /// have the same bytes.
    public mutating func appendManufacturer(
        company: UInt16, count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let count = min(count, 0xFFFF)
        insert(
            at: Int(manufacturerEnd), size: 5 + count,
            { out in
                out[0] = Kind.manufacturer.rawValue
                out[1] = UInt8(company & 0xFF)
                out[2] = UInt8(company >> 8)
                out[3] = UInt8(count & 0xFF)
                out[4] = UInt8(count >> 8)
                write(UnsafeMutableRawBufferPointer(rebasing: out[5...]))
            })
        manufacturerEnd &+= UInt32(truncatingIfNeeded: 5 + count)
    }

    /// Appends service data under `uuid` as BlueZ, records and firmware write it: a 128-bit
    /// UUID of the Bluetooth base (`0000feaa-0000-1000-8000-00805f9b34fb`) is kept as its
    /// 16 bits, as are `feaa` and `0xfeaa`; any other 128-bit UUID as its 16 bytes; any other
    /// key as its text.
    public mutating func appendService(uuid: String, payload: UnsafeRawBufferPointer) {
        var text = uuid
        text.withUTF8 { appendService(uuid: UnsafeRawBufferPointer($0), payload: payload) }
    }

    public mutating func appendService(uuid: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer) {
        appendService(uuid: uuid, count: payload.count) { out in
            if payload.count > 0 { out.baseAddress!.copyMemory(from: payload.baseAddress!, byteCount: out.count) }
        }
    }

    /// The same with the payload written by `write` into `count` bytes.
    public mutating func appendService(
        uuid: UnsafeRawBufferPointer, count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        appendService(ServiceUUID(uuid), text: uuid, count: count, write)
    }

    /// Service data under a UUID already read (an advertisement's own AD structures).
    public mutating func appendService(_ uuid: ServiceUUID, payload: UnsafeRawBufferPointer) {
        appendService(uuid, text: UnsafeRawBufferPointer(start: nil, count: 0), count: payload.count) { out in
            if payload.count > 0 { out.baseAddress!.copyMemory(from: payload.baseAddress!, byteCount: out.count) }
        }
    }

    private mutating func appendService(
        _ key: ServiceUUID?, text uuid: UnsafeRawBufferPointer, count: Int,
        _ write: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        switch key {
        case let .short(value)?:
            withUnsafeBytes(of: (UInt8(value & 0xFF), UInt8(value >> 8))) {
                appendService(kind: .service16, key: $0, count: count, write)
            }
        case let .long(value)?:
            withUnsafeBytes(of: (value.high.bigEndian, value.low.bigEndian)) {
                appendService(kind: .service128, key: $0, count: count, write)
            }
        case nil:
            // As text, invalid UTF-8 becoming U+FFFD, as `String(decoding:)` reads a record.
            let text = Array(String(decoding: uuid, as: UTF8.self).utf8.prefix(0xFFFF))
            let key = [UInt8(text.count & 0xFF), UInt8(text.count >> 8)] + text
            key.withUnsafeBytes { appendService(kind: .serviceText, key: $0, count: count, write) }
        }
    }

    /// Service data by a 16-bit UUID, as BlueZ's and firmware's most common (Eddystone's 0xFEAA).
    public mutating func appendService(shortUUID value: UInt16, payload: UnsafeRawBufferPointer) {
        appendService(.short(value), payload: payload)
    }

    private mutating func appendService(
        kind: Kind, key: UnsafeRawBufferPointer, count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let count = min(count, 0xFFFF)
        insert(
            at: byteCount, size: 3 + key.count + count,
            { out in
                out[0] = kind.rawValue
                out.baseAddress!.advanced(by: 1).copyMemory(from: key.baseAddress!, byteCount: key.count)
                out[1 + key.count] = UInt8(count & 0xFF)
                out[2 + key.count] = UInt8(count >> 8)
                write(UnsafeMutableRawBufferPointer(rebasing: out[(3 + key.count)...]))
            })
    }

    private var byteCount: Int { spill?.count ?? Int(inlineCount) }

    /// Makes room for `size` bytes at `at` (moving what follows) and has `write` fill them:
    /// inline while everything fits, else in `spill`.
    private mutating func insert(at: Int, size: Int, _ write: (UnsafeMutableRawBufferPointer) -> Void) {
        if spill == nil, Int(inlineCount) + size <= Self.capacity {
            let end = Int(inlineCount)
            withUnsafeMutableBytes(of: &inline) { bytes in
                let base = bytes.baseAddress!
                if at < end { (base + at + size).copyMemory(from: base + at, byteCount: end - at) }
                write(UnsafeMutableRawBufferPointer(start: base + at, count: size))
            }
            inlineCount += UInt8(size)
            return
        }
        // Taken out of the value first, so that the array is not shared and grows in place:
        // copied for each entry, an advertisement of 412 small structures cost 58 µs.
        var all = spill.take() ?? withBytes { Array($0) }
        all.insert(contentsOf: repeatElement(0, count: size), at: at)
        all.withUnsafeMutableBytes { write(UnsafeMutableRawBufferPointer(rebasing: $0[at..<(at + size)])) }
        spill = all
        inlineCount = 0
    }

    /// One entry as `forEach` hands it over.
    public struct Entry {
        var kind: Kind
        /// The key's bytes: company or 16-bit UUID little-endian, 16 UUID bytes, or the text.
        public var key: UnsafeRawBufferPointer
        public var payload: UnsafeRawBufferPointer

        public var isManufacturer: Bool { kind == .manufacturer }
        /// The company id of manufacturer data.
        public var company: UInt16 { UInt16(key[0]) | UInt16(key[1]) << 8 }
        /// The 16-bit UUID of service data keyed by one (or by a 128-bit UUID of the base).
        public var shortUUID: UInt16? { kind == .service16 ? UInt16(key[0]) | UInt16(key[1]) << 8 : nil }

        /// The service's key as text: a 128-bit UUID in lower case, as BlueZ writes it, or the
        /// key as given when it is none.
        public var serviceKey: String {
            switch kind {
            case .manufacturer: return ""
            case .service16: return ServiceUUID.short(shortUUID!).text
            case .service128: return ServiceUUID.long(BeaconUUID(bytes: key, at: 0)).text
            case .serviceText: return String(decoding: key, as: UTF8.self)
            }
        }
    }

    /// Calls `body` with each entry in received order until it returns a value.
    @inline(__always)
    public func first<R>(where body: (Entry) -> R?) -> R? {
        withBytes { bytes in
            var at = 0
            while at < bytes.count {
                let kind = Kind(rawValue: bytes[at]) ?? .serviceText
                var keyStart = at + 1
                var keyCount: Int
                switch kind {
                case .manufacturer, .service16: keyCount = 2
                case .service128: keyCount = 16
                case .serviceText:
                    keyCount = Int(bytes[at + 1]) | Int(bytes[at + 2]) << 8
                    keyStart += 2
                }
                let lengthAt = keyStart + keyCount
                let count = Int(bytes[lengthAt]) | Int(bytes[lengthAt + 1]) << 8
                let payloadAt = lengthAt + 2
                let entry = Entry(
                    kind: kind, key: UnsafeRawBufferPointer(rebasing: bytes[keyStart..<lengthAt]),
                    payload: UnsafeRawBufferPointer(rebasing: bytes[payloadAt..<(payloadAt + count)]))
                if let r = body(entry) { return r }
                at = payloadAt + count
            }
            return nil
        }
    }

    /// Manufacturer data as arrays (the tests', the API's and the writers' form).
    public var manufacturerData: [ManufacturerDatum] {
        var out: [ManufacturerDatum] = []
        _ = first { (e: Entry) -> Bool? in
            if e.isManufacturer { out.append(ManufacturerDatum(company: e.company, payload: Array(e.payload))) }
            return nil
        }
        return out
    }

    /// Service data as arrays, each key as `Entry.serviceKey` gives it.
    public var serviceData: [ServiceDatum] {
        var out: [ServiceDatum] = []
        _ = first { (e: Entry) -> Bool? in
            if !e.isManufacturer { out.append(ServiceDatum(uuid: e.serviceKey, payload: Array(e.payload))) }
            return nil
        }
        return out
    }

    /// This data with its manufacturer entries replaced by those of `manufacturer`, its service
    /// entries by those of `service` (each when given): BlueZ's PropertiesChanged replaces one
    /// property and leaves the other.
    public mutating func replace(
        manufacturerWith manufacturer: AdvertisementData?, serviceWith service: AdvertisementData?
    ) {
        var merged = AdvertisementData()
        _ = (manufacturer ?? self).first { (e: Entry) -> Bool? in
            if e.isManufacturer { merged.appendManufacturer(company: e.company, payload: e.payload) }
            return nil
        }
        _ = (service ?? self).first { (e: Entry) -> Bool? in
            if !e.isManufacturer { merged.append(service: e) }
            return nil
        }
        self = merged
    }

    /// Takes the entries of one signal that changed manufacturer data, service data or both
    /// (`fresh` holds what it brought), keeping this value's entries of a kind it left alone.
    /// Why: on the scanner's path the signal is read straight into a value, and when nothing
    /// of the other kind is kept (an iBeacon has no service data) that value is taken as it
    /// is, not entry by entry (`replace`).
    public mutating func take(_ fresh: AdvertisementData, manufacturerChanged: Bool, serviceChanged: Bool) {
        let keepsManufacturer = !manufacturerChanged && manufacturerEnd > 0
        let keepsService = !serviceChanged && byteCount > Int(manufacturerEnd)
        guard keepsManufacturer || keepsService else {
            self = fresh
            return
        }
        replace(manufacturerWith: manufacturerChanged ? fresh : nil, serviceWith: serviceChanged ? fresh : nil)
    }

    private mutating func append(service e: Entry) {
        let copy = { (out: UnsafeMutableRawBufferPointer) in
            if e.payload.count > 0 {
                out.baseAddress!.copyMemory(from: e.payload.baseAddress!, byteCount: out.count)
            }
        }
        if e.kind == .serviceText {
            let key = [UInt8(e.key.count & 0xFF), UInt8(e.key.count >> 8)] + Array(e.key)
            key.withUnsafeBytes { appendService(kind: .serviceText, key: $0, count: e.payload.count, copy) }
        } else {
            appendService(kind: e.kind, key: e.key, count: e.payload.count, copy)
        }
    }

    public init(manufacturerData: [ManufacturerDatum], serviceData: [ServiceDatum]) {
        for m in manufacturerData { m.payload.withUnsafeBytes { appendManufacturer(company: m.company, payload: $0) } }
        for s in serviceData { s.payload.withUnsafeBytes { appendService(uuid: s.uuid, payload: $0) } }
    }
}

extension AdvertisementData: Equatable {
    public static func == (a: AdvertisementData, b: AdvertisementData) -> Bool {
        a.withBytes { x in b.withBytes { y in x.count == y.count && (x.count == 0 || memcmpEqual(x, y)) } }
    }
}

@inline(__always)
private func memcmpEqual(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Bool {
    for i in 0..<x.count where x[i] != y[i] { return false }
    return true
}
