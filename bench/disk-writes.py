#!/usr/bin/env python3
"""What the daemon writes to its disk, for sizing a gateway's flash card: the live daemon on
the simulated store (config/sim-store.yaml with `tags` tags, no webhooks), the bytes it sends
to the block device (/proc/PID/io write_bytes: the state file's write-ahead log, its
checkpoints and the syncs, before the card's own write amplification) over `seconds`, after
30 s of settling, with the events it made meanwhile.

    python3 bench/disk-writes.py [binary=.build/release/beacond] [seconds=300] [tags=20]

With BENCH_NO_ZONES=1 the store has no zones and no alarms: what everything but the zone
alerts, memberships and transitions writes (issue 53's floor beside the alerts' share).
It prints the daemon's CPU over the same window (with its simulator, which is in-process);
BENCH_ADV_HZ=10 makes every tag advertise 10 times a second (the store's tags: 5).

The state directory is made under /var/tmp, a real disk (not /tmp, which may be memory).
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time
from simstore import api_get, cpu_seconds, write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 300
tags = int(sys.argv[3]) if len(sys.argv) > 3 else 20


def io(pid):
    return {k: int(v) for k, v in (line.split(": ") for line in open(f"/proc/{pid}/io"))}


def events(directory):
    """Events published so far, and of them the ones stored (all but asset.position)."""
    total, stored = 0, 0
    for line in api_get(directory, "/metrics").splitlines():
        if line.startswith("beacond_events_total{"):
            n = int(float(line.rsplit(" ", 1)[1]))
            total += n
            stored += 0 if 'asset.position"' in line else n
    return total, stored


d = tempfile.mkdtemp(prefix="beacond-writes-", dir="/var/tmp")
path = write_config(d, tags)
if os.environ.get("BENCH_ADV_HZ"):
    text = open(path).read().replace("advertising_hz: 5\n", f"advertising_hz: {os.environ['BENCH_ADV_HZ']}\n")
    open(path, "w").write(text)
if os.environ.get("BENCH_NO_ZONES"):
    text = open(path).read()
    text = text[:text.index("zones:\n")] + text[text.index("positioning:\n"):]
    open(path, "w").write(text)
daemon = subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"],
                          stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
try:
    time.sleep(30)
    before, events_before, cpu_before = io(daemon.pid), events(d), cpu_seconds(daemon.pid)
    time.sleep(seconds)
    after, events_after, cpu_after = io(daemon.pid), events(d), cpu_seconds(daemon.pid)
finally:
    daemon.terminate()
    daemon.wait()
    shutil.rmtree(d)
written = after["write_bytes"] - before["write_bytes"]
made = events_after[0] - events_before[0]
stored = events_after[1] - events_before[1]
print(f"{tags} tags, {seconds:.0f} s: {made} events ({made / seconds:.1f}/s; {stored} not positions, "
      f"{stored / seconds:.2f}/s), {written / 1e6:.1f} MB written: "
      f"{written / seconds / 1e3:.1f} kB/s, {written / seconds * 86400 / 1e6:,.0f} MB a day, "
      f"{written / max(stored, 1) / 1e3:.2f} kB per event not a position; "
      f"CPU {(cpu_after - cpu_before) / seconds * 100:.1f} % of a core")
