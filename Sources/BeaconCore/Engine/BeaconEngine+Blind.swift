/// The gateway's own radios are blind — every adapter gone, powered off or not discovering
/// (a dongle unplugged, bluetoothd restarting, rfkill) — and then hear again. Silence while
/// blind says nothing of the beacons: taken as their absence, every region inside would exit
/// and enter again when the dongle came back, and every asset leave its zones. So nothing
/// exits while blind, and when the radios hear again the beacons and assets get
/// `exit_timeout` to be heard, as after a restart; what is not heard then exits, dated
/// `exit_timeout` after its last sighting.
extension BeaconEngine {
    /// Whether the gateway's own radios are blind now (`setBlind`).
    var isBlind: Bool { blind }

    public mutating func setBlind(_ isBlind: Bool) {
        guard isBlind != blind else { return }
        blind = isBlind
        for client in clients.values {
            for slot in client.slots.values {
                if isBlind {
                    regions[Int(slot)].holdWhileBlind()
                } else {
                    regions[Int(slot)].releaseBlindHold(at: now, settings)
                }
                arm(slot)
            }
        }
        tracker?.setBlind(isBlind, at: now)
    }
}
