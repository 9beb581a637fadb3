import APIModel
import BeaconConfig
import BeaconCore
import BeaconRuntime
import HTTPServer
import Publishing
import Storage

/// `GET /v1/alarms` and `PATCH /v1/alarms/{id}`: the alarms, armed or not (kept across restarts).
extension APIRouter {
    func alarmList() -> HTTPReply {
        let alarms = context.config.alarms
        let flags = onEngine { engine, _ in
            (alarms.map { engine.tracker?.alarmIsActive($0.id) ?? $0.active }, [])
        }
        guard let flags else { return engineUnavailable() }
        var list = AlarmList()
        list.alarms = zip(context.config.alarms, flags).map { Self.alarm($0, active: $1) }
        return Reply.json(list.json)
    }

    static func alarm(_ spec: AlarmSpec, active: Bool) -> AlarmList.Alarm {
        var alarm = AlarmList.Alarm()
        (alarm.id, alarm.zones, alarm.on) = (spec.id, spec.zones, spec.on.map(\.rawValue))
        (alarm.dwell, alarm.assets, alarm.active) = (spec.dwell?.description, spec.assets, active)
        return alarm
    }

    /// `{"active": true|false}` switches an alarm on or off at runtime.
    func patchAlarm(id: String, body: [UInt8]) -> HTTPReply {
        guard let alarm = context.config.alarms.first(where: { $0.id == id }) else {
            return Reply.error(404, "unknown_alarm", "no alarm \"\(id)\"")
        }
        let json: JSONValue
        switch Self.parseBody(body) {
        case let .success(value): json = value
        case let .failure(error): return error.reply
        }
        guard case let .object(members) = json, case let .bool(active)? = json["active"] else {
            return Reply.error(422, "invalid_alarm", "active: expected true or false")
        }
        if let other = members.first(where: { $0.0 != "active" }) {
            return Reply.error(422, "invalid_alarm", "\(other.0): only \"active\" can be changed")
        }
        let applied = onEngine { engine, _ in (engine.setAlarm(id, active: active), []) }
        guard applied != nil else { return engineUnavailable() }
        do {
            try context.store?.saveAlarmFlag(id, active: active)
        } catch {
            return Reply.error(
                500, "not_persisted", "the alarm is switched but the change will not survive a restart: \(error)")
        }
        return Reply.json(Self.alarm(alarm, active: active).json)
    }
}
