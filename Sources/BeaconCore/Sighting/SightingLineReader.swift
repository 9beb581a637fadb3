/// Reads sighting records (SPEC §1.2) straight from a line's bytes: no document tree, no
/// `String` per key, hex payloads decoded into bytes as they are read.
///
/// Why: replay, `POST /v1/sightings` and a site's batches carry millions of these lines, and
/// the generic path (`JSONParser` then `SightingRecord.parse`) spends most of its time building
/// values that are thrown away at once. This reader knows the record's keys and takes the
/// common shape only: plain strings, numbers, the two payload objects, and unknown keys whose
/// values are scalars. Anything else — an escape in a string, a nested unknown value, a key
/// given twice, any error at all — is handed to the generic path, which decides.
/// So a line is accepted with the same values, or refused with the same reason, either way
/// (`SightingReaderDifferentialTests`, the `sightings-reader` fuzz target).
public struct SightingLineReader {
    /// Receiver ids read lately (valid ones), reused while they repeat.
    private var receivers: [(bytes: [UInt8], id: ReceiverID)] = []
    static let receiversKept = 8

    public init() {}

    /// The record on `line` (surrounding whitespace allowed), or the reason it is refused.
    public mutating func read(_ line: UnsafeRawBufferPointer) throws(SightingRecordError) -> Sighting {
        if let sighting = sighting(in: line) { return sighting }
        return try SightingRecord.parse(line: String(decoding: line, as: UTF8.self))
    }

    /// The same, for bytes in an array.
    public mutating func read(_ line: ArraySlice<UInt8>) throws(SightingRecordError) -> Sighting {
        if let sighting = line.withUnsafeBytes({ self.sighting(in: $0) }) { return sighting }
        return try SightingRecord.parse(line: String(decoding: line, as: UTF8.self))
    }

    /// The record on `line` when it has the common shape; nil whenever the generic path must
    /// decide (then it is `SightingRecord.parse(line:)` or, for a trace, `TraceRecord.parse`).
    public mutating func sighting(in line: UnsafeRawBufferPointer) -> Sighting? {
        guard line.count <= SightingRecord.maxLineBytes else { return nil }
        var c = SightingLineCursor(bytes: line)
        c.skipSpace()
        guard c.take(UInt8(ascii: "{")) else { return nil }
        var seen: UInt16 = 0
        var t: Double?, rssi: Double?, txPower: Double?
        var receiver: ReceiverID?, addressRange: Range<Int>?, addressTypeRange: Range<Int>?, name: String?
        // Payloads decoded as they are read, straight into the sighting's data (dropped with
        // it when the line turns out to need the generic path); the rest is set at the end.
        var sighting = Sighting(time: Timestamp(nanoseconds: 0), receiver: .unlisted, address: 0, rssi: 0)
        c.skipSpace()
        if !c.take(UInt8(ascii: "}")) {
            while true {
                c.skipSpace()
                guard let key = c.plainString() else { return nil }
                c.skipSpace()
                guard c.take(UInt8(ascii: ":")) else { return nil }
                c.skipSpace()
                let known = Key(key, in: line)
                if let known {
                    // A key given twice: the generic path takes the last; let it decide.
                    guard seen & known.bit == 0 else { return nil }
                    seen |= known.bit
                }
                switch known {
                case .t?: guard let n = c.number() else { return nil }; t = n
                case .rssi?: guard let n = c.number() else { return nil }; rssi = n
                case .txPower?:
                    if !c.null() {
                        guard let n = c.number() else { return nil }
                        txPower = n
                    }
                case .receiver?:
                    guard let range = c.plainString(), let id = receiverID(line, range) else { return nil }
                    receiver = id
                case .address?:
                    guard let range = c.plainString() else { return nil }
                    addressRange = range
                case .addressType?:
                    if !c.null() {
                        guard let range = c.plainString() else { return nil }
                        addressTypeRange = range
                    }
                case .name?:
                    if !c.null() {
                        guard let range = c.plainString() else { return nil }
                        name = c.text(range)
                    }
                case .manufacturerData?:
                    if !c.null() {
                        guard
                            c.payloads(
                                companyKeys: true,
                                { _, company, hex in
                                    var valid = true
                                    sighting.data.appendManufacturer(company: UInt16(company), count: hex.count / 2) {
                                        valid = SightingLineCursor.decodeHex(line, hex, into: $0)
                                    }
                                    return valid
                                })
                        else { return nil }
                    }
                case .serviceData?:
                    if !c.null() {
                        guard
                            c.payloads(
                                companyKeys: false,
                                { key, _, hex in
                                    var valid = true
                                    sighting.data.appendService(
                                        uuid: UnsafeRawBufferPointer(rebasing: line[key]), count: hex.count / 2
                                    ) { valid = SightingLineCursor.decodeHex(line, hex, into: $0) }
                                    return valid
                                })
                        else { return nil }
                    }
                case nil:
                    // `request` makes the line a trace request, not a sighting.
                    guard !c.equals(key, "request"), c.skipScalar() else { return nil }
                }
                c.skipSpace()
                if c.take(UInt8(ascii: ",")) { continue }
                guard c.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        c.skipSpace()
        guard c.atEnd else { return nil }
        // The generic path measures the line once decoded, when an invalid byte takes three.
        if c.sawNonASCII, line.count > SightingRecord.maxLineBytes / 3 { return nil }
        // The checks `SightingRecord.parse` makes; a line failing one goes there for its reason.
        guard let t, let time = Timestamp(unixSeconds: t), let receiver, let addressRange, !addressRange.isEmpty,
            let rssi, rssi == rssi.rounded(), rssi >= -127, rssi <= 20
        else { return nil }
        if let txPower, !(txPower == txPower.rounded() && txPower >= -127 && txPower <= 127) { return nil }
        sighting.time = time
        sighting.receiverID = receiver
        sighting.rssi = Int(rssi)
        sighting.txPower = txPower.map { Int($0) }
        sighting.name = name
        let addressBytes = UnsafeRawBufferPointer(rebasing: line[addressRange])
        if let value = Sighting.addressValue(addressBytes) {
            sighting.addressValue = value
        } else {
            sighting.address = c.text(addressRange)
        }
        if let addressTypeRange {
            if c.equals(addressTypeRange, "random") {
                sighting.addressKind = .random
            } else if c.equals(addressTypeRange, "public") {
                sighting.addressKind = .public
            } else {
                sighting.addressType = c.text(addressTypeRange)
            }
        }
        return sighting
    }

    /// The receiver's id when its name is a valid id (`Identifier`), reused from an earlier
    /// line when its bytes are the same: a trace or a batch has a few receivers, over and over.
    private mutating func receiverID(_ line: UnsafeRawBufferPointer, _ range: Range<Int>) -> ReceiverID? {
        let bytes = UnsafeRawBufferPointer(rebasing: line[range])
        for known in receivers where known.bytes.count == bytes.count {
            let same = known.bytes.withUnsafeBytes { kept in
                var k = 0
                while k < kept.count, kept[k] == bytes[k] { k += 1 }
                return k == kept.count
            }
            if same { return known.id }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard Identifier.problem(text) == nil, let id = ReceiverID(text) else { return nil }
        if receivers.count == Self.receiversKept { receivers.removeFirst() }
        receivers.append((Array(bytes), id))
        return id
    }

    /// The record's keys, each a bit of `seen`.
    private enum Key: UInt16 {
        case t = 1, receiver = 2, address = 4, addressType = 8, rssi = 16, txPower = 32, name = 64
        case manufacturerData = 128, serviceData = 256

        var bit: UInt16 { rawValue }

        /// By length and first byte, then the rest compared at once.
        init?(_ range: Range<Int>, in line: UnsafeRawBufferPointer) {
            let key = UnsafeRawBufferPointer(rebasing: line[range])
            func named(_ word: StaticString) -> Bool {
                sameBytes(key.baseAddress!, word)
            }
            guard let first = key.first else { return nil }
            switch (key.count, first) {
            case (1, UInt8(ascii: "t")): self = .t
            case (4, UInt8(ascii: "r")) where named("rssi"): self = .rssi
            case (4, UInt8(ascii: "n")) where named("name"): self = .name
            case (7, UInt8(ascii: "a")) where named("address"): self = .address
            case (8, UInt8(ascii: "r")) where named("receiver"): self = .receiver
            case (8, UInt8(ascii: "t")) where named("tx_power"): self = .txPower
            case (12, UInt8(ascii: "a")) where named("address_type"): self = .addressType
            case (12, UInt8(ascii: "s")) where named("service_data"): self = .serviceData
            case (17, UInt8(ascii: "m")) where named("manufacturer_data"): self = .manufacturerData
            default: return nil
            }
        }
    }
}
