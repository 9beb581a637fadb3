/// What the parts that publish need of a broker connection: whether it is up, and a publish
/// that returns the message's id. `MQTTClient` (libmosquitto) is the connection the daemon
/// runs on; a part that takes this protocol instead has its rules (a batch acknowledged,
/// refused, or cut off with the connection) tested in process, without a broker, while the
/// site tests keep one real mosquitto per guarantee.
public protocol MQTTConnection: AnyObject, Sendable {
    var state: MQTTClient.State { get }
    /// Queues a message; its id, or nil when it could not be queued (not connected).
    @discardableResult func publish(_ message: MQTTClient.Message) -> Int32?
}

extension MQTTClient: MQTTConnection {}
