/// What one gateway of a site publishes on `sightings/<gateway>` (SPEC §6.2): a header line,
/// then one SPEC §1.2 record per line, under the site's receiver ids.
///
/// ```
/// {"batch":1,"gateway":"gw1","seq":42,"sent":1763805600.25}
/// {"t":1763805600.0312,"receiver":"rx-front-left","address":"C3:11:…","rssi":-67,"manufacturer_data":{"76":"0215…"}}
/// ```
///
/// Why this form: the records are the lines every other input of beacond already takes, read
/// by the same `SightingLineReader` at its speed, and legible in `mosquitto_sub`; without the
/// header the payload is plain JSON Lines, which is what an ESP32 or a script sends. The
/// header adds what a site needs of a gateway: a sequence number (a gap is a lost batch) and
/// the sender's clock when it sent (the offset between the gateways' clocks). About 150 bytes
/// per sighting: a busy gateway's 300 a second is 45 kB/s on the store's network.
public enum SightingBatch {
    public struct Header: Sendable, Equatable {
        public var gateway: String
        /// 1, 2, 3… from the sender's start: a gap is a lost batch, a smaller one a restart.
        public var seq: Int64
        /// The sender's clock when it published.
        public var sent: Timestamp

        public init(gateway: String, seq: Int64, sent: Timestamp) {
            self.gateway = gateway
            self.seq = seq
            self.sent = sent
        }
    }

    public static let version = 1
    /// The largest payload taken: a gateway's 250 ms hold far less; more is a flood.
    public static let maxBytes = 1 << 20

    public static func encode(_ header: Header, _ sightings: [Sighting]) -> [UInt8] {
        var w = JSONTextWriter(capacity: 96 + sightings.count * 160)
        w.openObject()
        w.member("batch", Double(version))
        w.member("gateway", header.gateway)
        w.member("seq", Double(header.seq))
        w.member("sent", header.sent.unixSeconds)
        w.closeObject()
        var last: (id: ReceiverID, name: String)?
        for s in sightings {
            w.newline()
            if last?.id != s.receiverID || s.receiverID == .unlisted { last = (s.receiverID, s.receiver) }
            SightingRecord.write(s, receiver: last!.name, into: &w)
        }
        w.newline()
        return w.bytes
    }

    /// The header on `line`: nil when the line is not one (a plain record), or the reason a
    /// line that says it is a header is not a good one.
    public static func header(_ line: UnsafeRawBufferPointer) -> Result<Header, SightingRecordError>? {
        let prefix = "{\"batch\":".utf8
        guard line.count >= prefix.count, zip(line, prefix).allSatisfy({ $0 == $1 }) else { return nil }
        guard let value = try? JSONParser.parse(String(decoding: line, as: UTF8.self)) else {
            return .failure(SightingRecordError("the batch header is not JSON"))
        }
        guard value["batch"]?.numberValue == Double(version) else {
            return .failure(SightingRecordError("batch version \(value["batch"]?.serialized ?? "?") is not \(version)"))
        }
        guard let gateway = value["gateway"]?.stringValue, Identifier.problem(gateway) == nil else {
            return .failure(SightingRecordError("the batch header's \"gateway\" is not an id"))
        }
        guard let seq = value["seq"]?.numberValue, seq >= 0, seq < 9e15, seq == seq.rounded() else {
            return .failure(SightingRecordError("the batch header's \"seq\" is not a whole number"))
        }
        guard let sent = value["sent"]?.numberValue.flatMap(Timestamp.init(unixSeconds:)) else {
            return .failure(SightingRecordError("the batch header's \"sent\" is not a time in Unix seconds"))
        }
        return .success(Header(gateway: gateway, seq: Int64(seq), sent: sent))
    }
}
