import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// Clients and regions: CoreLocation's startMonitoring / stopMonitoring / requestState.
extension APIRouter {
    func clients() -> HTTPReply {
        let limit = context.config.monitoring.regionLimit
        let list = onEngine { engine, _ in
            (engine.clientIDs.map { ($0, engine.regionStatuses(client: $0).count) }, [])
        }
        guard let list else { return engineUnavailable() }
        var answer = ClientList()
        answer.clients = list.map { id, count in
            var client = ClientList.Client()
            (client.id, client.regions, client.regionLimit) = (id, count, limit)
            return client
        }
        return Reply.json(answer.json)
    }

    func regions(client: String) -> HTTPReply {
        let answer = onEngine { engine, _ in
            (engine.clientIDs.contains(client) ? engine.regionStatuses(client: client) : nil, [])
        }
        guard let answer else { return engineUnavailable() }
        guard let statuses = answer else { return Reply.error(404, "unknown_client", "no client \"\(client)\"") }
        var list = RegionList()
        list.client = client
        list.regions = statuses.map(Self.region)
        return Reply.json(list.json)
    }

    static func region(_ status: RegionStatus) -> RegionList.Region {
        .init(spec: status.spec, state: status.state.rawValue, enteredAt: status.enteredAt.map(RFC3339.format))
    }

    /// Starts monitoring (or replaces) a region; 409 when the client is at its limit.
    func monitor(client: String, region id: String, body: [UInt8]) -> HTTPReply {
        // The config's grammar: an id the file would refuse must not get in through the API
        // and be kept across restarts, in events' subjects.
        for (what, value) in [("client", client), ("region", id)] {
            if let problem = Identifier.problem(value) {
                return Reply.error(
                    422, "invalid_id", "\(what) id \(JSONValue.string(String(value.prefix(80))).serialized): \(problem)"
                )
            }
        }
        let json: JSONValue
        switch Self.parseBody(body) {
        case let .success(value): json = value
        case let .failure(error): return error.reply
        }
        if let bodyID = json["id"]?.stringValue, bodyID != id {
            return Reply.error(422, "invalid_region", "id: \"\(bodyID)\" does not match the path's \"\(id)\"")
        }
        let spec: RegionSpec
        do {
            spec = try RegionSpec(json: json, id: id)
        } catch {
            return Reply.error(422, "invalid_region", error.description)
        }
        let answer = onEngine { engine, now -> (RegionChange, [Event]) in
            let change = engine.monitor(client: client, region: spec, at: now)
            return (change, change.events)
        }
        guard let change = answer else { return engineUnavailable() }
        if let failure = change.failure {
            let limit = context.config.monitoring.regionLimit
            return Reply.error(
                failure == .regionLimitExceeded ? 409 : 422, failure.rawValue,
                failure == .regionLimitExceeded
                    ? "client \"\(client)\" already monitors \(limit) regions (region_limit); stop one first"
                    : "region \"\(id)\" cannot be monitored: \(failure.rawValue)")
        }
        if let persisted = saveOverride(.monitor(client: client, region: spec)) { return persisted }
        return Reply.json(
            Self.region(RegionStatus(client: client, spec: spec, state: .unknown, enteredAt: nil)).json, status: 200)
    }

    func unmonitor(client: String, region id: String) -> HTTPReply {
        let removed = onEngine { engine, _ in (engine.stopMonitoring(client: client, region: id), []) }
        guard let removed else { return engineUnavailable() }
        guard removed else {
            return Reply.error(404, "region_not_found", "client \"\(client)\" has no region \"\(id)\"")
        }
        // A region of the file stays removed across restarts; one the API added is just forgotten.
        let configured = context.config.clients.contains { $0.id == client && $0.regions.contains { $0.id == id } }
        if let persisted = saveOverride(.remove(client: client, region: id), forgetting: !configured) {
            return persisted
        }
        return Reply.noContent()
    }

    func requestState(client: String, region id: String) -> HTTPReply {
        let answer = onEngine { engine, now -> (RegionChange, [Event]) in
            let change = engine.requestState(client: client, region: id, at: now)
            return (change, change.events)
        }
        guard let change = answer else { return engineUnavailable() }
        guard change.failure == nil,
            case let .regionState(_, _, state)? = change.events.last(where: {
                if case .regionState = $0.payload { return true } else { return false }
            })?.payload
        else { return Reply.error(404, "region_not_found", "client \"\(client)\" has no region \"\(id)\"") }
        return Reply.json(
            .object([("client", .string(client)), ("region", .string(id)), ("state", .string(state.rawValue))]),
            status: 202)
    }

    /// Keeps an API change across restarts; a store failure is reported, the change stays live.
    private func saveOverride(_ change: StateStore.RegionOverride, forgetting: Bool = false) -> HTTPReply? {
        guard let store = context.store else { return nil }
        do {
            if forgetting, case let .remove(client, region) = change {
                try store.forgetOverride(client: client, region: region)
            } else {
                try store.saveOverride(change)
            }
            return nil
        } catch {
            return Reply.error(
                500, "not_persisted",
                "the change is live but could not be saved and will not survive a restart: \(error)")
        }
    }
}
