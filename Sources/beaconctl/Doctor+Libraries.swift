import BeaconConfig
import CCurl
import Crypto
import MQTT

extension Doctor {
    /// A library beacond loads at first use, not at start: a gateway without it starts, and
    /// fails only when the part that needs it first runs (a webhook's first delivery, a
    /// phone's first private address, the site's broker connection).
    struct LazyLibrary: Sendable {
        var name: String
        var file: String
        /// What needs it, in the operator's words ("webhooks need it").
        var need: String
        /// Debian's package that brings it.
        var package: String
        /// Why the daemon's own loader cannot use it (the same loader, the same list of
        /// functions), or nil when it can.
        var failure: @Sendable () -> String?
        var neededBy: @Sendable (Config) -> Bool
    }

    static let lazyLibraries: [LazyLibrary] = [
        LazyLibrary(
            name: "libcurl", file: "libcurl.so.4", need: "webhooks need it", package: "libcurl4",
            failure: { beacond_http_unavailable_reason().map { String(cString: $0) } },
            neededBy: { !$0.webhooks.isEmpty }),
        LazyLibrary(
            name: "libcrypto", file: "libcrypto.so.3", need: "webhook signatures and phones' keys need it",
            package: "libssl3",
            failure: { AES128.unavailableReason },
            neededBy: { config in
                config.webhooks.contains { $0.secretFile != nil }
                    || config.assets.contains { if case .irk = $0.beacon { true } else { false } }
            }),
        LazyLibrary(
            name: "libmosquitto", file: "libmosquitto.so.1", need: "a site's broker needs it", package: "libmosquitto1",
            failure: { MQTTClient.unavailableReason }, neededBy: { $0.site != nil }),
    ]

    /// Every library loaded at first use, each tried with the daemon's own loader: a fail when
    /// the configuration needs one that cannot be loaded, a warning when it does not need it yet.
    func libraryChecks(_ config: Config) -> [Check] {
        Self.lazyLibraries.map { library in
            let needed = library.neededBy(config)
            guard let failure = library.failure() else {
                return Check(
                    name: library.name, verdict: .ok,
                    detail: "\(library.file) loads (\(library.need)\(needed ? "" : "; this configuration does not"))")
            }
            return Check(
                name: library.name, verdict: needed ? .fail : .warn,
                detail: "\(failure) (\(library.need)\(needed ? "" : "; this configuration does not yet"))",
                fix: "apt install \(library.package), then systemctl restart beacond")
        }
    }
}
