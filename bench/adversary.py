#!/usr/bin/env python3
"""What issue 38's adversarial test did to the read-only listener and to a site, done again
against the release build, with the daemon's memory and answer times measured meanwhile.

    python3 bench/adversary.py listener [binary=.build/release/beacond]
        The simulated store with a token on its listener; 1,024 idle connections without the
        token from 16 loopback addresses (127.0.0.2-17), then 200 more from one of them; then
        30 scrapes of /metrics with the token, one a second. Prints the scrapes' answer times,
        the daemon's RSS before and after, and its refusal counters.

    python3 bench/adversary.py unread [binary=.build/release/beacond]
        The simulated store with a 12 MiB floor plan and a token on its listener; 100 clients
        ask for the plan and never read it, then 200 open the event stream and never read it,
        for 20 s. Prints the daemon's RSS before and after, how many were answered 503, and
        the streams dropped.

    python3 bench/adversary.py site [binary=.build/release/beacond]
        gw1 of config/sim-site.yaml on a private mosquitto; a 100 MiB message on
        sightings/gw2, then 5,000 `online`s on homeassistant/status. Prints the peak RSS
        before and after, and the log lines the `online`s wrote.
"""
import os, socket, subprocess, sys, tempfile, time
from simstore import free_port, write_config

mode = sys.argv[1] if len(sys.argv) > 1 else "listener"
binary = sys.argv[2] if len(sys.argv) > 2 else ".build/release/beacond"
TOKEN = "bench-token-of-the-store"


def status_kib(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def get(port, path, token=None, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def wait_for(port, token):
    for _ in range(200):
        try:
            if get(port, "/metrics", token)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise SystemExit("the listener never answered")


def store_with_listener(edit=lambda d, text: text):
    """The simulated store with a token on its listener (`edit` may change its config), with
    descriptors enough for the clients; its directory, port and process."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    d = tempfile.mkdtemp(prefix="beacond-adversary-")
    open(f"{d}/http.token", "w").write(TOKEN + "\n")
    port = free_port()
    config = write_config(d, 20, f"http: {{listen: \"127.0.0.1:{port}\", token_file: {d}/http.token}}\n")
    text = edit(d, open(config).read())
    open(config, "w").write(text)
    daemon = subprocess.Popen([binary, "--config", config, "--simulate", "--no-print-events"],
                              stdout=subprocess.DEVNULL, stderr=open(f"{d}/log", "w"))
    return d, port, daemon


def listener():
    d, port, daemon = store_with_listener()
    try:
        wait_for(port, TOKEN)
        time.sleep(2)
        before = status_kib(daemon.pid, "VmRSS")
        held = []
        for a in range(2, 18):
            for _ in range(64):
                s = socket.socket()
                s.bind((f"127.0.0.{a}", 0))
                s.connect(("127.0.0.1", port))
                held.append(s)
        for _ in range(200):
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", port))
            held.append(s)
        times = []
        for _ in range(30):
            t0 = time.perf_counter()
            status, _ = get(port, "/metrics", TOKEN)
            times.append(((time.perf_counter() - t0) * 1000, status))
            time.sleep(1)
        after = status_kib(daemon.pid, "VmRSS")
        peak = status_kib(daemon.pid, "VmHWM")
        _, metrics = get(port, "/metrics", TOKEN)
        ok = sorted(t for t, s in times if s == 200)
        print(f"scrapes with the token: {len(ok)} of {len(times)} answered 200; "
              f"p50 {ok[len(ok) // 2]:.2f} ms, max {ok[-1]:.2f} ms" if ok else "no scrape answered")
        print(f"RSS {before / 1024:.1f} MB before, {after / 1024:.1f} MB with 1,224 connections held "
              f"(peak {peak / 1024:.1f} MB)")
        for line in metrics.splitlines():
            if line.startswith("beacond_http_"):
                print(line)
        for s in held:
            s.close()
    finally:
        daemon.terminate()
        daemon.wait()


def unread():
    def with_plan(d, text):
        # A PNG header and 12 MiB after it: what the daemon serves is the file as it is.
        with open(f"{d}/plan.png", "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + os.urandom(12 << 20))
        return text.replace(
            "positioning:\n", f"positioning:\n  floor_image: {{file: {d}/plan.png, scale: 20, origin: [0, 0]}}\n", 1)

    d, port, daemon = store_with_listener(with_plan)
    try:
        wait_for(port, TOKEN)
        time.sleep(2)
        before = status_kib(daemon.pid, "VmRSS")
        held = []
        def ask(path):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.bind((f"127.0.0.{2 + len(held) // 60}", 0))
            s.connect(("127.0.0.1", port))
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
            held.append(s)
        for _ in range(100):
            ask("/v1/floor/image")
        for _ in range(200):
            ask("/v1/events/stream")
        time.sleep(20)
        after = status_kib(daemon.pid, "VmRSS")
        peak = status_kib(daemon.pid, "VmHWM")
        status, metrics = get(port, "/metrics", TOKEN)
        print(f"RSS {before / 1024:.1f} MB before, {after / 1024:.1f} MB after 20 s (peak {peak / 1024:.1f} MB); "
              f"/metrics answered {status}")
        for line in metrics.splitlines():
            if "output_budget" in line or line.startswith("beacond_stream_clients"):
                print(line)
        for s in held:
            s.close()
    finally:
        daemon.terminate()
        daemon.wait()


def site():
    d = tempfile.mkdtemp(prefix="beacond-adversary-")
    port = free_port()
    open(f"{d}/mosquitto.conf", "w").write(
        f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n")
    broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", f"{d}/mosquitto.conf"])
    time.sleep(0.3)
    config = open("config/sim-site.yaml").read() \
        .replace("state_dir: /var/lib/beacond", f"state_dir: {d}/state") \
        .replace("mqtt://127.0.0.1:1883", f"mqtt://127.0.0.1:{port}") \
        .replace("  locator_priority: 100\n", "  locator_priority: 100\n  home_assistant: {discovery_prefix: homeassistant}\n")
    config += f"api:\n  socket: {d}/api.sock\n"
    open(f"{d}/gw1.yaml", "w").write(config)
    log = open(f"{d}/log", "w")
    daemon = subprocess.Popen([binary, "--config", f"{d}/gw1.yaml", "--simulate", "--no-print-events"],
                              stdout=subprocess.DEVNULL, stderr=log)
    try:
        time.sleep(5)
        before = status_kib(daemon.pid, "VmHWM")
        flood = f"{d}/flood"
        with open(flood, "wb") as f:
            f.write(b"{" * (100 << 20))
        subprocess.run(["mosquitto_pub", "-p", str(port), "-t", "beacond/sim-store/sightings/gw2", "-f", flood],
                       check=True)
        time.sleep(3)
        after = status_kib(daemon.pid, "VmHWM")
        print(f"peak RSS {before / 1024:.1f} MB before a 100 MiB message, {after / 1024:.1f} MB after")
        pub = subprocess.Popen(["mosquitto_pub", "-p", str(port), "-t", "homeassistant/status", "-l"],
                               stdin=subprocess.PIPE)
        pub.communicate(b"online\n" * 5000)
        time.sleep(3)
        lines = sum(1 for line in open(f"{d}/log") if "home_assistant_online" in line)
        print(f"5,000 homeassistant/status online: {lines} log lines")
    finally:
        daemon.terminate()
        daemon.wait()
        broker.terminate()
        broker.wait()


{"listener": listener, "unread": unread, "site": site}[mode]()
