#!/usr/bin/env python3
"""Issue 28's site figures, against a real mosquitto and a release beacond as the locator.

    swift build -c release --product beacond && swift build -c release --package-path Benchmarks --product beacond-site-bench
    python3 bench/site.py ingest [gateways=50] [rate=100000] [seconds=20]
    python3 bench/site.py walk [crossings=12]
    python3 bench/site.py walk-alone [crossings=12]
    python3 bench/site.py rss

ingest: `beacond-site-bench load` plays GATEWAYS gateways (two receivers each) publishing RATE
        sightings/s of 200 iBeacon tags in 250 ms batches; the locator's CPU (utime + stime from
        /proc) and the sightings it took (`/v1/status` site.sightings_received) are read over
        the run, after 3 s of warm-up. Also prints the bytes per sighting on the wire.
walk:   `beacond-site-bench walk` is gateway "gwa" (r1…r4) hearing one tag walked across the
        zone `left` at 1 m/s, 10 adverts/s per receiver, in 250 ms batches like a gateway's;
        the locator publishes `events/zone.*`, the bench subscribes and times each alert.
rss:    the RSS of `beacond --simulate` on config/sim-site.yaml's gw1 after 20 s, with its site
        (broker connected) and with the `site:` section taken out: what the MQTT client and
        the site link add.
"""
import json, os, re, shutil, socket, subprocess, sys, tempfile, time
from simstore import free_port

BEACOND = ".build/release/beacond"
BENCH = "Benchmarks/.build/release/beacond-site-bench"


def broker(d):
    port = free_port()
    with open(f"{d}/mosquitto.conf", "w") as f:
        f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n")
    os.chmod(d, 0o755)
    p = subprocess.Popen(["/usr/sbin/mosquitto", "-c", f"{d}/mosquitto.conf"])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return p, port
        except OSError:
            time.sleep(0.02)
    sys.exit("mosquitto did not start")


def daemon(d, config, simulate=True):
    with open(f"{d}/beacond.yaml", "w") as f:
        f.write(config.replace("STATE", d))
    args = [BEACOND, "--config", f"{d}/beacond.yaml", "--no-print-events"] + (["--simulate"] if simulate else [])
    # No radios of its own unless simulated: a bus that does not exist, as in the tests.
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={d}/no-bus")
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"), env=env)
    for _ in range(500):
        if os.path.exists(f"{d}/api.sock"):
            return p
        time.sleep(0.02)
    sys.exit("beacond did not start: " + open(f"{d}/log").read()[-2000:])


def status(d):
    out = subprocess.run(["curl", "-s", "--unix-socket", f"{d}/api.sock", "http://localhost/v1/status"],
                         capture_output=True, text=True).stdout
    return json.loads(out)


def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss(pid):
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) / 1024


def header(d, port, gateway="loc"):
    return (f"gateway: {{id: {gateway}, state_dir: STATE}}\napi: {{socket: STATE/api.sock}}\n"
            f"site:\n  id: bench\n  mqtt: {{url: \"mqtt://127.0.0.1:{port}\"}}\n  locator_priority: 1000\n")


def ingest(gateways=50, rate=100000, seconds=20.0):
    d = tempfile.mkdtemp(prefix="beacond-site-")
    mq, port = broker(d)
    receivers = "".join(
        f"  - {{id: gw{g}-{s}, gateway: gw{g}, adapter: hci{i}, position: {{x: {g % 10 * 5 + i}, y: {g // 10 * 5}}}}}\n"
        for g in range(1, gateways + 1) for i, s in enumerate("ab"))
    loc = daemon(d, header(d, port) + "receivers:\n" + receivers, simulate=False)
    try:
        load = subprocess.Popen([BENCH, "load", f"mqtt://127.0.0.1:{port}", "bench", str(gateways), str(rate),
                                 str(seconds)], stdout=subprocess.PIPE, text=True)
        time.sleep(3)
        c0, s0, t0 = cpu(loc.pid), status(d)["site"]["sightings_received"], time.monotonic()
        time.sleep(seconds - 5)
        c1, s1, t1 = cpu(loc.pid), status(d)["site"]["sightings_received"], time.monotonic()
        print(load.communicate()[0].strip())
        taken = (s1 - s0) / (t1 - t0)
        share = (c1 - c0) / (t1 - t0)
        site = status(d)["site"]
        print(f"locator took {taken:,.0f} sightings/s using {share * 100:.1f} % of one core "
              f"({(c1 - c0) / max(s1 - s0, 1) * 1e6:.2f} µs of CPU per sighting); batches lost "
              f"{site['batches_lost']}, dropped {site.get('dropped', {})}; RSS {rss(loc.pid):.1f} MB")
    finally:
        loc.terminate()
        loc.wait()
        mq.kill()
        shutil.rmtree(d, ignore_errors=True)


def walk(crossings=12):
    d = tempfile.mkdtemp(prefix="beacond-site-")
    mq, port = broker(d)
    config = header(d, port) + WALK_SITE
    loc = daemon(d, config, simulate=False)
    try:
        out = subprocess.run([BENCH, "walk", f"mqtt://127.0.0.1:{port}", "bench", str(crossings)],
                             capture_output=True, text=True).stdout
        print(out.strip())
    finally:
        loc.terminate()
        loc.wait()
        mq.kill()
        shutil.rmtree(d, ignore_errors=True)


WALK_SITE = """receivers:
  - {id: r1, gateway: gwa, adapter: hci0, position: {x: 0, y: 0}, rssi_at_1m: -59}
  - {id: r2, gateway: gwa, adapter: hci1, position: {x: 10, y: 0}, rssi_at_1m: -59}
  - {id: r3, gateway: gwa, adapter: hci2, position: {x: 10, y: 10}, rssi_at_1m: -59}
  - {id: r4, gateway: gwa, adapter: hci3, position: {x: 0, y: 10}, rssi_at_1m: -59}
assets:
  - {id: cart, beacon: {address: "D0:00:00:00:00:01"}}
zones:
  - {id: left, level: 0, polygon: [[0, 0], [5, 0], [5, 10], [0, 10]]}
alarms:
  - {id: left-watch, zones: [left], on: [enter, exit]}
positioning: {publish_interval: 200ms, min_move: 0}
"""


def walk_alone(crossings=12):
    """The same walk on one gateway with no site, its sightings posted as a local adapter's
    would arrive (at once): how long the engine itself takes to decide, from the true crossing
    to the alert's `time`, to set against the site's figure."""
    import math, urllib.parse
    d = tempfile.mkdtemp(prefix="beacond-site-")
    config = "gateway: {id: alone, state_dir: STATE}\napi: {socket: STATE/api.sock}\n" + WALK_SITE.replace(
        "gateway: gwa, ", "")
    p = daemon(d, config, simulate=False)
    crossings_at, x, direction, start, step = [], 9.0, -1.0, time.monotonic(), 0
    try:
        while len(crossings_at) < crossings:
            step += 1
            t = time.time()
            if time.monotonic() - start > 5:
                before = x
                x += direction * 0.1
                if (before - 5) * (x - 5) <= 0 and before != 5:
                    crossings_at.append(t - abs(x - 5))
                if x <= 1 or x >= 9:
                    direction = -direction
            lines = []
            for rid, rx, ry in (("r1", 0, 0), ("r2", 10, 0), ("r3", 10, 10), ("r4", 0, 10)):
                dist = max(0.5, math.sqrt((x - rx) ** 2 + (5 - ry) ** 2 + 1.44))
                rssi = round(-59 - 20 * math.log10(dist))
                lines.append(json.dumps({"t": t, "receiver": rid, "address": "D0:00:00:00:00:01", "rssi": rssi}))
            subprocess.run(["curl", "-s", "-o", "/dev/null", "--unix-socket", f"{d}/api.sock", "-X", "POST",
                            "--data-binary", "\n".join(lines), "http://localhost/v1/sightings"])
            time.sleep(max(0, start + step * 0.1 - time.monotonic()))
        time.sleep(4)
        out = subprocess.run(["curl", "-s", "--unix-socket", f"{d}/api.sock",
                              "http://localhost/v1/events?limit=1000&type=zone.*"], capture_output=True, text=True).stdout
        from datetime import datetime
        lags = []
        for e in json.loads(out)["events"]:
            made = datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
            before = [c for c in crossings_at if c <= made]
            if before:
                lags.append((made - before[-1]) * 1000)
        lags.sort()
        pick = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))] if lags else float("nan")
        print(f"one gateway, no site: {len(crossings_at)} crossings, {len(lags)} zone alerts; true crossing → "
              f"alert time p50 {pick(0.5):.0f} / p99 {pick(0.99):.0f} ms")
    finally:
        p.terminate()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def rss_added():
    base = open("config/sim-site.yaml").read()
    base = re.sub(r"(?m)^gateway:\n(  .*\n)+", "", base)
    results = {}
    for with_site in (False, True):
        d = tempfile.mkdtemp(prefix="beacond-site-")
        mq, port = broker(d)
        config = base.replace("mqtt://127.0.0.1:1883", f"mqtt://127.0.0.1:{port}")
        if not with_site:
            config = re.sub(r"(?m)^site:\n(  .*\n)+", "", config)
        p = daemon(d, "gateway: {id: gw1, state_dir: STATE}\napi: {socket: STATE/api.sock}\n" + config)
        time.sleep(20)
        results[with_site] = rss(p.pid)
        p.terminate()
        p.wait()
        mq.kill()
        shutil.rmtree(d, ignore_errors=True)
    print(f"gw1 of config/sim-site.yaml --simulate after 20 s: RSS {results[False]:.1f} MB alone, "
          f"{results[True]:.1f} MB in its site: +{results[True] - results[False]:.1f} MB")


mode = sys.argv[1] if len(sys.argv) > 1 else ""
rest = [float(x) for x in sys.argv[2:]]
if mode == "ingest":
    ingest(*(int(x) for x in rest[:2]), *rest[2:3])
elif mode == "walk":
    walk(*(int(x) for x in rest[:1]))
elif mode == "walk-alone":
    walk_alone(*(int(x) for x in rest[:1]))
elif mode == "rss":
    rss_added()
else:
    sys.exit(__doc__)
