#!/usr/bin/env python3
"""D-Bus ingest benchmark: beacond's scanner + engine against a dbus-fast receiver, on one
private bus, fed the same stream of PropertiesChanged signals by bluez-emitter.

Two modes per receiver: "queued" (the receiver is stopped with SIGSTOP while the emitter
sends COUNT signals into the bus, then resumed and timed as it drains them: the receiver
alone) and "live" (the receiver reads while the emitter sends). Needs a release build of
bluez-emitter and beacond-dbus-bench, and `pip install dbus-fast`.
  swift build -c release --product bluez-emitter && swift build -c release --package-path Benchmarks --product beacond-dbus-bench
  python3 bench/dbus-ingest.py [COUNT] [ROUNDS]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, '.build', 'release')
BENCH_RELEASE = os.path.join(ROOT, 'Benchmarks', '.build', 'release')
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3

CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
<limit name="max_incoming_bytes">1000000000</limit><limit name="max_outgoing_bytes">1000000000</limit>
<limit name="max_message_size">1000000</limit><limit name="max_connections_per_user">1000</limit>
</busconfig>
"""


def readline(proc, want):
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit('%s ended before printing %r' % (proc.args, want))
        if line.startswith(want):
            return line.strip()


def run(receiver_cmd, mode, env, trigger, emitter):
    receiver = subprocess.Popen(receiver_cmd, stdout=subprocess.PIPE, text=True, env=env)
    readline(receiver, 'ready')
    time.sleep(0.3)
    if mode == 'queued':
        receiver.send_signal(signal.SIGSTOP)
    open(trigger, 'w').close()
    emitted = readline(emitter, 'emitted')
    if mode == 'queued':
        time.sleep(0.2)
        receiver.send_signal(signal.SIGCONT)
    result = json.loads(readline(receiver, '{'))
    receiver.wait(timeout=30)
    result.update(mode=mode, emitter=emitted)
    return result


def main():
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, 'bus.conf')
        with open(conf, 'w') as f:
            f.write(CONF)
        bus = subprocess.Popen(['dbus-daemon', '--config-file=' + conf, '--print-address=1', '--nofork'],
                               stdout=subprocess.PIPE, text=True)
        address = bus.stdout.readline().strip()
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
        trigger = os.path.join(tmp, 'go')
        emitter = subprocess.Popen([os.path.join(RELEASE, 'bluez-emitter'), '--count', str(COUNT), '--trigger', trigger],
                                   stdout=subprocess.PIPE, text=True, env=env)
        readline(emitter, 'ready')
        receivers = {
            'beacond': [os.path.join(BENCH_RELEASE, 'beacond-dbus-bench'), str(COUNT)],
            'dbus-fast': [sys.executable, os.path.join(ROOT, 'bench', 'dbus_fast_receiver.py'), str(COUNT)],
        }
        try:
            for mode in ('queued', 'live'):
                for name, cmd in receivers.items():
                    for _ in range(ROUNDS):
                        r = run(cmd, mode, env, trigger, emitter)
                        print('%-9s %-6s %8.0f signals/s  %.3f CPU-s per 100k   (%s)' % (
                            name, mode, COUNT / r['wall_s'], r['cpu_s'] / COUNT * 100_000, r['emitter']), flush=True)
        finally:
            emitter.kill()
            bus.kill()


if __name__ == '__main__':
    main()
