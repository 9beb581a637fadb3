#!/usr/bin/env python3
"""Start-up to READY and idle memory (issue 6): starts beacond with a NOTIFY_SOCKET this
script listens on, measures the time from exec to READY=1, then reads the daemon's RSS after
it has idled. Runs against a private bus with no bluetoothd (BlueZ is tried, not found).

    python3 bench/startup.py [binary=.build/release/beacond] [runs=5] [idle_seconds=10] [webhook]

With `webhook`, the configuration also has one webhook (to a closed local port, so it keeps
retrying): libcurl is then loaded, which a daemon without webhooks never does.
"""
import os, socket, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
idle = float(sys.argv[3]) if len(sys.argv) > 3 else 10
webhook = len(sys.argv) > 4 and sys.argv[4] == "webhook"

def status_kib(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0

ready_ms, rss, anon = [], [], []
for run in range(runs):
    d = tempfile.mkdtemp(prefix="beacond-startup-")
    open(f"{d}/beacond.yaml", "w").write(
        f"gateway: {{id: startup, state_dir: {d}/state}}\napi: {{socket: {d}/api.sock}}\n"
        "clients: [{id: app, regions: [{id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}]}]\n"
        + ("webhooks: [{id: crm, url: 'http://127.0.0.1:9/hook'}]\n" if webhook else ""))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(f"{d}/notify.sock")
    sock.settimeout(10)
    env = dict(os.environ, NOTIFY_SOCKET=f"{d}/notify.sock", DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={d}/no-bus")
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "--no-print-events", "--config", f"{d}/beacond.yaml"], env=env,
                         stderr=subprocess.DEVNULL)
    while True:
        msg = sock.recv(4096).decode()
        if "READY=1" in msg:
            ready_ms.append((time.monotonic() - t0) * 1000)
            break
    time.sleep(idle)
    rss.append(status_kib(p.pid, "VmRSS") / 1024)
    anon.append(status_kib(p.pid, "RssAnon") / 1024)
    p.terminate()
    p.wait()
ready_ms.sort()
rss.sort()
anon.sort()
print(f"{binary}{' with a webhook' if webhook else ''}: start-up to READY {ready_ms[0]:.0f}-{ready_ms[-1]:.0f} ms (median {ready_ms[len(ready_ms)//2]:.0f}); "
      f"idle RSS after {idle:.0f} s {rss[0]:.1f}-{rss[-1]:.1f} MB, of which anonymous {anon[0]:.1f}-{anon[-1]:.1f} MB "
      f"({runs} runs)")
