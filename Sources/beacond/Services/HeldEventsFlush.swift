import BeaconRuntime
import Logging
import Publishing

/// Events the state store could not take (a full disk) get one last try at the stop, after the
/// engine's final turn and before the webhooks' last attempt; what is still held is said, with
/// where it is kept for the next start.
final class HeldEventsFlush: DaemonService, Sendable {
    let name = "held-events"
    /// What it stores at the stop goes to the webhooks' outboxes before their last attempt.
    let startsAfter = ["webhooks"]
    private let publisher: EventPublisher
    private let keep: UnsavedKeep
    private let logger: Logger

    init(publisher: EventPublisher, keep: UnsavedKeep, logger: Logger) {
        self.publisher = publisher
        self.keep = keep
        self.logger = logger
    }

    func start() throws {}

    func stop() {
        publisher.retryHeld(now: true)
        let held = publisher.held.events
        guard held > 0 else { return }
        if keep.isWhole {
            logger.warning(
                "state.events_kept",
                metadata: [
                    "held": "\(held)", "dir": "\(keep.directory)",
                    "next": """
                    the state store could not write them before the stop; they and the region and zone \\
                    states are taken back at the next start (the directory lasts until a reboot, the state \\
                    directory's reserve keeps the alerts through one)
                    """,
                ])
        } else {
            logger.error(
                "state.events_lost",
                metadata: ["held": "\(held)", "next": "the state store could not write them before the stop"])
        }
    }
}
