/// What the broker holds of the site's state, as far as the locator knows, and what to send
/// to make it the truth (`RetainedState`): a topic whose payload changed, a topic not sent
/// since the locator took over or reconnected, and an empty retained message (which deletes
/// it) for each topic of an asset, region or discovery config that is no longer configured —
/// whether this run sent it or an earlier one did (`found`).
public struct RetainedTopics: Sendable {
    private struct Sent: Sendable {
        var significant: String
        var payload: String
        var at: Timestamp
    }

    private var sent: [String: Sent] = [:]
    private var found: Set<String> = []
    /// A payload that changed only in what is not significant (`last_seen`) is sent again
    /// after this long, so a subscriber still sees the asset is alive.
    public static let refresh = TimeSpan.seconds(60)
    /// At most this many retained topics found on the broker are kept for clearing: topics
    /// come from the network.
    public static let maxFound = 100_000

    public init() {}

    /// Sends everything again at the next `plan` (a reconnect, a new locator, Home
    /// Assistant's `online`): the broker may have lost what it held, or another gateway's
    /// payloads replaced ours.
    public mutating func resend(where matches: (String) -> Bool = { _ in true }) {
        sent = sent.filter { !matches($0.key) }
    }

    /// Another client published `payload` on `topic`, one of this site's state topics: when it
    /// is not what this locator sent there, the topic is sent again at the next `plan`, so that
    /// a forged asset state or discovery config does not stay (issue 38). True when so.
    @discardableResult
    public mutating func contradicted(_ topic: String, _ payload: String) -> Bool {
        guard let mine = sent[topic], mine.payload != payload else { return false }
        sent[topic] = nil
        return true
    }

    /// A retained topic of this site's state seen on the broker.
    public mutating func found(_ topic: String) {
        guard sent[topic] == nil, found.count < Self.maxFound else { return }
        found.insert(topic)
    }

    /// What to publish now so that the broker holds `current`: changes, and empty payloads
    /// for what belongs to no configured entity any more. Each returned message is taken as
    /// sent; if it could not be, call `resend()`.
    public mutating func plan(_ current: [RetainedState.Message], at now: Timestamp) -> [RetainedState.Message] {
        var out: [RetainedState.Message] = []
        var topics = Set<String>()
        var owners = Set<Substring>()
        topics.reserveCapacity(current.count)
        for message in current {
            topics.insert(message.topic)
            owners.insert(Self.owner(message.topic))
            if let last = sent[message.topic], last.significant == message.significant,
                last.payload == message.payload || now - last.at < Self.refresh
            {
                continue
            }
            sent[message.topic] = Sent(significant: message.significant, payload: message.payload, at: now)
            out.append(message)
        }
        let gone = sent.keys.filter { !topics.contains($0) }
        for topic in gone { sent[topic] = nil }
        for topic in (gone + found.filter { !topics.contains($0) }) where !owners.contains(Self.owner(topic)) {
            out.append(RetainedState.Message(topic: topic, payload: "", qos: 1))
        }
        found = []
        return out
    }

    /// The entity a topic is about: everything before its last level (`…/assets/cart-17/`).
    static func owner(_ topic: String) -> Substring {
        guard let slash = topic.lastIndex(of: "/") else { return topic[...] }
        return topic[...slash]
    }
}
