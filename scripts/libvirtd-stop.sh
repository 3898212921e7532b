#!/bin/sh
# Stops the libvirtd and virtlogd that libvirtd-start.sh started (by the pid
# files in the run dir) and nothing else, once their last user is done: the
# caller (its process, or --user PID) is unregistered first, and while
# another registered process is still alive the daemons keep running.
# --force stops them regardless.  Idempotent: no pid file or a dead pid is
# fine.  Usage: scripts/libvirtd-stop.sh [--user PID] [--force]
set -eu

run=${TOPOADVISOR_RUN_DIR:-/run/topoadvisor}
user=$PPID
force=0
while [ $# -gt 0 ]; do
	case "$1" in
	--user) user=${2:?}; shift ;;
	--force) force=1 ;;
	*) echo "usage: $0 [--user PID] [--force]" >&2; exit 2 ;;
	esac
	shift
done

# One start or stop at a time: interleaved, two scripts could each start a
# virtlogd (one then orphaned) or stop the daemons under a fresh start.
mkdir -p "$run"
exec 9>"$run/lock"
flock 9

if [ -d "$run/users" ]; then
	rm -f "$run/users/$user"
	others=""
	for f in "$run/users"/*; do
		[ -e "$f" ] || continue
		pid=${f##*/}
		# A user that died without stopping counts no more.
		if kill -0 "$pid" 2>/dev/null; then others="$others $pid"; else rm -f "$f"; fi
	done
	if [ -n "$others" ] && [ $force -eq 0 ]; then
		echo "libvirtd-stop: still used by pid(s)$others; left running"
		exit 0
	fi
	rm -rf "$run/users"
fi

stop() { # name
	pidfile=$run/$1.pid
	[ -s "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		# libvirtd shuts its drivers down first; give it time, then insist.
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
	fi
	rm -f "$pidfile"
	echo "libvirtd-stop: stopped $1 ($pid)"
}

stop libvirtd
stop virtlogd

# Put /dev/kvm back the way libvirtd-start.sh found it.
if [ -f "$run/dev-kvm.orig" ]; then
	read -r owner mode <"$run/dev-kvm.orig"
	if [ -c /dev/kvm ]; then
		chown "$owner" /dev/kvm
		chmod "$mode" /dev/kvm
	fi
	rm -f "$run/dev-kvm.orig"
	echo "libvirtd-stop: restored /dev/kvm to $owner $mode"
fi
