/// Why an exit — a region's, or an asset's loss — waits although its time has come: after a
/// restart, or once blind radios hear again, it waits until a time for the beacon to be heard;
/// while the gateway's radios are blind, it waits for as long as they are (absence then says
/// nothing). Without it a reboot or a dead dongle would exit everything and enter it again.
enum ExitHold: Equatable, Sendable {
    case until(Timestamp)
    case whileBlind

    /// Moved with a step of the wall clock; a blind hold has no time to move.
    func shifted(by d: TimeSpan) -> ExitHold {
        switch self {
        case let .until(t): .until(t + d)
        case .whileBlind: .whileBlind
        }
    }

    /// The radios hear again at `t`: a blind hold becomes `grace` to be heard.
    func released(at t: Timestamp, grace: TimeSpan) -> ExitHold {
        self == .whileBlind ? .until(t + grace) : self
    }

    /// Whether an exit may happen at `t`.
    func allows(_ t: Timestamp) -> Bool {
        switch self {
        case let .until(until): t >= until
        case .whileBlind: false
        }
    }
}
