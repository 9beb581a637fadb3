import BeaconCore

/// `GET /v1/clients`: the apps monitoring regions, and how many of their `region_limit`
/// each uses. Read back by `beaconctl regions`.
public struct ClientList: Sendable, Equatable {
    public struct Client: Sendable, Equatable {
        public var id = ""
        public var regions = 0
        public var regionLimit = 0
        public init() {}
    }

    public var clients: [Client] = []
    public init() {}

    public var json: JSONValue {
        .object([
            (
                "clients",
                .array(
                    clients.map {
                        .object([
                            ("id", .string($0.id)), ("regions", .int($0.regions)),
                            ("region_limit", .int($0.regionLimit)),
                        ])
                    })
            )
        ])
    }

    public init(json: JSONValue) {
        self.init()
        clients = json.array("clients").map { c in
            var client = Client()
            client.id = c.string("id") ?? ""
            client.regions = c.int("regions")
            client.regionLimit = c.int("region_limit")
            return client
        }
    }
}

/// `GET /v1/clients/{id}/regions`: a client's regions as it asked for them (the config's
/// keys, `RegionSpec`) with each one's state and when it was entered.
public struct RegionList: Sendable, Equatable {
    public struct Region: Sendable, Equatable {
        public var spec: RegionSpec
        /// `inside`, `outside`, `unknown`.
        public var state: String
        public var enteredAt: String?
        public init(spec: RegionSpec, state: String, enteredAt: String?) {
            self.spec = spec
            self.state = state
            self.enteredAt = enteredAt
        }
    }

    public var client = ""
    public var regions: [Region] = []
    public init() {}

    public var json: JSONValue {
        .object([("client", .string(client)), ("regions", .array(regions.map(\.json)))])
    }

    public init(json: JSONValue) {
        self.init()
        client = json.string("client") ?? ""
        regions = json.array("regions").compactMap(Region.init(json:))
    }
}

extension RegionList.Region {
    public var json: JSONValue {
        guard case var .object(members) = spec.json else { return .null }
        members.append(("state", .string(state)))
        members.append(("entered_at", .optional(enteredAt)))
        return .object(members)
    }

    /// Nil for a region whose spec does not parse (an answer from another daemon's version).
    public init?(json: JSONValue) {
        guard case let .object(members) = json else { return nil }
        let specOnly = JSONValue.object(members.filter { RegionSpec.jsonKeys.contains($0.0) })
        guard let spec = try? RegionSpec(json: specOnly) else { return nil }
        self.init(spec: spec, state: json.string("state") ?? "", enteredAt: json.string("entered_at"))
    }
}
