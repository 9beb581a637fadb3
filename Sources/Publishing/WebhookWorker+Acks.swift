import BeaconCore
import Logging
import Storage
import Synchronization

extension WebhookWorker {
    /// The entries to send next: the outbox's (after any whose acknowledgement is not saved
    /// yet, which is tried first), then, when all of them fit in a batch, the positions
    /// waiting in memory. The positions are taken before the outbox is read: an alert the
    /// publisher stored before a position it offered is then in this read, so that the batch's
    /// last stored entry never passes over an alert (the site's `delivered` mark).
    func waiting(expiringBefore cutoff: Timestamp? = nil) throws -> [StateStore.OutboxEntry] {
        let limit = schedule.maxEvents
        let kept = positions.withLock { waiting in
            if let cutoff { waiting.expire(before: cutoff) }
            return waiting.next(limit)
        }
        if let ack = unsavedAck { saveAck(through: ack) }
        var stored = try store.pending(webhook: settings.id, after: unsavedAck?.seq ?? 0, limit: limit)
        if stored.contains(where: \.bodyLost) {
            deadLetterLostBodies()
            stored = try store.pending(webhook: settings.id, after: unsavedAck?.seq ?? 0, limit: limit)
        }
        return stored.count < limit ? stored + kept.prefix(limit - stored.count) : stored
    }

    /// Entries whose bodies went with a damaged page of the state file go to the dead letters,
    /// said once per finding: never sent as empty events, never holding later alerts back.
    private func deadLetterLostBodies() {
        let now = clock()
        guard let moved = try? store.deadLetterLostBodies(webhook: settings.id, at: now), moved > 0 else { return }
        state.withLock { $0.deadLettered += moved }
        logger.error(
            "webhook.dead_letters",
            metadata: [
                "webhook": "\(settings.id)", "events": "\(moved)", "reason": "\(StateStore.bodyLostReason)",
                "next":
                    "their bodies went with a damaged page of the state file; beaconctl outbox lists their ids and types",
            ])
    }

    /// Deletes what the receiver acknowledged, through `entry`. When the disk will not take
    /// it, the worker remembers it (`unsavedAck`, and `hooks.acks` for the next run) and says
    /// so once.
    func saveAck(through entry: StateStore.OutboxEntry) {
        saveAck(through: UnsavedAcks.Ack(seq: entry.seq, eventID: entry.eventID))
    }

    private func saveAck(through ack: UnsavedAcks.Ack) {
        do {
            try store.delivered(webhook: settings.id, through: ack.seq)
            unsavedAck = nil
            hooks.acks?.saved(webhook: settings.id)
            if let took = ackFailures.succeeded(at: clock()) {
                logger.info(
                    "webhook.ack_saved",
                    metadata: ["webhook": "\(settings.id)", "after_s": "\(Int(took.seconds.rounded()))"])
            }
        } catch {
            if ack.seq > unsavedAck?.seq ?? 0 { unsavedAck = ack }
            var kept = "not sent again while beacond runs; saved when the state store can write"
            do {
                try hooks.acks?.unsaved(webhook: settings.id, unsavedAck!)
                if hooks.acks != nil { kept += " (kept in the runtime directory: nor after a restart)" }
            } catch {
                kept +=
                    " (the runtime directory would not keep it either: \(error); a restart before that resends them)"
            }
            if ackFailures.failed(at: clock()) {
                logger.error(
                    "webhook.ack_not_saved",
                    metadata: ["webhook": "\(settings.id)", "error": "\(error)", "next": "\(kept)"])
            }
        }
    }

    /// What an earlier run (or the worker this one replaced) was told and could not save,
    /// if the outbox still holds that very entry; nil otherwise, and the kept note goes.
    func adoptKeptAck() -> UnsavedAcks.Ack? {
        guard let acks = hooks.acks, let kept = acks.kept(webhook: settings.id) else { return nil }
        let entry: StateStore.OutboxEntry?
        do {
            entry = try store.pending(webhook: settings.id, after: kept.seq - 1, limit: 1).first
        } catch {
            return kept  // nothing is sent while the outbox cannot be read; checked at the next start
        }
        guard let entry, entry.seq == kept.seq else {
            acks.saved(webhook: settings.id)  // deleted after all: nothing to skip
            return nil
        }
        guard entry.eventID == kept.eventID else {
            logger.warning(
                "webhook.kept_ack_ignored",
                metadata: [
                    "webhook": "\(settings.id)", "seq": "\(kept.seq)", "kept_event": "\(kept.eventID)",
                    "outbox_event": "\(entry.eventID)",
                    "next": "the state store is not the one it was kept for: its events are sent",
                ])
            acks.saved(webhook: settings.id)
            return nil
        }
        logger.info(
            "webhook.kept_ack_adopted",
            metadata: [
                "webhook": "\(settings.id)", "through_event": "\(kept.eventID)",
                "next": "not sent again: the receiver acknowledged them before the restart",
            ])
        return kept
    }
}
