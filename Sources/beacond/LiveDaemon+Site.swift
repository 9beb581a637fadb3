import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging

extension LiveDaemon {
    /// The site link when the configuration has a `site:`, its password file read now. A file
    /// that cannot be read stops the start (exit 78): a gateway that cannot log in to its
    /// broker is not part of its store, and must not look as if it were.
    func makeSiteLink(engine: LiveEngine) throws -> SiteLink? {
        guard let site = config.site, let gate = deliveryGate else { return nil }
        var password: String?
        if let path = site.mqtt.passwordFile {
            do {
                password = try readSecretFile(path)
            } catch {
                logger.error(
                    "site.password_unreadable",
                    metadata: [
                        "file": "\(path)", "error": "\(error.reason)",
                        "next": "make site.mqtt.password_file readable by the beacond user",
                    ])
                throw ExitCode(ExitStatus.config)
            }
        }
        return SiteLink(
            site: site, config: config, password: password, engine: engine, gate: gate, logger: logger,
            clock: WallClock.now)
    }
}
