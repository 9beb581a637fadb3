#!/usr/bin/env python3
"""ESPHome Bluetooth proxies at scale (issue 55): the release daemon connected to `proxies`
fake proxies (Tests/DaemonTests/Support/esphome_proxy.py, all in one Python process, each on
its own port) that forward `rate` advertisements a second each, in messages of 10, of 100
iBeacon tags placed as assets. Prints the daemon's CPU over `seconds` (after 10 s of
settling), the advertisements it took (from its /v1/status), and its resident memory; then
the same daemon with no proxies, for the memory a proxy costs.

    python3 bench/esphome.py [binary=.build/release/beacond] [proxies=50] [rate=100] [seconds=30] [--key]

--key: the proxies speak Noise (the API encryption key), as every current ESPHome setup does.
Needs the tools' virtualenv (scripts/python-tools) for aioesphomeapi.
"""
import json, os, shutil, signal, subprocess, sys, tempfile, time

from simstore import api_get, cpu_seconds, rss_kib

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
binary = args[0] if len(args) > 0 else f"{root}/.build/release/beacond"
proxies = int(args[1]) if len(args) > 1 else 50
rate = float(args[2]) if len(args) > 2 else 100
seconds = float(args[3]) if len(args) > 3 else 30
KEY = "px7tsbK3C7bpXHr2OevEV2ZMg/FXNTw2mNOmi4HlrOA=" if "--key" in sys.argv else None
python = os.environ.get("BEACOND_TOOLS_VENV", f"{root}/.build/tools-venv") + "/bin/python"
UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"


def config(directory, ports):
    lines = [
        f"gateway: {{id: bench, state_dir: {directory}/state}}",
        f"api: {{socket: {directory}/api.sock}}",
        "receivers:",
    ]
    for i in range(max(len(ports), 4)):
        lines.append(f"  - {{id: esp-{i}, position: {{x: {(i % 10) * 4}, y: {(i // 10) * 4}}}, rssi_at_1m: -59}}")
    lines.append("assets:")
    for t in range(1, 101):
        lines.append(f"  - {{id: tag-{t}, beacon: {{uuid: {UUID}, major: 1, minor: {t}}}}}")
    lines.append("clients:\n  - id: app\n    regions:\n      - {id: store, uuid: " + UUID + "}")
    if ports:
        lines.append("esphome:")
        secret = f", encryption_key: \"{KEY}\"" if KEY else ""
        for i, port in enumerate(ports):
            lines.append(f"  - {{receiver: esp-{i}, host: 127.0.0.1, port: {port}{secret}}}")
    path = f"{directory}/beacond.yaml"
    open(path, "w").write("\n".join(lines) + "\n")
    return path


def run(count):
    directory = tempfile.mkdtemp(prefix="beacond-esphome-", dir="/var/tmp")
    fake = None
    ports = []
    if count:
        adverts = f"{directory}/adverts.jsonl"
        with open(adverts, "w") as f:
            for t in range(1, 101):
                data = "0201061aff4c000215" + UUID.replace("-", "").lower() + f"0001{t:04x}c5"
                f.write(json.dumps({"address": f"C3:00:00:00:00:{t:02X}", "rssi": -60 - t % 20, "address_type": 1,
                                    "data": data}) + "\n")
        command = [python, f"{root}/Tests/DaemonTests/Support/esphome_proxy.py", "--port-file", f"{directory}/ports",
                   "--log", f"{directory}/proxy.jsonl", "--adverts", adverts, "--count", str(count),
                   "--batch", "10", "--rate", str(rate / 10)]
        if KEY:
            command += ["--key", KEY]
        fake = subprocess.Popen(command)
        for _ in range(200):
            if os.path.exists(f"{directory}/ports"):
                break
            time.sleep(0.05)
        ports = [int(p) for p in open(f"{directory}/ports").read().split()]
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={directory}/no-bus")
    daemon = subprocess.Popen([binary, "--config", config(directory, ports), "--no-print-events"], env=env,
                              stdout=subprocess.DEVNULL, stderr=open(f"{directory}/daemon.log", "w"))
    try:
        for _ in range(400):
            try:
                status = json.loads(api_get(directory, "/v1/status"))
                if sum(p["connected"] for p in status["esphome"]) == count:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        time.sleep(10)
        taken = lambda: sum(p["advertisements"] for p in json.loads(api_get(directory, "/v1/status"))["esphome"])
        cpu0, n0, t0 = cpu_seconds(daemon.pid), taken(), time.time()
        time.sleep(seconds)
        cpu1, n1, t1 = cpu_seconds(daemon.pid), taken(), time.time()
        connected = sum(p["connected"] for p in json.loads(api_get(directory, "/v1/status"))["esphome"])
        return {"cpu": 100 * (cpu1 - cpu0) / (t1 - t0), "per_s": (n1 - n0) / (t1 - t0), "rss": rss_kib(daemon.pid) / 1024,
                "connected": connected}
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait()
        if fake:
            fake.kill()
            fake.wait()
        shutil.rmtree(directory, ignore_errors=True)


loaded = run(proxies)
idle = run(0)
print(f"{proxies} proxies x {rate:g} advertisements/s{' (Noise)' if KEY else ''}, {seconds:g} s: "
      f"{loaded['connected']} connected, {loaded['per_s']:.0f} advertisements/s taken, "
      f"daemon CPU {loaded['cpu']:.1f} % of a core, RSS {loaded['rss']:.1f} MB "
      f"(without proxies {idle['rss']:.1f} MB, CPU {idle['cpu']:.1f} %: "
      f"{1024 * (loaded['rss'] - idle['rss']) / max(proxies, 1):.0f} kB a proxy)")
