#!/bin/sh
# Starts virtlogd and libvirtd without systemd, for tests and `make demo`.
#
# Idempotent: a libvirtd we started earlier (pid file alive) or one somebody
# else runs (its socket answers) is left alone.  Pid files, configs and logs
# live under the run dir ($TOPOADVISOR_RUN_DIR, default /run/topoadvisor), so
# libvirtd-stop.sh stops exactly what this script started and nothing else.
# Ends with a warm-up connection: the first one can block for tens of seconds
# while libvirtd builds its QEMU capabilities cache, and we would rather pay
# that here, with a long timeout, than in a test with a short one.
#
# Test runs may overlap (several checkouts on one host), so every caller is
# registered as a user (the calling process, or --user PID) in $run/users;
# libvirtd-stop.sh stops the daemons only when no live user is left.  Callers
# should therefore call libvirtd-stop.sh when done whatever this printed.
#
# Prints one line: "libvirtd-start: started" or "libvirtd-start: already
# running (ours|not ours)".  Exit 0 when qemu:///system answers, else 1.
# Usage: scripts/libvirtd-start.sh [--user PID] [--warmup SECONDS]
set -eu

warmup=120
user=$PPID
while [ $# -gt 0 ]; do
	case "$1" in
	--user) user=${2:?}; shift ;;
	--warmup) warmup=${2:?}; shift ;;
	*) echo "usage: $0 [--user PID] [--warmup SECONDS]" >&2; exit 2 ;;
	esac
	shift
done
run=${TOPOADVISOR_RUN_DIR:-/run/topoadvisor}
uri=qemu:///system

alive() { # pidfile
	[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

answers() { # seconds
	timeout "$1" virsh -q -c "$uri" version >/dev/null 2>&1
}

warm_up() {
	end=$(( $(date +%s) + warmup ))
	while [ "$(date +%s)" -lt "$end" ]; do
		answers "$warmup" && return 0
		sleep 0.2
	done
	echo "libvirtd-start: $uri did not answer within ${warmup}s; see $run/libvirtd.log" >&2
	return 1
}

if [ "$(id -u)" -ne 0 ]; then
	echo "libvirtd-start: must run as root (qemu:///system)" >&2
	exit 1
fi
for b in virtlogd libvirtd virsh; do
	if ! command -v "$b" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$b" ]; then
		echo "libvirtd-start: $b not installed (scripts/deps.sh check)" >&2
		exit 1
	fi
done
PATH=$PATH:/usr/sbin

register() {
	mkdir -p "$run/users"
	: >"$run/users/$user"
}

# One start or stop at a time: interleaved, two scripts could each start a
# virtlogd (one then orphaned) or stop the daemons under a fresh start.  The
# daemons must not inherit the lock (9>&- below), or it would never be freed.
mkdir -p "$run"
exec 9>"$run/lock"
flock 9

if alive "$run/libvirtd.pid"; then
	register
	warm_up
	echo "libvirtd-start: already running (ours)"
	exit 0
fi
if [ -S /run/libvirt/libvirt-sock ] && answers 5; then
	echo "libvirtd-start: already running (not ours)"
	exit 0
fi

umask 022
mkdir -p "$run"
chmod 0755 "$run"
# Logs go to our run dir instead of the syslog nobody reads here.
printf 'log_outputs="2:file:%s/virtlogd.log"\n' "$run" >"$run/virtlogd.conf"
printf 'log_outputs="2:file:%s/libvirtd.log"\n' "$run" >"$run/libvirtd.conf"

# No udev here, so /dev/kvm stays root-only 0600.  libvirt probes QEMU as
# root (KVM works) but then finds /dev/kvm unusable for libvirt-qemu, calls
# its capabilities cache outdated and re-probes QEMU on every domain start:
# ~50 s each.  Give /dev/kvm the owner and mode udev would (root:kvm 0660),
# remembering the original for libvirtd-stop.sh.
if [ -c /dev/kvm ] && [ "$(stat -c '%G %a' /dev/kvm)" != "kvm 660" ] &&
	getent group kvm >/dev/null; then
	[ -f "$run/dev-kvm.orig" ] || stat -c '%u:%g %a' /dev/kvm >"$run/dev-kvm.orig"
	chown root:kvm /dev/kvm
	chmod 0660 /dev/kvm
fi

# Without virtlogd, starting a domain fails ("Failed to connect socket to
# .../virtlogd-sock"), so it comes first.
if ! alive "$run/virtlogd.pid"; then
	rm -f "$run/virtlogd.pid"
	virtlogd -d -f "$run/virtlogd.conf" -p "$run/virtlogd.pid" 9>&-
fi
rm -f "$run/libvirtd.pid"
# Without systemd, PID 1 here (the sandbox's process_api) reaps orphans only
# every ~1.4 s: libvirtd starts QEMU daemonized, so a QEMU that exited
# stayed a zombie that long and libvirtd, waiting for it to be gone, took
# 1.4 s to destroy any guest.  Under tini -s (a child subreaper) the QEMUs
# are orphaned to tini instead, which reaps them at once: a destroy takes
# ~0.1 s.  libvirtd then runs in the foreground, in a session of its own,
# its output in the run dir (no caller's pipe held open).
if command -v tini >/dev/null; then
	setsid tini -s -- libvirtd -f "$run/libvirtd.conf" -p "$run/libvirtd.pid" \
		</dev/null >>"$run/libvirtd.out" 2>&1 9>&- &
else
	libvirtd -d -f "$run/libvirtd.conf" -p "$run/libvirtd.pid" 9>&-
fi
register
warm_up
echo "libvirtd-start: started"
