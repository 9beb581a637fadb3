#!/usr/bin/env python3
"""The floor view and the read-only listener under a store of 1,000 moving assets (issue 30).

Runs the release daemon (swift build -c release --product beacond) on a simulated store of
1,000 tags among 12 receivers, each tag's position published every second, with the read-only
TCP listener. Then, for each case, over SECONDS:
  - the daemon's CPU and its listener thread's (beacond-http) CPU, from /proc;
  - with browsers: one real headless browser on the floor view measuring its frame time
    (requestAnimationFrame intervals) — Chromium (Debian chromium, chromium-driver,
    python3-selenium; run with /usr/bin/python3) or Firefox ESR (Debian firefox-esr, driven
    over Marionette by Tests/DaemonTests/Support/marionette.py) — plus BROWSERS-1 clients doing
    what a browser tab does to the listener: the event stream, and /v1/floor every 5 s.

    /usr/bin/python3 bench/floor-view.py [seconds=30] [browsers=10] [tags=1000] [chromium|firefox]
"""
import json, os, subprocess, sys, tempfile, threading, time, urllib.request

SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
BROWSERS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
TAGS = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
BROWSER = sys.argv[4] if len(sys.argv) > 4 else "chromium"
PORT = 9761
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = os.sysconf("SC_CLK_TCK")


def config(d):
    receivers = "\n".join(
        f"  - {{id: rx{i}, position: {{x: {x}, y: {y}}}, rssi_at_1m: -59}}"
        for i, (x, y) in enumerate((x, y) for x in (0, 12, 24, 36) for y in (0, 12, 24)))
    tags = "\n".join(f"  - {{id: tag-{i:04d}, beacon: {{address: \"D0:5E:00:00:{i // 256:02X}:{i % 256:02X}\"}}}}"
                     for i in range(TAGS))
    return f"""gateway: {{id: bench-store, state_dir: {d}/state}}
api: {{socket: {d}/api.sock}}
http: {{listen: "127.0.0.1:{PORT}"}}
receivers:
{receivers}
assets:
{tags}
zones:
  - {{id: west, polygon: [[0, 0], [18, 0], [18, 24], [0, 24]]}}
  - {{id: east, polygon: [[18, 0], [36, 0], [36, 24], [18, 24]]}}
alarms:
  - {{id: traffic, zones: [west, east], on: [enter, exit]}}
positioning: {{floor: [[0, 0], [36, 0], [36, 24], [0, 24]], publish_interval: 1s, min_move: 0, estimator: least_squares}}
history: {{telemetry: {{max_age: 10m}}}}
simulation: {{floor: {{width: 36, depth: 24}}, advertising_hz: 1, packet_loss: 0.1}}
"""


def cpu(pid, thread=None):
    """utime + stime of the process, or of its thread named `thread`, in seconds."""
    paths = [f"/proc/{pid}/stat"]
    if thread:
        paths = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() == thread:
                    paths.append(f"/proc/{pid}/task/{tid}/stat")
    total = 0
    for p in paths:
        with open(p) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / HZ


def tab(stop):
    """What a browser tab does to the listener: the stream, and /v1/floor every 5 s."""
    def stream():
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/events/stream?type=asset.position,zone.*") as r:
            while not stop.is_set():
                if not r.readline():
                    return
    threading.Thread(target=stream, daemon=True).start()
    while not stop.wait(5):
        urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/floor").read()


def browser(seconds):
    if BROWSER == "firefox":
        sys.path.insert(0, os.path.join(ROOT, "Tests/DaemonTests/Support"))
        from marionette import Firefox
        driver = Firefox(width=1600, height=1000)
    else:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
        options = Options()
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1600,1000"):
            options.add_argument(flag)
        options.binary_location = "/usr/bin/chromium"
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(seconds + 30)
        driver.get(f"http://127.0.0.1:{PORT}/")
        deadline = time.time() + 30
        while time.time() < deadline and driver.execute_script("return document.querySelectorAll('#assets li').length") < TAGS * 0.9:
            time.sleep(0.5)
        shown = driver.execute_script("return document.querySelectorAll('#assets li').length")
        frames = driver.execute_async_script("""
            const done = arguments[arguments.length - 1], end = performance.now() + arguments[0] * 1000, gaps = [];
            let last = performance.now();
            function f(t) { gaps.push(t - last); last = t; if (t < end) requestAnimationFrame(f); else done(gaps); }
            requestAnimationFrame(f);""", seconds)
        return shown, sorted(frames)
    finally:
        driver.quit()


def main():
    d = tempfile.mkdtemp(prefix="beacond-floor-bench-")
    with open(f"{d}/beacond.yaml", "w") as f:
        f.write(config(d))
    daemon = subprocess.Popen([f"{ROOT}/.build/release/beacond", "--config", f"{d}/beacond.yaml", "--simulate",
                               "--no-print-events"], stderr=subprocess.DEVNULL,
                              env={"PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={d}/no-bus"})
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/status").read()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(10)  # every tag placed once
        status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/status"))
        print(f"{TAGS} tags, {status['rates']['sightings_per_s']} sightings/s")
        # No browser: the daemon alone.
        c0, h0 = cpu(daemon.pid), cpu(daemon.pid, "beacond-http")
        time.sleep(SECONDS)
        c1, h1 = cpu(daemon.pid), cpu(daemon.pid, "beacond-http")
        print(f"  no browser:   daemon {100 * (c1 - c0) / SECONDS:.1f} % of a core, listener thread {100 * (h1 - h0) / SECONDS:.2f} %")
        stop = threading.Event()
        for _ in range(BROWSERS - 1):
            threading.Thread(target=tab, args=(stop,), daemon=True).start()
        result = {}
        worker = threading.Thread(target=lambda: result.update(zip(("shown", "frames"), browser(SECONDS))))
        worker.start()
        time.sleep(15)  # the page loaded and drawing
        c0, h0 = cpu(daemon.pid), cpu(daemon.pid, "beacond-http")
        t0 = time.time()
        worker.join()
        elapsed = time.time() - t0
        c1, h1 = cpu(daemon.pid), cpu(daemon.pid, "beacond-http")
        stop.set()
        frames = result.get("frames", [])
        pick = lambda q: frames[min(len(frames) - 1, int(q * len(frames)))] if frames else float("nan")
        print(f"  {BROWSERS} browsers: daemon {100 * (c1 - c0) / elapsed:.1f} % of a core, listener thread {100 * (h1 - h0) / elapsed:.2f} %")
        print(f"  floor view in {BROWSER}: {result.get('shown')} markers; {len(frames)} frames in {SECONDS} s, frame time "
              f"p50 {pick(0.5):.1f} ms, p95 {pick(0.95):.1f} ms, max {frames[-1] if frames else float('nan'):.1f} ms")
    finally:
        daemon.terminate()
        daemon.wait()


main()
