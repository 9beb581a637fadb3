#!/bin/sh
# Runs a command beside a private systemd-journald, the way systemd runs a service: its
# standard error is a stream JOURNAL_STREAM names. Then prints the journal's beacond entries
# as JSON lines. Needs a mount namespace of its own (tmpfs over /run), so run it as
#   unshare -m --propagation private sh private_journald.sh WORKDIR SECONDS COMMAND...
# The command gets SIGTERM after SECONDS; its standard error is left in WORKDIR/stderr.
set -e
work=$1
seconds=$2
shift 2
mount -t tmpfs tmpfs /run
if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
mkdir -p /run/systemd/journal /run/log/journal
/lib/systemd/systemd-journald >"$work/journald.out" 2>&1 &
journald=$!
i=0
while [ ! -S /run/systemd/journal/socket ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
: >"$work/stderr"
JOURNAL_STREAM=$(stat -c '%d:%i' "$work/stderr") timeout -s TERM "$seconds" "$@" 2>>"$work/stderr" || true
journalctl --sync
journalctl -D /run/log/journal -o json --no-pager SYSLOG_IDENTIFIER=beacond
kill $journald
