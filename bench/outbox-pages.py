#!/usr/bin/env python3
"""The ceiling of issue 54's path on the card: what an alert's body costs in pages of the
write-ahead log when each webhook's outbox row carries a copy of it (as built) and when one
body table is shared by the history and the outboxes (the way to eight steps that keeps the
backlog across a damaged history, `CorruptStoreTests`).

    python3 bench/outbox-pages.py [page_size=1024]

Each alert is committed as the daemon commits it (the history row and one outbox row per
webhook, in one transaction), then delivered (its outbox rows deleted, another commit); the
schema mirrors Sources/Storage/StateStore.swift's `event` and `outbox` with their indexes
(v11), the body table keyed by the history's own sequence and found from an outbox row by its event
id, so that neither table needs an index more. Frames of the log per alert are counted after 2,000 alerts of warm-up and a checkpoint:
what the card takes before its checkpoint writes the pages once more.
"""
import os
import sqlite3
import sys
import tempfile

PAGE = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
BODY = '{"specversion":"1.0",' + 'x' * 680 + '}'  # a zone alert's CloudEvent, about 700 bytes

AS_BUILT = """
CREATE TABLE event (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL, time_ns INTEGER NOT NULL, body TEXT NOT NULL, telemetry INTEGER NOT NULL DEFAULT 0);
CREATE INDEX event_by_class_time ON event (telemetry, time_ns);
CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, webhook TEXT NOT NULL, event_id TEXT NOT NULL,
  type TEXT NOT NULL, body TEXT NOT NULL, enqueued_ns INTEGER NOT NULL, decider TEXT, decider_enqueued_ns INTEGER);
CREATE INDEX outbox_by_webhook ON outbox (webhook, seq);
CREATE INDEX outbox_by_age ON outbox (webhook, enqueued_ns);
CREATE INDEX outbox_by_event ON outbox (event_id);
CREATE INDEX outbox_by_decider ON outbox (webhook, decider, decider_enqueued_ns);
"""

# The body once: the history's row and each outbox row point at it; it goes with the last.
ONE_BODY = AS_BUILT.replace("body TEXT NOT NULL, telemetry", "telemetry").replace(
    "type TEXT NOT NULL, body TEXT NOT NULL, enqueued_ns", "type TEXT NOT NULL, body_seq INTEGER NOT NULL, enqueued_ns"
) + """
CREATE TABLE event_body (seq INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE TRIGGER body_after_outbox AFTER DELETE ON outbox BEGIN
  DELETE FROM event_body WHERE seq = old.body_seq AND NOT EXISTS (SELECT 1 FROM event WHERE seq = old.body_seq)
    AND NOT EXISTS (SELECT 1 FROM outbox WHERE event_id = old.event_id); END;
CREATE TRIGGER body_after_event AFTER DELETE ON event BEGIN
  DELETE FROM event_body WHERE seq = old.seq AND NOT EXISTS (SELECT 1 FROM outbox WHERE event_id = old.id); END;
"""


def insert_as_built(db, i, hooks):
    db.execute("INSERT INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)", (f"e{i}", "beacond.zone.enter", i, BODY))
    for h in range(hooks):
        db.execute(
            "INSERT INTO outbox (webhook, event_id, type, body, enqueued_ns) VALUES (?, ?, ?, ?, ?)",
            (f"w{h}", f"e{i}", "beacond.zone.enter", BODY, i))


def insert_one_body(db, i, hooks):
    seq = db.execute("INSERT INTO event (id, type, time_ns) VALUES (?, ?, ?)", (f"e{i}", "beacond.zone.enter", i)).lastrowid
    db.execute("INSERT INTO event_body (seq, body) VALUES (?, ?)", (seq, BODY))
    for h in range(hooks):
        db.execute(
            "INSERT INTO outbox (webhook, event_id, type, body_seq, enqueued_ns) VALUES (?, ?, ?, ?, ?)",
            (f"w{h}", f"e{i}", "beacond.zone.enter", seq, i))


def frames_per_alert(schema, insert, hooks, alerts=2000, warm=2000):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "state.sqlite")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(f"PRAGMA page_size = {PAGE}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.executescript(schema)

        def alert_and_delivery(i):
            db.execute("BEGIN")
            insert(db, i, hooks)
            db.execute("COMMIT")
            db.execute("BEGIN")
            db.execute("DELETE FROM outbox WHERE event_id = ?", (f"e{i}",))
            db.execute("COMMIT")

        for i in range(warm):
            alert_and_delivery(i)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for i in range(warm, warm + alerts):
            alert_and_delivery(i)
        frames = os.path.getsize(path + "-wal") / (PAGE + 24)
        db.close()
        return frames / alerts


print(f"pages of {PAGE} bytes in the write-ahead log per alert (its commit and its delivery's)")
print("webhooks  body in each outbox row (as built)  one body table  change")
for hooks in (1, 2, 3):
    built = frames_per_alert(AS_BUILT, insert_as_built, hooks)
    shared = frames_per_alert(ONE_BODY, insert_one_body, hooks)
    print(f"{hooks:8}  {built:34.2f}  {shared:14.2f}  {100 * (shared - built) / built:+5.0f} %")
