import ArgumentParser
import BeaconConfig
import BeaconCore
import BeaconRuntime
import Logging
import MQTT
import Publishing
import Storage

extension LiveDaemon {
    /// The connection to the site's broker when the configuration has a `site:`, its password
    /// file read now. A file that cannot be read stops the start (exit 78): a gateway that
    /// cannot log in to its broker is not part of its store, and must not look as if it were.
    func makeSiteClient() throws -> MQTTClient? {
        guard let site = config.site else { return nil }
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
        do {
            return try SiteLink.makeClient(site: site, gateway: config.gateway.id, password: password, logger: logger)
        } catch {
            // A broken installation, not a passing fault: restarting cannot mend it, so the
            // unit does not restart on this status (RestartPreventExitStatus).
            logger.critical(
                "site.mqtt_unavailable",
                metadata: [
                    "error": "\(error.reason)",
                    "next": "apt install libmosquitto1 (the site's broker needs it), then systemctl restart beacond",
                ])
            throw ExitCode(ExitStatus.missingLibrary)
        }
    }

    /// The locator's worker for `events/<type>`: an outbox like a webhook's, delivered to the
    /// broker (`MQTTBatchTransport`), standing by on the other gateways as webhooks do.
    func makeSiteEventsWorker(_ transport: MQTTBatchTransport, store: StateStore) -> WebhookWorker? {
        guard let site = config.site else { return nil }
        let settings = WebhookWorker.Settings(
            id: MQTTBatchTransport.outboxID, url: site.mqtt.url, events: EventTypeGlob(site.mqtt.events), secret: nil,
            schedule: DeliverySchedule(maxEvents: 100, maxDelay: .seconds(0), maxAge: site.mqtt.maxAge),
            timeout: .seconds(10))
        return makeWebhookWorker(settings, store: store, transport: transport)
    }

    /// Outboxes the configuration's webhooks do not name but the daemon delivers.
    var siteOutboxes: Set<String> { config.site == nil ? [] : [MQTTBatchTransport.outboxID] }

    /// The site link, on the client `makeSiteClient` made. Each connect wakes the events'
    /// worker, which may be waiting on its backoff while the broker was away.
    func makeSiteLink(engine: LiveEngine, client: MQTTClient?, publisher: EventPublisher, store: StateStore)
        -> SiteLink?
    {
        guard let site = config.site, let gate = deliveryGate, let client else { return nil }
        return SiteLink(
            site: site, config: config, client: client, engine: engine, gate: gate, store: store,
            version: BeaconVersion.string,
            logger: logger, clock: WallClock.now,
            onConnect: {
                publisher.workers.first { $0.settings.id == MQTTBatchTransport.outboxID }?.retryNow()
            })
    }
}
