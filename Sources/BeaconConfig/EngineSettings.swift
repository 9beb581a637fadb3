import BeaconCore

/// `engine:` (an extension section, issue 64): how many threads the engine's per-asset work
/// runs on. Absent: as many as the cores the process may use (`sched_getaffinity`, so a
/// systemd `CPUAffinity=` or a container's CPU set is honoured). 1 runs it all on the
/// engine's own thread, as before. The events are the same whatever the number.
public struct EngineSettings: Sendable, Equatable {
    /// nil: the cores available when the daemon starts.
    public var threads: Int?
    public init() {}

    /// The threads to run: `threads`, or `available` cores.
    public func threads(available: Int) -> Int { threads ?? max(1, available) }
}

extension SectionReader {
    /// `threads`: 1 … 64.
    func readEngine(_ node: Node, _ e: inout EngineSettings) {
        read(
            node, "engine",
            [.init("threads") { r, n, p, e in if let v = r.reader.int(n, p, 1...64) { e.threads = v } }], into: &e)
    }
}
