#!/usr/bin/env python3
"""Live stream under load (issue 4): N Server-Sent-Events clients on beacond's socket while
remote sightings arrive at RATE per second through POST /v1/sightings.

Runs the release daemon (build it first: swift build -c release --product beacond) with a
config in a temporary directory and no system bus, once with 0 stream clients and once with
N, and prints for each: sightings posted and ingested by the engine, POST latency p50/p99,
engine busy time, daemon CPU, and how many events each stream client got of those published.

    python3 bench/sse-load.py [clients=500] [rate=5000] [seconds=10]
"""
import asyncio, json, os, re, subprocess, sys, tempfile, time

from simstore import cpu_seconds

CLIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 500
RATE = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
SECONDS = int(sys.argv[3]) if len(sys.argv) > 3 else 10
UUID = "E2C56DB5DFFB48D2B060D0F5A71096E0"
BEACONS = 200  # distinct beacons in the stream of sightings
TICK = 0.02  # a POST every 20 ms


def config(dir):
    regions = "\n".join(
        f"      - {{id: r{m}, uuid: E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major: {m}, ranging: true}}"
        for m in range(20))
    return f"""gateway: {{id: bench, state_dir: {dir}/state}}
api: {{socket: {dir}/api.sock}}
monitoring: {{enter_sightings: 1, exit_timeout: 30s, ranging_interval: 1s}}
clients:
  - id: app
    regions:
{regions}
"""


def sighting(i, t):
    major, minor = i % BEACONS // 10, i % 10
    payload = f"0215{UUID}{major:04x}{minor:04x}c5"
    return json.dumps({"t": round(t, 3), "receiver": "hci0", "address": f"C3:00:00:00:{major:02X}:{minor:02X}",
                       "rssi": -60 - (i % 20), "manufacturer_data": {"76": payload}})


async def request(sock, method, path, body=b""):
    reader, writer = await asyncio.open_unix_connection(sock)
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest


async def stream_client(sock, counts, index, stop):
    reader, writer = await asyncio.open_unix_connection(sock)
    writer.write(b"GET /v1/events/stream HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    n = 0
    try:
        while not stop.is_set():
            line = await reader.readline()
            if not line:
                break
            if line.startswith(b"id: "):
                n += 1
                counts[index] = n
    except (asyncio.CancelledError, ConnectionError):
        pass
    finally:
        writer.close()


def metric(text, name):
    m = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


async def run(clients):
    dir = tempfile.mkdtemp(prefix="beacond-sse-")
    open(f"{dir}/beacond.yaml", "w").write(config(dir))
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={dir}/no-bus")
    daemon = subprocess.Popen([".build/release/beacond", "--no-print-events", "--config", f"{dir}/beacond.yaml"],
                              env=env, stderr=subprocess.DEVNULL)
    sock = f"{dir}/api.sock"
    for _ in range(200):
        if os.path.exists(sock):
            break
        await asyncio.sleep(0.05)
    counts = [0] * clients
    stop = asyncio.Event()
    tasks = [asyncio.create_task(stream_client(sock, counts, i, stop)) for i in range(clients)]
    await asyncio.sleep(1.0)  # every client connected
    status, body = await request(sock, "GET", "/metrics")
    events_before = sum(float(v) for v in re.findall(r'^beacond_events_total\{[^}]*\} (\S+)$', body.decode(), re.M))
    cpu0 = cpu_seconds(daemon.pid)
    per_tick = int(RATE * TICK)
    posted, latencies = 0, []
    start = time.monotonic()
    next_tick = start
    while time.monotonic() - start < SECONDS:
        lines = "\n".join(sighting(posted + k, time.time()) for k in range(per_tick)).encode()
        t0 = time.monotonic()
        status, _ = await request(sock, "POST", "/v1/sightings", lines)
        latencies.append((time.monotonic() - t0) * 1000)
        if status == 202:
            posted += per_tick
        next_tick += TICK
        await asyncio.sleep(max(0, next_tick - time.monotonic()))
    elapsed = time.monotonic() - start
    await asyncio.sleep(1.5)  # let the last ranging tick reach the clients
    status, body = await request(sock, "GET", "/metrics")
    text = body.decode()
    cpu = cpu_seconds(daemon.pid) - cpu0
    events = sum(float(v) for v in re.findall(r'^beacond_events_total\{[^}]*\} (\S+)$', text, re.M)) - events_before
    ingested = metric(text, "beacond_advertisements_received_total")
    busy = metric(text, "beacond_engine_busy_seconds_total")
    dropped_streams = clients - int(metric(text, "beacond_stream_clients"))
    stop.set()
    daemon.terminate()
    daemon.wait()
    for t in tasks:
        t.cancel()
    latencies.sort()
    got = sorted(counts)
    print(f"stream clients {clients:4d}: posted {posted} sightings in {elapsed:.1f} s ({posted / elapsed:,.0f}/s), "
          f"engine ingested {int(ingested)}; POST p50 {latencies[len(latencies) // 2]:.2f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99)]:.2f} ms; engine busy {busy:.2f} s; daemon CPU {cpu:.2f} s "
          f"({cpu / elapsed * 100:.0f} %); events {int(events)}, per client min {got[0] if got else '-'} "
          f"max {got[-1] if got else '-'}; streams dropped {dropped_streams}")


async def main():
    await run(0)
    await run(CLIENTS)


asyncio.run(main())
