import BeaconConfig
import BeaconCore

/// `beacond replay`: the engine on a recorded trace, on the trace's own clock (SPEC §5).
///
/// The clock starts at the first record and ends at the last: every timer due in between
/// fires at its own time, in order with the sightings; timers due after the last record do
/// not fire. A malformed line, or one whose `t` goes backwards, is reported with its line
/// number and skipped; it never stops the replay.
public struct TraceReplay {
    public let config: Config
    private var engine: BeaconEngine?
    private var ids: EventIDGenerator
    private var lastTime: Timestamp?
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
        if let last = lastTime, record.time < last {
            summary.skipped += 1
            report("line \(number): \"t\" goes backwards (\(record.time) after \(last)); skipped")
            return
        }
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
