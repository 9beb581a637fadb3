import APIModel
import BeaconCore
import POSIX

/// What the running daemon could connect to, from its own process (`GET /v1/reachability`).
///
/// Why doctor asks the daemon: under systemd beacond runs in its unit's sandbox, so a
/// connection beaconctl makes from an operator's shell can succeed where the daemon's fails
/// (`IPAddressDeny=`, a network namespace). The daemon's answer is the one that matters; the
/// shell's own is used only when the daemon does not answer, and to say why they differ.
struct DaemonReachability {
    /// Why each destination took no connection (nil when it did), by `kind/id`.
    var failures: [String: String?] = [:]
    /// The daemon's systemd unit, when it runs as one.
    var unit: String?

    init?(_ json: JSONValue?) {
        guard let json else { return nil }
        let report = ReachabilityReport(json: json)
        for d in report.destinations { failures["\(d.kind)/\(d.id)"] = .some(d.error) }
        unit = report.systemdUnit
    }

    /// The daemon's verdict on a destination: `.some(nil)` reachable, `.some(why)` not, nil
    /// when it did not check it.
    func failure(_ kind: String, _ id: String) -> String?? { failures["\(kind)/\(id)"] }

    /// Where the verdict comes from, for a check's detail.
    var source: String { unit.map { "from beacond's process in \($0)" } ?? "from beacond's process" }

    /// Why the daemon cannot connect, and whether this shell can: when it can, the
    /// daemon's sandbox or network namespace is what stops it.
    func explain(_ failure: String, host: String, port: String) -> (detail: String, sandboxed: Bool) {
        guard Reachability.failure(host: host, port: port) == nil else { return ("\(failure) (\(source))", false) }
        return ("\(failure) (\(source); beaconctl's own connection succeeds, so beacond's sandbox stops it)", true)
    }
}
