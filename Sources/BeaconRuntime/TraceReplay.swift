import BeaconConfig
import BeaconCore

/// `beacond replay`: the engine on a recorded trace, on the trace's own clock (SPEC §5).
///
/// The clock starts at the first record and ends at the last: every timer due in between
/// fires at its own time, in order with the sightings; timers due after the last record do
/// not fire. A malformed line, or one whose `t` goes backwards, is reported with its line
/// number and skipped; it never stops the replay.
///
/// One corrupt `t` far ahead must not cost the rest of the trace (every later line would go
/// "backwards"), so a record 10 minutes or more after the one before it — and the first
/// record, which has none — waits for the next record to confirm it. If the next record
/// returns to more than 10 minutes before it, it is the wrong one and is skipped; otherwise
/// it is replayed, then the next. Call `finish` at the end of the trace: for a record still
/// waiting, and for the visits still undecided.
public struct TraceReplay {
    public let config: Config
    private var engine: BeaconEngine?
    private var ids: EventIDGenerator
    private var lastTime: Timestamp?
    /// A record that jumped ahead, waiting for the next record to confirm it.
    private var held: (record: TraceRecord, number: Int)?
    private var reader = SightingLineReader()
    /// A jump at least this long waits for confirmation (the engine's quiet gap: shorter gaps
    /// are ordinary pauses in a trace).
    static let jumpToConfirm = TimeSpan.minutes(10)
    public private(set) var summary = ReplaySummary()
    /// Threads the engine's per-asset work runs on (`engine.threads`); the events are the same.
    public var shardRunner: (any ShardRunner)?

    public init(config: Config, idNonce: UInt32) {
        self.config = config
        self.ids = EventIDGenerator(nonce: idNonce)
    }

    /// Feeds one line (1-based `number`); emitted events go to `emit` as CloudEvents JSON
    /// text, problems to `report`.
    public mutating func feed(line: String, number: Int, emit: (String) -> Void, report: (String) -> Void) {
        var text = line
        text.withUTF8 { feed(bytes: UnsafeRawBufferPointer($0), number: number, emit: emit, report: report) }
    }

    /// The same for a line's bytes (`BlockLineReader`): sightings are read from them directly
    /// (`SightingLineReader`), with the generic parser's results.
    public mutating func feed(
        bytes line: UnsafeRawBufferPointer, number: Int, emit: (String) -> Void, report: (String) -> Void
    ) {
        var start = 0
        var end = line.count
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
        while start < end, isSpace(line[start]) { start += 1 }
        while end > start, isSpace(line[end - 1]) { end -= 1 }
        guard start < end else { return }
        summary.lines += 1
        let record: TraceRecord
        // Read once here: `TraceRecord.time` copies the record to read it.
        let time: Timestamp
        let bytes = UnsafeRawBufferPointer(rebasing: line[start..<end])
        if let sighting = reader.sighting(in: bytes) {
            // The common case, a sighting in order with nothing held: played as it is, with no
            // record around it (the checks below would all pass).
            if held == nil, let last = lastTime, sighting.time >= last, sighting.time - last < Self.jumpToConfirm {
                lastTime = sighting.time
                publish(engine!.ingest(sighting), emit: emit)
                summary.sightings += 1
                return
            }
            time = sighting.time
            record = .sighting(sighting)
        } else {
            do throws(SightingRecordError) {
                record = try TraceRecord.parse(line: String(decoding: bytes, as: UTF8.self))
            } catch {
                summary.skipped += 1
                report("line \(number): \(error.reason); skipped")
                return
            }
            time = record.time
        }
        if let (jump, jumpNumber) = held {
            if time >= jump.time - Self.jumpToConfirm {
                held = nil
                play(jump, at: jump.time, number: jumpNumber, emit: emit, report: report)
            } else if lastTime.map({ time >= $0 }) ?? true {
                held = nil
                summary.skipped += 1
                report(
                    "line \(jumpNumber): \"t\" is \(jump.time) but line \(number) returns to \(time), "
                        + "more than \(Self.jumpToConfirm) earlier; skipped")
            }
        }
        if let last = lastTime, time < last {
            summary.skipped += 1
            report("line \(number): \"t\" goes backwards (\(time) after \(last)); skipped")
            return
        }
        // (Nothing is held here: a held record was played or dropped above, or this one went
        // backwards and returned.)
        if lastTime.map({ time - $0 >= Self.jumpToConfirm }) ?? true {
            held = (record, number)
            return
        }
        play(record, at: time, number: number, emit: emit, report: report)
    }

    /// The end of the trace: a record still waiting for confirmation is replayed (nothing
    /// contradicts it), then the visits still pending are decided with the evidence there is
    /// and told, as the trace's last word (issue 62, item 4). Timers due later do not fire.
    public mutating func finish(emit: (String) -> Void, report: (String) -> Void) {
        if let (record, number) = held {
            held = nil
            play(record, at: record.time, number: number, emit: emit, report: report)
        }
        guard engine != nil else { return }
        publish(engine!.finishVisits(), emit: emit)
    }

    private mutating func play(
        _ record: TraceRecord, at time: Timestamp, number: Int, emit: (String) -> Void, report: (String) -> Void
    ) {
        lastTime = time
        if engine == nil {
            engine = BeaconEngine(configuration: config.engineConfiguration, start: time)
            engine!.shardRunner = shardRunner
        }
        switch record {
        case let .sighting(sighting):
            publish(engine!.ingest(sighting), emit: emit)
            summary.sightings += 1
        case let .request(request, _):
            let change: RegionChange
            switch request {
            case let .monitor(client, region):
                change = engine!.monitor(client: client, region: region, at: time)
            case let .unmonitor(client, region):
                let events = engine!.advance(to: time)
                if !engine!.stopMonitoring(client: client, region: region) {
                    report("line \(number): client \"\(client)\" has no region \"\(region)\"")
                }
                change = RegionChange(events: events, failure: nil)
            case let .requestState(client, region):
                change = engine!.requestState(client: client, region: region, at: time)
            }
            publish(change.events, emit: emit)
            if let failure = change.failure { report("line \(number): request refused: \(failure.rawValue)") }
            summary.requests += 1
        }
    }

    private mutating func publish(_ events: [Event], emit: (String) -> Void) {
        for event in events {
            let id = ids.next(for: event.time)
            emit(CloudEvent.text(event, id: id, gatewayID: config.gateway.id))
            summary.events += 1
        }
    }

}

public struct ReplaySummary: Sendable, Equatable {
    public var lines = 0
    public var sightings = 0
    public var requests = 0
    public var skipped = 0
    public var events = 0
}
