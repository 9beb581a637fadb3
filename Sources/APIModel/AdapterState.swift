import BeaconCore

extension AdapterState {
    /// As `/v1/status` lists it.
    public var json: JSONValue {
        .object([
            ("adapter", .string(adapter)), ("present", .bool(present)), ("powered", .bool(powered)),
            ("discovering", .bool(discovering)),
        ])
    }

    public init(json: JSONValue) {
        self.init(
            adapter: json.string("adapter") ?? "?", present: json.bool("present"), powered: json.bool("powered"),
            discovering: json.bool("discovering"))
    }
}
