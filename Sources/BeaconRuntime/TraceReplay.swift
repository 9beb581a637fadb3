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
/// it is replayed, then the next. Call `finish` at the end of the trace for a record still
/// waiting.
public struct TraceReplay {
    public let config: Config
    private var engine: BeaconEngine?
    private var ids: EventIDGenerator
    private var lastTime: Timestamp?
    /// A record that jumped ahead, waiting for the next record to confirm it.
    private var held: (record: TraceRecord, number: Int)?
    /// A jump at least this long waits for confirmation (the engine's quiet gap: shorter gaps
    /// are ordinary pauses in a trace).
    static let jumpToConfirm = TimeSpan.minutes(10)
    public private(set) var summary = ReplaySummary()

    public init(config: Config, idNonce: UInt32) {
        self.config = config
        self.ids = EventIDGenerator(nonce: idNonce)
    }

    /// Feeds one line (1-based `number`); emitted events go to `emit` as CloudEvents JSON
    /// text, problems to `report`.
    public mutating func feed(line: String, number: Int, emit: (String) -> Void, report: (String) -> Void) {
        let trimmed = line.trimmingWhitespace
        guard !trimmed.isEmpty else { return }
        summary.lines += 1
        let record: TraceRecord
        do throws(SightingRecordError) {
            record = try TraceRecord.parse(line: String(trimmed))
        } catch {
            summary.skipped += 1
            report("line \(number): \(error.reason); skipped")
            return
        }
        if let (jump, jumpNumber) = held {
            if record.time >= jump.time - Self.jumpToConfirm {
                held = nil
                play(jump, number: jumpNumber, emit: emit, report: report)
            } else if lastTime.map({ record.time >= $0 }) ?? true {
                held = nil
                summary.skipped += 1
                report(
                    "line \(jumpNumber): \"t\" is \(jump.time) but line \(number) returns to \(record.time), "
                        + "more than \(Self.jumpToConfirm) earlier; skipped")
            }
        }
        if let last = lastTime, record.time < last {
            summary.skipped += 1
            report("line \(number): \"t\" goes backwards (\(record.time) after \(last)); skipped")
            return
        }
        // (Nothing is held here: a held record was played or dropped above, or this one went
        // backwards and returned.)
        if lastTime.map({ record.time - $0 >= Self.jumpToConfirm }) ?? true {
            held = (record, number)
            return
        }
        play(record, number: number, emit: emit, report: report)
    }

    /// Replays a record still waiting for confirmation: at the end of the trace nothing
    /// contradicts it.
    public mutating func finish(emit: (String) -> Void, report: (String) -> Void) {
        guard let (record, number) = held else { return }
        held = nil
        play(record, number: number, emit: emit, report: report)
    }

    private mutating func play(
        _ record: TraceRecord, number: Int, emit: (String) -> Void, report: (String) -> Void
    ) {
        lastTime = record.time
        if engine == nil { engine = BeaconEngine(configuration: config.engineConfiguration, start: record.time) }
        switch record {
        case let .sighting(sighting):
            publish(engine!.ingest(sighting), emit: emit)
            summary.sightings += 1
        case let .request(request, time):
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
            emit(CloudEvent.json(event, id: id, gatewayID: config.gateway.id).serialized)
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
