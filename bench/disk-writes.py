#!/usr/bin/env python3
"""What the daemon writes to its disk, for sizing a gateway's flash card: the live daemon on
the simulated store (config/sim-store.yaml with `tags` tags, no webhooks), the bytes it sends
to the block device (/proc/PID/io write_bytes: the state file's write-ahead log, its
checkpoints and the syncs, before the card's own write amplification) over `seconds`, after
30 s of settling, with the events it made meanwhile.

    python3 bench/disk-writes.py [binary=.build/release/beacond] [seconds=300] [tags=20]

The state directory is made under /var/tmp, a real disk (not /tmp, which may be memory).
"""
import json, shutil, socket, subprocess, sys, tempfile, time
from simstore import write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 300
tags = int(sys.argv[3]) if len(sys.argv) > 3 else 20


def io(pid):
    return {k: int(v) for k, v in (line.split(": ") for line in open(f"/proc/{pid}/io"))}


def events(directory):
    s = socket.socket(socket.AF_UNIX)
    s.connect(f"{directory}/api.sock")
    s.sendall(b"GET /v1/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    reply = b""
    while chunk := s.recv(65536):
        reply += chunk
    return json.loads(reply.split(b"\r\n\r\n", 1)[1])["counts"]["events"]


d = tempfile.mkdtemp(prefix="beacond-writes-", dir="/var/tmp")
write_config(d, tags)
daemon = subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"],
                          stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
try:
    time.sleep(30)
    before, events_before = io(daemon.pid), events(d)
    time.sleep(seconds)
    after, events_after = io(daemon.pid), events(d)
finally:
    daemon.terminate()
    daemon.wait()
    shutil.rmtree(d)
written = after["write_bytes"] - before["write_bytes"]
made = events_after - events_before
print(f"{tags} tags, {seconds:.0f} s: {made} events ({made / seconds:.1f}/s), {written / 1e6:.1f} MB written: "
      f"{written / seconds / 1e3:.1f} kB/s, {written / seconds * 86400 / 1e9:.2f} GB a day, "
      f"{written / max(made, 1) / 1e3:.2f} kB an event")
