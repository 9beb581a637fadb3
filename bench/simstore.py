"""What bench/soak.py and bench/disk-full.py share: the simulated store with more tags, and
a process's memory and a directory's size as they sample them."""
import os, socket


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def free_port():
    """A loopback TCP port nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def dir_kib(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total // 1024


def write_config(directory, tags, extra=""):
    """config/sim-store.yaml with `tags` tags (the file's 23 and more), its state under
    `directory`/state and its API socket at `directory`/api.sock; returns the file's path."""
    config = open("config/sim-store.yaml").read().replace(
        "state_dir: /var/lib/beacond", f"state_dir: {directory}/state")
    more = "".join(f'  - {{id: tag-{n:03d}, beacon: {{address: "D0:5E:00:00:{n >> 8:02X}:{n & 255:02X}"}}}}\n'
                   for n in range(24, tags + 1))
    config = config.replace("zones:\n", more + "zones:\n", 1)
    config += f"api:\n  socket: {directory}/api.sock\n" + extra
    path = f"{directory}/beacond.yaml"
    open(path, "w").write(config)
    return path
