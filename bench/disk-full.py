#!/usr/bin/env python3
"""Memory while the disk is full: the live daemon on the simulated store with many tags, its
state directory on a small tmpfs that is filled to the last byte after a minute and emptied
again later. Events are then held in memory (at most 10,000, `HeldEvents`) and copied to the
runtime directory (`UnsavedKeep`); this prints the daemon's RSS, the events held and dropped,
and the size of that copy, every `every` seconds, to show that both stay bounded and come
back down once there is room. Needs root (mount).

    sudo python3 bench/disk-full.py [binary=.build/release/beacond] [tags=200] [full_minutes=4] [every=15]
"""
import json, os, socket, subprocess, sys, tempfile, time
from simstore import dir_kib, rss_kib, write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
tags = int(sys.argv[2]) if len(sys.argv) > 2 else 200
full_minutes = float(sys.argv[3]) if len(sys.argv) > 3 else 4
every = float(sys.argv[4]) if len(sys.argv) > 4 else 15

def status(sock):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(b"GET /v1/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    return json.loads(data.split(b"\r\n\r\n", 1)[1])

d = tempfile.mkdtemp(prefix="beacond-full-")
state = f"{d}/state"
os.makedirs(state)
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", state], check=True)
write_config(d, tags)
daemon = subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"],
                          stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
start = time.time()

def sample(phase):
    s = status(f"{d}/api.sock")["counts"]
    print(f"{(time.time() - start) / 60:5.1f} min  {phase:5}  RSS {rss_kib(daemon.pid) / 1024:6.1f} MB  "
          f"held {s['events_held']:6d}  dropped {s['events_dropped']:7d}  "
          f"runtime copy {dir_kib(f'{d}/unsaved') / 1024:5.1f} MB  events {s['events']:7d}", flush=True)

filler = f"{state}/filler"
try:
    time.sleep(5)
    for _ in range(4):
        time.sleep(every)
        sample("room")
    subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], stderr=subprocess.DEVNULL)
    until = time.time() + full_minutes * 60
    while time.time() < until:
        time.sleep(every)
        sample("full")
    os.remove(filler)
    for _ in range(4):
        time.sleep(every)
        sample("room")
finally:
    daemon.terminate()
    daemon.wait()
    subprocess.run(["umount", "-l", state])
log = open(f"{d}/log").read()
print(f"exit {daemon.returncode}; log: " + "; ".join(
    line.split(" next=")[0] for line in log.splitlines() if "state.write" in line or "events_dropped" in line))
