"""What the benchmarks share: the simulated store with more tags, a process's memory and CPU
and a directory's size as they sample them, and a GET on the daemon's API socket."""
import os, socket


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User and system time the process has used, in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def api_get(directory, path):
    """The body of GET `path` on the daemon's API socket, `directory`/api.sock."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(f"{directory}/api.sock")
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
    reply = b""
    while chunk := s.recv(65536):
        reply += chunk
    return reply.split(b"\r\n\r\n", 1)[1].decode()


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
