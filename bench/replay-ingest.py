#!/usr/bin/env python3
"""Sighting records at the engine's speed (issue 27): `beacond replay` of a 1,000,000-line
trace (10,000 iBeacons heard by 4 receivers, 50 clients x 20 regions), in CPU seconds and
peak RSS, beside Home Assistant's `ibeacon-ble` parsing the same lines and beside the engine
alone (`beacond-bench`).

    swift build -c release --product beacond && swift build -c release --package-path Benchmarks --product beacond-bench
    python3 -m venv /tmp/habench && /tmp/habench/bin/pip install ibeacon-ble==1.2.0   # optional
    python3 bench/replay-ingest.py [--lines 1000000] [--runs 7] [--ha /tmp/habench/bin/python] [--build DIR]
"""
import argparse, json, os, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = 1763805600.0
UUIDS = ["e2c56db5dffb48d2b060d0f5a71096e0", "f7826da64fa24e988024bc5b71e0893e", "b9407f30f5f8466eaff925556b57fe6d",
         "74278bdab64445208f0c720eaf059935", "fda50693a4e24fb1afcfc6eb07647825", "a495bb10c5b14b44b5121370f02d74de",
         "2f234454cf6d4a0fadf2f4911ba9ffa6", "8deefbb9f7384297804096668bb44281", "d546df97475747efbe093e2dcbdd0c77",
         "e20a39f473f54bc4a12f17d1ad07a961"]


def write_inputs(directory, lines):
    trace = os.path.join(directory, "trace.jsonl")
    config = os.path.join(directory, "beacond.yaml")
    with open(config, "w") as f:
        f.write("gateway: {id: bench, state_dir: %s/state}\napi: {socket: %s/api.sock}\nclients:\n" % (directory, directory))
        for c in range(50):
            f.write("  - id: app%d\n    regions:\n" % c)
            for r in range(20):
                u = UUIDS[(c + r) % 10]
                dashed = "-".join([u[:8], u[8:12], u[12:16], u[16:20], u[20:]]).upper()
                f.write("      - {id: r%d, uuid: %s, major: %d}\n" % (r, dashed, (c * 20 + r) % 100))
    if os.path.exists(trace) and sum(1 for _ in open(trace)) == lines:
        return trace, config  # the same trace as the last run in this directory
    with open(trace, "w") as f:
        for n in range(lines):
            i = n % 10000
            payload = "0215" + UUIDS[i % 10] + "%04x%04x" % (i // 100, i % 100) + "c5"
            f.write(json.dumps({"t": round(T0 + n / 10000, 4), "receiver": "hci%d" % (n % 4),
                                "address": "C3:11:%02X:%02X:00:%02X" % (i // 256, i % 256, n % 4),
                                "rssi": -50 - (i * 7 + n // 10000 * 13) % 40,
                                "manufacturer_data": {"76": payload}}, separators=(",", ":")) + "\n")
    return trace, config


BUILD = os.path.join(ROOT, ".build/release")


def replay(trace, config):
    binary = os.path.join(BUILD, "beacond")
    start = time.monotonic()
    # /usr/bin/time for this child's own peak RSS (RUSAGE_CHILDREN keeps the largest child's).
    out = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", binary, "replay", "--config", config, trace, "--summary"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    wall = time.monotonic() - start
    lines = out.stderr.strip().splitlines()
    user, system, rss = lines[-1].split()
    return float(user) + float(system), wall, int(rss) / 1024, lines[-2]


HA = r'''
import asyncio, json, sys, time
from home_assistant_bluetooth import BluetoothServiceInfo
from ibeacon_ble import iBeaconParser
parser = iBeaconParser()
asyncio.run(parser.async_setup())  # the vendor table, as Home Assistant loads it at start
lines = open(sys.argv[1]).readlines()[:int(sys.argv[2])]
start = time.process_time()
found = 0
for line in lines:
    r = json.loads(line)
    info = BluetoothServiceInfo(r.get("name") or "", r["address"], r["rssi"],
        {int(k): bytes.fromhex(v) for k, v in r.get("manufacturer_data", {}).items()},
        {k: bytes.fromhex(v) for k, v in r.get("service_data", {}).items()}, [], r["receiver"])
    if parser.parse(info) is not None:
        found += 1
cpu = time.process_time() - start
print(len(lines) / cpu, found)
'''


def home_assistant(python, trace, lines):
    out = subprocess.run([python, "-c", HA, trace, str(lines)], capture_output=True, text=True, check=True)
    rate, found = out.stdout.split()
    return float(rate), int(found)


def engine_alone(trace, config):
    # The benchmarks' own package (Benchmarks/); a tree from before it kept them with beacond.
    binary = os.path.join(BUILD, "beacond-bench")
    if not os.path.exists(binary):
        binary = os.path.join(ROOT, "Benchmarks/.build/release/beacond-bench")
    out = subprocess.run([binary, "--trace", trace, "--config", config], capture_output=True, text=True, check=True)
    line = out.stdout.strip()
    return float(line.split(" in ")[1].split(" CPU-s")[0]), float(line.split("reader alone took ")[1].split(" CPU-s")[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--ha", default="/tmp/habench/bin/python")
    p.add_argument("--dir", default=None)
    p.add_argument("--build", default=BUILD, help="the release build to measure (another commit's, to compare)")
    a = p.parse_args()
    globals()["BUILD"] = a.build
    directory = a.dir or tempfile.mkdtemp(prefix="beacond-replay-bench-")
    trace, config = write_inputs(directory, a.lines)
    print("trace: %d lines, %.0f MB (%s)" % (a.lines, os.path.getsize(trace) / 1e6, trace))
    # Alternately, so that both see the same machine (a shared VM's speed drifts by 2x).
    replays, engines, readers = [], [], []
    for run in range(a.runs):
        cpu, wall, rss, summary = replay(trace, config)
        replays.append(cpu)
        engine, reader = engine_alone(trace, config)
        engines.append(engine)
        readers.append(reader)
        print("run %d: beacond replay %.2f CPU-s (%.2f s wall, peak RSS %.1f MB; %s); engine alone %.2f CPU-s; "
              "the reader alone %.2f CPU-s" % (run + 1, cpu, wall, rss, summary, engine, reader))
    best, engine = min(replays), min(engines)
    print("beacond replay, best of %d: %.2f CPU-s = %.0f sightings per CPU-second" % (a.runs, best, a.lines / best))
    print("engine alone on the same sightings, best of %d: %.2f CPU-s = %.0f per CPU-second; reading the lines "
          "costs the rest, %.2f CPU-s" % (a.runs, engine, a.lines / engine, best - engine))
    print("the reader alone (lines to sightings, dropped), best of %d: %.2f CPU-s" % (a.runs, min(readers)))
    if os.path.exists(a.ha):
        rate, found = home_assistant(a.ha, trace, min(a.lines, 200_000))
        print("Home Assistant ibeacon-ble (json.loads + BluetoothServiceInfo + iBeaconParser.parse): "
              "%.0f lines per CPU-second (%d iBeacons found)" % (rate, found))
    else:
        print("Home Assistant ibeacon-ble: not installed at %s (see the docstring)" % a.ha)


if __name__ == "__main__":
    main()
