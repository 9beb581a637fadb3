#!/usr/bin/env python3
"""Memory over a long run: the live daemon on the simulated store (config/sim-store.yaml,
20 tags, 6 receivers, 4 zones, positions and zone alerts flowing to the state store and a
webhook that never answers), its RSS and state-store size sampled every `every` seconds.
A daemon meant to run for months must level off, not grow with time.

    python3 bench/soak.py [binary=.build/release/beacond] [minutes=20] [every=30] [tags=20]

With more tags than the store's 20 (tags=60: three times the events), the event history
reaches its 100,000-event bound and the dead webhook's outbox its `max_age` within an hour,
so a run of two hours shows whether the state directory levels off once every bound holds.
"""
import subprocess, sys, tempfile, time
from simstore import dir_kib, rss_kib, write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
minutes = float(sys.argv[2]) if len(sys.argv) > 2 else 20
every = float(sys.argv[3]) if len(sys.argv) > 3 else 30
tags = int(sys.argv[4]) if len(sys.argv) > 4 else 20

d = tempfile.mkdtemp(prefix="beacond-soak-")
# A webhook to a closed port: its outbox fills and retries for the whole run.
write_config(d, tags, "webhooks:\n  - {id: crm, url: 'http://127.0.0.1:9/hook', max_age: 1h}\n")
daemon = subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"],
                          stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
samples = []
start = time.time()
try:
    while time.time() - start < minutes * 60:
        time.sleep(every)
        if daemon.poll() is not None:
            sys.exit(f"beacond exited with {daemon.returncode}; log in {d}/log")
        samples.append((time.time() - start, rss_kib(daemon.pid), dir_kib(f"{d}/state")))
        t, rss, disk = samples[-1]
        print(f"{t / 60:5.1f} min  RSS {rss / 1024:6.1f} MB  state {disk / 1024:6.1f} MB", flush=True)
finally:
    daemon.terminate()
    daemon.wait()
half = [s for s in samples if s[0] >= minutes * 30]
print(f"RSS: first {samples[0][1] / 1024:.1f} MB, max {max(s[1] for s in samples) / 1024:.1f} MB, "
      f"second half {min(s[1] for s in half) / 1024:.1f}-{max(s[1] for s in half) / 1024:.1f} MB; "
      f"exit {daemon.returncode}")
