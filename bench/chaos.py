#!/usr/bin/env python3
"""A fleet's bad week in minutes: the live daemon on the simulated store (config/sim-store.yaml,
zone alerts to a webhook), with five iBeacon regions whose beacons another gateway relays
through `POST /v1/sightings` as they come and go at random, while, at random every few seconds, the webhook's receiver answers
500, hangs, or is down (connection refused), and the daemon is reloaded (SIGHUP), stopped
(SIGTERM) and started again, or killed (`kill -9`) and started again. At the end the receiver
comes back, the outbox drains, and the run checks what an operator is promised:

- every zone and region alert in the history reached the receiver (none lost);
- in the history's order (the first delivery of each);
- twice only where a crash or a cut request allows it (at-least-once; counted);
- per asset and zone, and per region, enters and exits alternate across every restart (no
  doubled alert);
- no dead letters, nothing held, no daemon exit other than the ones the run caused.

    python3 bench/chaos.py [binary=.build/release/beacond] [minutes=10] [seed=1] [disk]

With `disk` (root: it mounts a 64 MB tmpfs as the state directory), the state directory's
filesystem is also filled to the last byte and given room again, at random like the rest, and
the daemon is also "rebooted": killed (`kill -9`) with its runtime directory emptied, as a power
cut empties `/run`, and started again (what the disk held is then in the state directory's
reserve only).

Exits 1 when a promise is broken, and prints what broke.
"""
import http.server, json, os, random, shutil, signal, socket, subprocess, sys, tempfile, threading, time
import urllib.parse
from simstore import write_config

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond"
minutes = float(sys.argv[2]) if len(sys.argv) > 2 else 10
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rng = random.Random(seed)
disk = len(sys.argv) > 4 and sys.argv[4] == "disk"


class Receiver:
    """An HTTP receiver whose behaviour the run switches: ok, 500, hang (drops the request
    unanswered after 40 s) or down (its port closed, its open connections cut)."""

    def __init__(self):
        self.mode = "ok"
        self.lock = threading.Lock()
        self.accepted = []  # event ids of 2xx answers, in order
        self.requests = 0
        self.server = None
        self.connections = set()  # open keep-alive connections, cut when it goes down
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.up()

    def handler(receiver):
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                mode = receiver.mode
                with receiver.lock:
                    receiver.requests += 1
                if mode == "hang":
                    # Hangs, then drops the connection unanswered: nothing was accepted.
                    time.sleep(40)
                    self.close_connection = True
                    return
                status = 500 if mode == "500" else 200
                if status == 200:
                    with receiver.lock:
                        receiver.accepted += [e["id"] for e in json.loads(body)]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def setup(self):
                super().setup()
                with receiver.lock:
                    receiver.connections.add(self.connection)

            def finish(self):
                with receiver.lock:
                    receiver.connections.discard(self.connection)
                super().finish()

            def log_message(self, *a):
                pass

        return Handler

    def up(self):
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def set(self, mode):
        if mode == "down" and self.mode != "down":
            self.server.shutdown()
            self.server.server_close()
            with self.lock:
                for connection in self.connections:
                    try:
                        connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
        if mode != "down" and self.mode == "down":
            self.up()
        self.mode = mode


def api(d, path):
    out = subprocess.run(["curl", "-s", "--max-time", "5", "--unix-socket", f"{d}/api.sock", f"http://localhost{path}"],
                         capture_output=True, text=True).stdout
    return json.loads(out) if out.startswith("{") else None


def history(d):
    events, after = [], ""
    while True:
        page = api(d, f"/v1/events?type=zone.*,region.*&limit=1000" + (f"&after={urllib.parse.quote(after)}" if after else ""))
        events += page["events"]
        if not page.get("next"):
            return events
        after = page["next"]


d = tempfile.mkdtemp(prefix="beacond-chaos-")
if disk:
    os.makedirs(f"{d}/state")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", f"{d}/state"], check=True)


def fill(full):
    filler = f"{d}/state/filler"
    if full:
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)
    elif os.path.exists(filler):
        os.remove(filler)
receiver = Receiver()
# Five iBeacon regions, their beacons relayed through POST /v1/sightings by another gateway
# (a thread below) that hears each come and go at random.
UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
regions = "".join(f"      - {{id: r{m}, uuid: {UUID}, major: {m}}}\n" for m in range(1, 6))
base = write_config(d, 20, "clients:\n  - id: app\n    regions:\n" + regions + "webhooks:\n"
                    f"  - {{id: wms, url: 'http://127.0.0.1:{receiver.port}/hook', events: ['zone.*', 'region.*'], "
                    "max_age: 1h, batch: {max_delay: 0s}}\n")
config_text = open(base).read().replace("exit_timeout: 30s", "exit_timeout: 5s")
open(base, "w").write(config_text)
present = set()
stop_relay = threading.Event()


def relay():
    """Every half second, one sighting of each beacon present; each comes or goes at random."""
    relay_rng = random.Random(seed + 1)
    payload = lambda major: "0215" + UUID.replace("-", "").lower() + f"{major:04x}0001c5"
    while not stop_relay.is_set():
        for major in range(1, 6):
            if relay_rng.random() < 0.03:
                present.symmetric_difference_update({major})
        body = "".join(json.dumps({"t": round(time.time(), 3), "receiver": "relay-1",
                                   "address": f"C3:11:22:33:44:{major:02X}", "rssi": -60,
                                   "manufacturer_data": {"76": payload(major)}}) + "\n" for major in sorted(present))
        if body:
            subprocess.run(["curl", "-s", "--max-time", "2", "--unix-socket", f"{d}/api.sock", "--data-binary", body,
                            "http://localhost/v1/sightings"], capture_output=True)
        stop_relay.wait(0.5)


def start():
    return subprocess.Popen([binary, "--config", f"{d}/beacond.yaml", "--simulate", "--seed", str(rng.randrange(1 << 30)),
                             "--no-print-events"], stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "a"))


def wait_for_socket():
    for _ in range(200):
        if api(d, "/v1/status"):
            return
        time.sleep(0.05)
    sys.exit(f"the daemon did not answer; log in {d}/log")


daemon = start()
wait_for_socket()
threading.Thread(target=relay, daemon=True).start()
faults = ["sighup", "sigterm", "kill9", "500", "hang", "down", "ok", "ok"] + (["full", "room", "reboot"] if disk else [])
counts = {f: 0 for f in faults}
unexpected_exits = []
end = time.time() + minutes * 60
while time.time() < end:
    time.sleep(rng.uniform(3, 12))
    if daemon.poll() is not None:
        unexpected_exits.append(daemon.returncode)
        daemon = start()
        wait_for_socket()
    fault = rng.choice(faults)
    counts[fault] += 1
    if fault in ("full", "room"):
        fill(fault == "full")
    elif fault in ("500", "hang", "down", "ok"):
        receiver.set(fault)
    elif fault == "sighup":
        # A change the reload applies: the position publishing interval, alternately.
        interval = rng.choice(["1s", "2s"])
        open(f"{d}/beacond.yaml", "w").write(config_text.replace("publish_interval: 2s", f"publish_interval: {interval}"))
        daemon.send_signal(signal.SIGHUP)
    else:
        if fault == "sigterm":
            daemon.terminate()
            code = daemon.wait(timeout=15)
            if code != 0:
                unexpected_exits.append(code)
        else:
            daemon.kill()
            daemon.wait()
            if fault == "reboot":
                shutil.rmtree(f"{d}/unsaved", ignore_errors=True)
        daemon = start()
        wait_for_socket()
    print(f"{time.strftime('%H:%M:%S')} {fault:7s} receiver={receiver.mode:4s} delivered={len(receiver.accepted)}",
          flush=True)

stop_relay.set()
# The receiver comes back, the disk has room; the outbox drains (backoff is at most what the
# last fault allowed).
receiver.set("ok")
fill(False)
drained = False
for _ in range(400):
    status = api(d, "/v1/status")
    if status and status["outbox"]["pending"] == 0 and status["counts"]["events_held"] == 0:
        drained = True
        break
    time.sleep(1)
status = api(d, "/v1/status")
events = history(d)
daemon.terminate()
final_exit = daemon.wait(timeout=15)
if disk:
    subprocess.run(["umount", "-l", f"{d}/state"])

ids = [e["id"] for e in events]
delivered = set(receiver.accepted)
lost = [i for i in ids if i not in delivered]
first = []
seen = set()
for i in receiver.accepted:
    if i not in seen:
        seen.add(i)
        first.append(i)
order = [i for i in first if i in set(ids)]
in_order = order == [i for i in ids if i in seen]
twice = len(receiver.accepted) - len(seen)
doubled = []
last = {}
for e in events:
    data = e["data"]
    key = (data["asset"], data["zone"]) if e["type"].startswith("beacond.zone.") else (data["client"], data["region"])
    kind = e["type"].split(".")[-1]
    if kind not in ("enter", "exit"):
        continue
    if last.get(key) == kind:
        doubled.append((key, kind, e["time"]))
    last[key] = kind

print(f"\n{minutes:g} min, seed {seed}: faults {counts}")
regions_seen = sum(e["type"] in ("beacond.region.enter", "beacond.region.exit") for e in events)
print(f"alerts in the history: {len(ids)} ({regions_seen} region enters and exits); delivered: {len(seen)} distinct, {twice} again; "
      f"requests {receiver.requests}")
print(f"lost: {len(lost)}; in order: {in_order}; doubled enters/exits: {len(doubled)}; "
      f"dead letters: {status['outbox']['dead_letters']}; held: {status['counts']['events_held']}; "
      f"drained: {drained}; unexpected exits: {unexpected_exits}; final exit: {final_exit}")
broken = lost or not in_order or doubled or status["outbox"]["dead_letters"] or not drained or unexpected_exits \
    or final_exit != 0
if broken:
    print("BROKEN:", {"lost": lost[:10], "doubled": doubled[:10]}, f"state in {d}")
    sys.exit(1)
print("every promise kept")
