#!/usr/bin/env python3
"""The API under every hold a reader can put on it at once (issue 25): the live daemon on
the simulated store with a 100,000-event history, while
  - 2,000 idle connections (20 users other than root, 100 each),
  - 200 slow senders (2 users, 100 each: a PUT head and 1 MiB - 1 of its 1 MiB body, then
    nothing), and
  - 8 event streams resumed from the first event of the history and never read
are held together. Measured: the daemon's resident memory, the latency of GET /v1/status
as root, and how late the engine's asset positions reach a root client reading the live
stream (arrival less the event's `time`: an engine turn held up by the API shows there).

The slow senders are in the admin group (nogroup here): a reader's PUT is refused on its
head with a 403 before any body is read, so only an admin can make the daemon hold bodies
at all; the run also sends 100 such readers' PUTs and counts the 403s.

    sudo python3 bench/hostile-readers.py [binary=.build/release/beacond] [hold=20]

Needs root (the attackers run as other users through setresuid, as real readers would).
The connection limits are the daemon's own (docs/api.md); refusals are read from /metrics.
"""
import datetime, json, os, socket, sqlite3, subprocess, sys, tempfile, threading, time
from simstore import rss_kib, write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 20
HISTORY = 100_000


def request(path, sock_path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock_path)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def sample(sock_path, pid, seconds, rate=10):
    """Status latencies (ms) and RSS (kB) over `seconds`."""
    latencies, rss = [], []
    end = time.time() + seconds
    while time.time() < end:
        t0 = time.perf_counter()
        try:
            request("/v1/status", sock_path)
        except OSError:
            pass  # no answer within 5 s: counted as the time waited
        latencies.append((time.perf_counter() - t0) * 1000)
        rss.append(rss_kib(pid))
        time.sleep(max(0, 1 / rate - (time.perf_counter() - t0)))
    return latencies, rss


class LiveDelays(threading.Thread):
    """A root client reading the live stream of asset positions: for each, how long after
    its `time` it arrived (ms), tagged with the phase of the run it arrived in."""

    def __init__(self, sock_path):
        super().__init__(daemon=True)
        self.sock_path, self.phase, self.delays = sock_path, "settle", {}

    def run(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.sock_path)
        s.sendall(b"GET /v1/events/stream?type=asset.position HTTP/1.1\r\nHost: x\r\n\r\n")
        buffer = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        stamp = json.loads(line[6:])["time"].replace("Z", "+00:00")
                        sent = datetime.datetime.fromisoformat(stamp).timestamp()
                        self.delays.setdefault(self.phase, []).append((time.time() - sent) * 1000)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def attacker(uid, sock_path, kind, count, first_id, gid=None):
    """A child process as `uid` holding `count` connections of one kind until killed."""
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setgroups([])
        gid = uid if gid is None else gid
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        held = []
        body = b"x" * ((1 << 20) - 1)
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock_path)
            if kind == "reader-put":
                s.sendall(b"PUT /v1/clients/app/regions/r HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
            elif kind == "slow":
                s.sendall(b"PUT /v1/clients/app/regions/r HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
                s.setblocking(False)
                try:
                    s.send(body)
                except BlockingIOError:
                    pass
            elif kind == "stream":
                s.sendall(f"GET /v1/events/stream?after={first_id} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            held.append(s)
        time.sleep(3600)
    finally:
        os._exit(0)


def metrics_text(sock_path):
    """/metrics, or empty text when it does not answer within 5 s."""
    try:
        return request("/metrics", sock_path)[1].decode()
    except OSError:
        return ""


def metric(text, name):
    out = {}
    for line in text.splitlines():
        if line.startswith(name):
            key, _, value = line.rpartition(" ")
            out[key[len(name):]] = float(value)
    return out


d = tempfile.mkdtemp(prefix="beacond-hostile-")
os.chmod(d, 0o755)
write_config(d, 20, "  admin_group: nogroup\n")
sock = f"{d}/api.sock"
args = [binary, "--config", f"{d}/beacond.yaml", "--simulate", "--no-print-events"]


def start():
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "a"))
    for _ in range(200):
        try:
            if request("/v1/status", sock)[0] == 200:
                return p
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit(f"beacond did not answer; log in {d}/log")


daemon = start()
daemon.terminate()
daemon.wait()
db = sqlite3.connect(f"{d}/state/beacond.sqlite")
body = '{"specversion":"1.0","type":"beacond.asset.position","data":"' + "x" * 3000 + '"}'
db.executemany("INSERT INTO event (id, type, time_ns, body) VALUES (?, ?, ?, ?)",
               (("%020d" % i, "beacond.asset.position", i, body) for i in range(1, HISTORY + 1)))
db.commit()
db.close()
first_id = "%020d" % 1
daemon = start()
os.chmod(sock, 0o666)
children = []
live = LiveDelays(sock)
live.start()
try:
    time.sleep(5)  # the simulated store settles
    live.phase = "baseline"
    base_lat, base_rss = sample(sock, daemon.pid, hold)
    live.phase = "connecting"
    for u in range(20):
        children.append(attacker(61000 + u, sock, "idle", 100, first_id))
    for u in range(2):
        children.append(attacker(62000 + u, sock, "slow", 100, first_id, gid=65534))
    children.append(attacker(63000, sock, "stream", 8, first_id))
    children.append(attacker(64000, sock, "reader-put", 100, first_id))
    time.sleep(3)  # every connection made
    text = metrics_text(sock)
    connections = metric(text, "beacond_api_connections")
    buffered = metric(text, "beacond_api_buffered_request_bytes")
    live.phase = "held"
    lat, rss = sample(sock, daemon.pid, hold)
    text = metrics_text(sock)
finally:
    for c in children:
        os.kill(c, 9)
        os.waitpid(c, 0)
    daemon.terminate()
    daemon.wait()

def delays(phase):
    values = live.delays.get(phase, [0])
    return f"positions' delay p50 {percentile(values, .5):6.1f} ms p99 {percentile(values, .99):6.1f} ms max {max(values):6.1f} ms ({len(values)})"


print(f"history: {HISTORY} events; held: 2,000 idle, 200 slow senders (admins), 8 resumed streams, "
      f"100 readers' PUTs ({int(sum(connections.values()))} connections open in the daemon)")
print(f"baseline  RSS max {max(base_rss) / 1024:5.1f} MB   status p50 {percentile(base_lat, .5):5.2f} ms "
      f"p99 {percentile(base_lat, .99):5.2f} ms   {delays('baseline')}")
print(f"held      RSS max {max(rss) / 1024:5.1f} MB   status p50 {percentile(lat, .5):5.2f} ms "
      f"p99 {percentile(lat, .99):5.2f} ms   {delays('held')}")
print(f"request bodies held: {int(sum(buffered.values())) / 1048576:.1f} MiB (budget 16 MiB)")
for key, value in sorted(metric(text, "beacond_api_refused_total").items()):
    if value:
        print(f"refused {key}: {int(value)}")
