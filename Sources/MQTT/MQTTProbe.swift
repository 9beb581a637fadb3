import BeaconCore
import Dispatch
import Glibc
import Logging

/// One attempt to log in to a broker, for `beaconctl doctor`: nil when the broker accepted
/// the connection (name, port, TLS and credentials all good), else what went wrong, in
/// libmosquitto's words ("refused: Not authorized", "Connection refused", a TLS error).
public enum MQTTProbe {
    public static func failure(_ settings: MQTTClient.Settings, within wait: TimeSpan = .seconds(5)) -> String? {
        var settings = settings
        settings.will = nil
        settings.clientID += "-doctor"
        let client: MQTTClient
        do {
            client = try MQTTClient(
                settings: settings, logger: Logger(label: "beacond.doctor", factory: { _ in SwiftLogNoOpLogHandler() }))
        } catch {
            return error.reason
        }
        client.start(threadName: "doctor-mqtt")
        defer { client.stop(within: .seconds(1)) }
        let deadline = DispatchTime.now() + .nanoseconds(Int(wait.nanoseconds))
        while DispatchTime.now() < deadline {
            let state = client.state
            if state.connected { return nil }
            if let error = state.lastError { return error }
            usleep(20_000)
        }
        return "no answer within \(wait)"
    }
}
