#!/bin/sh
# Stale tracefs instances are judged by the token the instance's name
# carries (topoadvisor-PID-SERIAL-PIDNS-START), never by kill(PID, 0) in
# whatever PID namespace the judge runs in (issue 34); tracefs is host-wide.
#  1 restore-host run in another PID namespace (unshare --pid --fork
#    --mount-proc) leaves the instances of a live process of the host's
#    namespace alone, in the new and the old name format
#  2 from the host's namespace: a live owner's instance stays; one whose pid
#    now names a process started at another time, and one whose owner is
#    gone, are removed
#  3 an instance made in a child PID namespace (pid 1 there) stays while
#    that namespace's process runs, and goes once it is gone
# Instances are planted (mkdir in tracefs) for processes this script starts.
. "$TA_TOP/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (tracefs instances)"
inst=/sys/kernel/tracing/instances
[ -d $inst ] || skip "tracefs is not mounted at /sys/kernel/tracing"
command -v unshare >/dev/null || skip "no unshare(1)"
unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot make a PID namespace here"
ta_tmpdir
export TOPOADVISOR_LOCK="$tmp/lock"
mark=$((25000 + $$ % 1000))
planted=""
plant() { mkdir "$inst/$1" || fail "cannot plant $1"; planted="$planted $1"; }
cleanup() {
	pkill -KILL -f "^sleep $mark" 2>/dev/null
	for i in $planted; do [ -d "$inst/$i" ] && rmdir "$inst/$i"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# token PID: "PIDNS-START" of a process as its instance name carries them.
token() {
	ns=$(stat -L -c %i "/proc/$1/ns/pid")
	start=$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20)
	echo "$ns-$start"
}
restore() { timeout -s KILL 60 "$TOPOADVISOR" --db "$tmp/t.db" restore-host >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "$1: restore-host failed"; }; }
restore_in_pidns() {
	timeout -s KILL 60 unshare --pid --fork --mount-proc "$TOPOADVISOR" --db "$tmp/t.db" restore-host \
		>"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "$1: restore-host in a new PID namespace failed"; }
}
there() { [ -d "$inst/$1" ]; }

# restore-host needs a database: one host run of a trivial benchmark makes it.
cat >"$tmp/one.yaml" <<YAML
name: one
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: command
  argv: [$TA_TOP/tests/helpers/fake-bench, "100"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 1
repetitions: 1
order: sequential
YAML
timeout -s KILL 60 "$TOPOADVISOR" --db "$tmp/t.db" -q run "$tmp/one.yaml" >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "the run that makes the database failed"; }

sleep "${mark}1" &
live=$!
plant "topoadvisor-$live-90"
plant "topoadvisor-$live-91-$(token $live)"

# --- 1: another PID namespace does not judge the host's instances --------------
restore_in_pidns 1
there "topoadvisor-$live-90" || fail "1: restore-host in another PID namespace removed a live process's instance (old name)"
there "topoadvisor-$live-91-$(token $live)" || fail "1: restore-host in another PID namespace removed a live process's instance"

# --- 2: from the host's namespace --------------------------------------------
ns=$(stat -L -c %i /proc/self/ns/pid)
start=$(sed 's/.*) //' "/proc/$live/stat" | cut -d' ' -f20)
plant "topoadvisor-$live-92-$ns-$((start + 1))"	# the pid, reused by a later process
sleep "${mark}2" &
dead=$!
dead_token=$(token $dead)
kill -KILL $dead; wait $dead 2>/dev/null
plant "topoadvisor-$dead-93-$dead_token"
restore 2
there "topoadvisor-$live-90" || fail "2: a live process's instance was removed (old name)"
there "topoadvisor-$live-91-$(token $live)" || fail "2: a live process's instance was removed"
there "topoadvisor-$live-92-$ns-$((start + 1))" && fail "2: an instance whose pid now names a later process was kept"
there "topoadvisor-$dead-93-$dead_token" && fail "2: a dead process's instance was kept"
grep -q "removed 2 trace instances left by an earlier sweep" "$tmp/err" || { cat "$tmp/err"; fail "2: the removals are not said"; }

# --- 3: an instance of a child PID namespace ------------------------------------
unshare --pid --fork sleep "${mark}3" &
upid=$!
i=0
until child=$(pgrep -f "^sleep ${mark}3"); do
	i=$((i + 1)); [ $i -lt 100 ] || fail "3: the namespaced sleep never started"
	sleep 0.1
done
ctoken=$(token "$child")
plant "topoadvisor-1-94-$ctoken"
restore 3
there "topoadvisor-1-94-$ctoken" || fail "3: the instance of a live process in a child namespace was removed"
kill -KILL "$child"; wait $upid 2>/dev/null
restore 3
there "topoadvisor-1-94-$ctoken" && fail "3: the instance of a gone child namespace was kept"
kill -KILL $live
pass
