#!/usr/bin/env python3
"""A warehouse on one gateway (issue 64): the live daemon fed from outside, as a relay feeds it.

N address tags on the simulated store's floor (30 x 20 m, its six ceiling receivers and four
zones), each advertising once a second, heard by each receiver with 20 % loss and 4 dB of
noise on the path-loss model; 80 % of the tags stand where they were put down, 20 % walk
from spot to spot at 1.1 m/s. Every second the second's sightings are POSTed to
/v1/sightings (bodies under 1 MiB), stamped with the time they are sent. Measured over the
last half of the run: the daemon's CPU (in all and per thread, from /proc), its RSS, the
sightings refused (503: the engine behind) and how long an `asset.position` took to reach a
stream client after the sightings it was made from were sent (p50/p99).

    swift build -c release --product beacond
    python3 bench/warehouse.py --tags 1000 --threads 1 [--seconds 60] [--motion stop_and_go]
"""
import argparse, bisect, http.client, json, math, os, random, socket, subprocess, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")
RECEIVERS = [("rx-front-left", 5, 5), ("rx-front-mid", 15, 5), ("rx-front-right", 25, 5),
             ("rx-back-left", 5, 15), ("rx-back-mid", 15, 15), ("rx-back-right", 25, 15)]
LINES_PER_BODY = 9000


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def config(d, tags, threads, motion):
    lines = ["gateway: {id: warehouse, state_dir: %s/state}" % d, "api: {socket: %s/api.sock}" % d,
             "engine: {threads: %d}" % threads, "receivers:"]
    lines += ["  - {id: %s, position: {x: %d, y: %d, z: 3.0, level: 0}, rssi_at_1m: -59, path_loss_exponent: 2.0}"
              % r for r in RECEIVERS]
    lines.append("assets:")
    lines += ['  - {id: tag-%d, beacon: {address: "%s"}}' % (i, address(i)) for i in range(tags)]
    lines += ["zones:",
              "  - {id: entrance,  level: 0, polygon: [[0, 0], [7, 0], [7, 6], [0, 6]]}",
              "  - {id: checkout,  level: 0, polygon: [[11, 0], [19, 0], [19, 5], [11, 5]]}",
              "  - {id: aisle-3,   level: 0, polygon: [[8, 9], [13, 9], [13, 17], [8, 17]]}",
              "  - {id: stockroom, level: 0, polygon: [[23, 12], [30, 12], [30, 20], [23, 20]]}",
              "positioning:", "  publish_interval: 2s", "  max_receivers: 5", "  tag_height: 1.2",
              "  floor: [[0, 0], [30, 0], [30, 20], [0, 20]]", "  motion: %s" % motion, "  body_loss_db: 3"]
    path = os.path.join(d, "beacond.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def address(i):
    return "D0:5E:00:%02X:%02X:%02X" % (i >> 16, (i >> 8) & 0xFF, i & 0xFF)


class Tags:
    """Where each tag is: standing ones stay put, walking ones go from spot to spot."""

    def __init__(self, n, seed=64):
        self.random = random.Random(seed)
        self.at = [(1 + self.random.random() * 28, 1 + self.random.random() * 18) for _ in range(n)]
        self.walking = [i % 5 == 0 for i in range(n)]
        self.goal = list(self.at)
        self.addresses = [address(i) for i in range(n)]

    def step(self):
        for i, walks in enumerate(self.walking):
            if not walks:
                continue
            (x, y), (gx, gy) = self.at[i], self.goal[i]
            d = math.hypot(gx - x, gy - y)
            if d < 1.1:
                self.goal[i] = (1 + self.random.random() * 28, 1 + self.random.random() * 18)
                self.at[i] = (gx, gy)
            else:
                self.at[i] = (x + (gx - x) * 1.1 / d, y + (gy - y) * 1.1 / d)

    def sightings(self, t):
        r = self.random
        stamp = "%.3f" % t
        out = []
        for i, (x, y) in enumerate(self.at):
            head = '{"t":' + stamp + ',"receiver":"'
            tail = '","address":"' + self.addresses[i] + '","rssi":'
            for name, rx, ry in RECEIVERS:
                if r.random() < 0.2:
                    continue
                d = math.sqrt((x - rx) ** 2 + (y - ry) ** 2 + 1.8 ** 2)
                rssi = round(-59 - 20 * math.log10(d) + r.gauss(0, 4))
                out.append(head + name + tail + str(rssi) + "}")
        return out


def cpu_by_thread(pid):
    """CPU seconds per thread name (threads of one name summed), and in all."""
    per = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            name = open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
            fields = open("/proc/%d/task/%s/stat" % (pid, t)).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        per[name] = per.get(name, 0) + (int(fields[11]) + int(fields[12])) / TICK
    return per


def metrics(sock_path):
    """Stream clients the daemon dropped as too slow. (Its count of sightings shed counts a
    refused body again at each resend: the refusals are counted here instead.)"""
    c = UnixConnection(sock_path)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    def total(prefix):
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))
    return total("beacond_stream_clients_dropped_total")


def rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0


def watch_stream(sock_path, got, stop):
    """Reads the event stream: (receive time, event time) of each asset.position."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.sendall(b"GET /v1/events/stream?type=asset.position HTTP/1.1\r\nHost: x\r\n\r\n")
    s.settimeout(0.5)
    buffer = b""
    while not stop.is_set():
        try:
            chunk = s.recv(1 << 16)
        except socket.timeout:
            continue
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        now = time.time()
        for line in lines:
            if line.startswith(b"data:"):
                # The event's time without parsing the whole event: the reader must keep up
                at = line.find(b'"time":"')
                if at >= 0:
                    got.append((now, line[at + 8:line.index(b'"', at + 8)].decode()))
    s.close()


def parse_time(text):
    # RFC 3339 with milliseconds, UTC: 2026-12-07T18:00:00.123Z
    import calendar
    main, _, frac = text.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(main, "%Y-%m-%dT%H:%M:%S")) + (float("0." + frac) if frac else 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tags", type=int, default=1000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--motion", default="stop_and_go")
    a = p.parse_args()
    d = tempfile.mkdtemp(prefix="beacond-warehouse-")
    path = config(d, a.tags, a.threads, a.motion)
    daemon = subprocess.Popen([os.path.join(ROOT, ".build/release/beacond"), "--config", path, "--no-print-events"],
                              stderr=open(os.path.join(d, "log"), "w"),
                              env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=%s/none" % d})
    sock = os.path.join(d, "api.sock")
    for _ in range(600):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    got, stop = [], threading.Event()
    watcher = threading.Thread(target=watch_stream, args=(sock, got, stop), daemon=True)
    watcher.start()
    tags = Tags(a.tags)
    posted, refused, sent_at = 0, 0, []
    measure_from = a.seconds // 2
    begin = time.time()
    generate = 0.0
    for second in range(a.seconds):
        if second == measure_from:
            cpu0, t0, refused0, posted0 = cpu_by_thread(daemon.pid), time.time(), refused, posted
        g0 = time.time()
        tags.step()
        lines = tags.sightings(time.time())
        generate += time.time() - g0
        sent_at.append(time.time())
        for k in range(0, len(lines), LINES_PER_BODY):
            body = ("\n".join(lines[k:k + LINES_PER_BODY]) + "\n").encode()
            while True:
                c = UnixConnection(sock)
                c.request("POST", "/v1/sightings", body, {"Content-Type": "application/x-ndjson"})
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 503:
                    refused += 1
                    time.sleep(0.02)
                    continue
                if r.status != 202:
                    raise SystemExit("HTTP %d" % r.status)
                break
        posted += len(lines)
        wait = begin + second + 1 - time.time()
        if wait > 0:
            time.sleep(wait)
    time.sleep(2)
    cpu1, t1 = cpu_by_thread(daemon.pid), time.time()
    rss = rss_mb(daemon.pid)
    streams_dropped = metrics(sock)
    stop.set()
    daemon.terminate()
    daemon.wait()
    wall = t1 - t0
    used = {name: cpu1.get(name, 0) - cpu0.get(name, 0) for name in cpu1}
    total = sum(used.values())
    # From the sightings the position was made of (the last sent before its tick) to the stream
    latencies = sorted(now - sent_at[bisect.bisect_right(sent_at, parse_time(t)) - 1] for now, t in got
                       if parse_time(t) >= t0 and bisect.bisect_right(sent_at, parse_time(t)) > 0)
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else float("nan")
    busy = ", ".join("%s %.1f %%" % (n, 100 * v / wall) for n, v in sorted(used.items(), key=lambda x: -x[1])
                     if v / wall >= 0.005)
    print("warehouse %d tags (80 %% standing) x 6 receivers x 1 adv/s, %s, engine.threads %d: %d sightings in the "
          "last %.0f s (%.0f/s), %d bodies refused (503, the engine behind; each sent again); daemon CPU %.1f %% of one core (%s); RSS %.1f MB; positions "
          "%d, from sighting to stream p50 %.2f s p99 %.2f s (stream clients dropped %d); the feeder's own generation "
          "%.0f ms/s"
          % (a.tags, a.motion, a.threads, posted - posted0, wall, (posted - posted0) / wall, refused - refused0,
             100 * total / wall, busy, rss, len(latencies), pct(0.5), pct(0.99), streams_dropped, 1000 * generate / a.seconds))


if __name__ == "__main__":
    main()
