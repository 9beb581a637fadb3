#!/usr/bin/env python3
"""POST /v1/sightings of large bodies (issue 27): sightings per second accepted, and the CPU
of the daemon and of its API thread (`beacond-api`), from /proc.

The API takes bodies up to 1 MiB (SPEC §4.1), so a body holds about 6,500 records of this size
(an iBeacon, ~155 bytes); 10,000-line bodies need records under 105 bytes.

    swift build -c release --product beacond
    python3 bench/relay-post.py [--posts 100] [--lines 6500]
"""
import argparse, http.client, json, os, socket, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UUID = "e2c56db5dffb48d2b060d0f5a71096e0"
TICK = os.sysconf("SC_CLK_TCK")


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def cpu(pid, thread=None):
    """User+system seconds of the process, or of its thread named `thread`."""
    paths = ["/proc/%d/stat" % pid]
    if thread:
        paths = ["/proc/%d/task/%s/stat" % (pid, t) for t in os.listdir("/proc/%d/task" % pid)
                 if open("/proc/%d/task/%s/comm" % (pid, t)).read().strip() == thread]
    total = 0
    for path in paths:
        fields = open(path).read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def body(lines, seed):
    now = time.time()
    out = []
    for n in range(lines):
        i = (seed * lines + n) % 10000
        payload = "0215" + UUID + "%04x%04x" % (i // 100, i % 100) + "c5"
        out.append(json.dumps({"t": round(now - 0.5 + n / lines / 2, 4), "receiver": "relay-%d" % (n % 4),
                               "address": "C3:11:%02X:%02X:00:%02X" % (i // 256, i % 256, n % 4),
                               "rssi": -50 - (i * 7) % 40, "manufacturer_data": {"76": payload}},
                              separators=(",", ":")))
    return ("\n".join(out) + "\n").encode()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--posts", type=int, default=100)
    p.add_argument("--lines", type=int, default=6500)
    a = p.parse_args()
    d = tempfile.mkdtemp(prefix="beacond-relay-bench-")
    config = os.path.join(d, "beacond.yaml")
    with open(config, "w") as f:
        f.write("gateway: {id: bench, state_dir: %s/state}\napi: {socket: %s/api.sock}\n" % (d, d))
        f.write("clients:\n  - id: app\n    regions:\n      - {id: store, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0}\n")
    daemon = subprocess.Popen([os.path.join(ROOT, ".build/release/beacond"), "--config", config, "--no-print-events"],
                              stderr=subprocess.DEVNULL, env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=%s/none" % d})
    sock = os.path.join(d, "api.sock")
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    bodies = [body(a.lines, k) for k in range(a.posts)]  # made before the clock starts
    start_cpu, start_api, start = cpu(daemon.pid), cpu(daemon.pid, "beacond-api"), time.monotonic()
    accepted = refused = 0
    for payload in bodies:
        while True:
            c = UnixConnection(sock)
            c.request("POST", "/v1/sightings", payload, {"Content-Type": "application/x-ndjson"})
            r = c.getresponse()
            answer = json.loads(r.read())
            c.close()
            if r.status == 503:  # the engine is behind: as a relay would, send it again shortly
                refused += 1
                time.sleep(0.02)
                continue
            if r.status != 202:
                raise SystemExit("HTTP %d: %s" % (r.status, answer))
            accepted += answer["accepted"]
            break
    wall = time.monotonic() - start
    time.sleep(1)  # the engine's share of the last batch
    used, api = cpu(daemon.pid) - start_cpu, cpu(daemon.pid, "beacond-api") - start_api
    daemon.terminate()
    daemon.wait()
    print("%d posts of %d lines: %d accepted in %.2f s = %.0f sightings/s accepted (%d 503s resent); daemon %.2f "
          "CPU-s (%.0f sightings per CPU-second), API thread %.2f CPU-s (%.0f per API-CPU-second)"
          % (a.posts, a.lines, accepted, wall, accepted / wall, refused, used, accepted / max(used, 1e-9), api,
             accepted / max(api, 1e-9)))


if __name__ == "__main__":
    main()
