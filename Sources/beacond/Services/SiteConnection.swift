import BeaconCore
import BeaconRuntime
import Logging
import MQTT

/// The site's broker connection, as a service of its own that starts before the webhooks'
/// and the site's events' workers and stops after them (SPEC §6.3): at a stop, the
/// `mqtt:events` worker's last attempt still has the connection (the events it sends are
/// acknowledged and leave the outbox), then this gateway says `offline` and disconnects
/// cleanly. When the site link owned the connection it disconnected before the workers
/// stopped, and an event the broker had not yet acknowledged stayed behind (issue 39).
final class SiteConnection: DaemonService, Sendable {
    let name = "site-connection"
    private let client: MQTTClient
    private let offline: MQTTClient.Message
    private let hooks: MQTTClient.Hooks

    init(client: MQTTClient, topics: SiteTopics, gateway: String, hooks: MQTTClient.Hooks) {
        self.client = client
        self.hooks = hooks
        offline = .init(topic: topics.status(gateway), text: "offline", qos: 1, retain: true)
    }

    func start() throws { client.start(hooks: hooks) }

    func stop() { client.stop(last: offline) }
}
