#!/usr/bin/env python3
"""An SD card's slow fsync under the live daemon: the simulated store (config/sim-store.yaml,
`tags` tags) with every fsync made `ms` milliseconds slower (bench/slowsync.c, LD_PRELOAD),
zone alerts sent to a local webhook receiver. For each delay it prints the share of a core
the engine's turns took (waiting on the disk included), sightings dropped because the engine
fell behind, events held, how many alerts arrived, and their latency from the sighting that
caused them (the event's `time`) to the receiver.

    cc -shared -fPIC -O2 -o /tmp/slowsync.so bench/slowsync.c -ldl
    python3 bench/slow-card.py [binary=.build/release/beacond] [seconds=60] [tags=200] [ms=0,20,100,500]
"""
import json, os, re, subprocess, sys, tempfile, time
from datetime import datetime
from simstore import write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60
tags = int(sys.argv[3]) if len(sys.argv) > 3 else 200
delays = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "0,20,100,500").split(",")]
shim = "/tmp/slowsync.so"
if not os.path.exists(shim):
    sys.exit(f"build {shim} first: cc -shared -fPIC -O2 -o {shim} bench/slowsync.c -ldl")


def metric(text, name):
    m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def run(ms):
    d = tempfile.mkdtemp(prefix="beacond-slowcard-")
    log = f"{d}/received.jsonl"
    receiver = subprocess.Popen(
        ["python3", "Tests/DaemonTests/Support/webhook_receiver.py", "--log", log], stdout=subprocess.PIPE, text=True)
    port = int(receiver.stdout.readline())
    write_config(d, tags, "webhooks:\n"
                 f"  - {{id: wms, url: 'http://127.0.0.1:{port}/hook', events: ['zone.*'], batch: {{max_delay: 0s}}}}\n")
    env = dict(os.environ, LD_PRELOAD=shim, SLOWSYNC_MS=str(ms))
    daemon = subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"],
                              env=env, stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
    try:
        time.sleep(seconds)
        metrics = subprocess.run(["curl", "-s", "--unix-socket", f"{d}/api.sock", "http://localhost/metrics"],
                                 capture_output=True, text=True).stdout
    finally:
        daemon.terminate()
        daemon.wait()
        receiver.terminate()
    latencies = []
    for line in open(log) if os.path.exists(log) else []:
        request = json.loads(line)
        for event in request["events"]:
            made = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
            latencies.append((request["arrived"] - made) * 1000)
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")
    busy = metric(metrics, "beacond_engine_busy_seconds_total") / metric(metrics, "beacond_uptime_seconds")
    dropped = metric(metrics, 'beacond_advertisements_dropped_total{reason="engine_behind"}')
    print(f"fsync +{ms:4d} ms: engine busy {busy * 100:5.1f} % of a core, engine_behind {dropped:.0f}, "
          f"held {metric(metrics, 'beacond_events_held'):.0f}, {len(latencies)} zone alerts delivered, "
          f"latency p50 {pick(0.5):.0f} ms, p99 {pick(0.99):.0f} ms, max {pick(1.0):.0f} ms; exit {daemon.returncode}",
          flush=True)


for ms in delays:
    run(ms)
