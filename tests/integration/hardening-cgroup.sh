#!/bin/sh
# Containment in cgroup v2 mode counts what it contains (issue 34):
#  1 a benchmark child that moves itself out of the run's cgroup (into the
#    controller's own cgroup, or into a sibling cgroup) and setsid-sleeps:
#    the run fails naming it, and nothing of it outlives the run
#  2 a benchmark that makes a sub-cgroup of the run's cgroup and puts a
#    setsid sleep in it: the run fails naming it (not "survive SIGKILL"),
#    the sleep is ended, and no cgroup of the controller is left
#  3 a controller killed with SIGKILL while such a benchmark runs: the next
#    lock holder (restore-host) ends the sleep, removes the cgroups and
#    says no "survive"
#  4 SIGKILL at the earliest moment a run's cgroup exists (20 trials): the
#    next lock holder removes every cgroup the killed controllers made
# Runs as root with a writable cgroup2 mount; skips elsewhere.
. "$TA_TOP/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (cgroup v2 mode)"
cgmnt=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)
[ -n "$cgmnt" ] || skip "no cgroup2 mount"
ta_tmpdir
chmod 755 "$tmp"
export TOPOADVISOR_LOCK="$tmp/lock"
db=$tmp/t.db
mark=$((24000 + $$ % 1000))
ours() { pgrep -f "^sleep $mark" || true; }
# Our own cgroup (the controller's, which the run's cgroup is made under).
self=$cgmnt$(sed -n 's/^0:://p' /proc/self/cgroup)
self=${self%/}
sib=$self/ta-test-sibling-$$
mkdir "$sib" || skip "cannot make a cgroup under $self"
pids=""
cleanup() {
	"$TOPOADVISOR" --db "$db" restore-host >/dev/null 2>&1
	pkill -KILL -f "^sleep $mark" 2>/dev/null
	sleep 0.2
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
		find "$cgmnt" -depth -mindepth 1 -maxdepth 4 -type d -path "*topoadvisor-$p-*" \
			-exec rmdir {} + 2>/dev/null
	done
	rmdir "$sib" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cgroups_of() {
	find "$cgmnt" -maxdepth 4 -type d -name "topoadvisor-$1-*" 2>/dev/null | wc -l
}
bench() { # NAME SCRIPT
	printf '%s\n' "$2" >"$tmp/$1.sh"
	cat >"$tmp/$1.yaml" <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: command
  argv: [sh, $tmp/$1.sh]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 1
  timeout: 30
repetitions: 1
order: sequential
YAML
}
fb=$TA_TOP/tests/helpers/fake-bench
# In a benchmark: $run is the run's cgroup directory.
here="run=$cgmnt\$(sed -n 's/^0:://p' /proc/self/cgroup)"

# --- 1: a process that leaves the run's cgroup is still the run's ---------------
n=0
for target in "\${1%/*}" "$sib"; do
	n=$((n + 1))
	bench esc$n "$here
sh -c 'echo \$\$ >\"$target/cgroup.procs\" && exec setsid sleep ${mark}$n' sh "\$run" &
sleep 0.5
exec $fb 100"
	"$TOPOADVISOR" --db "$db" -q run "$tmp/esc$n.yaml" >/dev/null 2>"$tmp/err" &
	bg=$!; pids="$pids $bg"
	timeout 60 sh -c "while kill -0 $bg 2>/dev/null; do sleep 0.1; done"
	left=$(ours)
	[ -z "$left" ] || { ps -o pid,ppid,sid,cgroup,args -p "$(echo $left | tr ' ' ,)"; fail "1.$n: the escaped process outlives the run"; }
	sqlite3 "$db" "SELECT status || ': ' || error FROM runs ORDER BY id DESC LIMIT 1" >"$tmp/cause"
	grep -q "^failed: the benchmark left processes running after it ended: .*sleep(" "$tmp/cause" ||
		{ cat "$tmp/cause" "$tmp/err"; fail "1.$n: the run does not fail naming the escaped sleep"; }
	[ "$(cgroups_of "$bg")" = 0 ] || fail "1.$n: the controller left cgroups"
done

# --- 2: a sub-cgroup of the run's cgroup is ended and removed ---------------------
bench sub "$here
mkdir \"\$run/bench-sub\" && sh -c 'echo \$\$ >\"\$1/bench-sub/cgroup.procs\" && exec setsid sleep ${mark}3' sh \"\$run\" &
sleep 0.5
exec $fb 100"
"$TOPOADVISOR" --db "$db" -q run "$tmp/sub.yaml" >/dev/null 2>"$tmp/err" &
bg=$!; pids="$pids $bg"
timeout 60 sh -c "while kill -0 $bg 2>/dev/null; do sleep 0.1; done"
[ -z "$(ours)" ] || fail "2: the sleep in the sub-cgroup outlives the run"
sqlite3 "$db" "SELECT status || ': ' || error FROM runs ORDER BY id DESC LIMIT 1" >"$tmp/cause"
grep -q "survive" "$tmp/cause" && { cat "$tmp/cause"; fail "2: the cause says processes survive SIGKILL"; }
grep -q "^failed: the benchmark left processes running after it ended: .*sleep(" "$tmp/cause" ||
	{ cat "$tmp/cause" "$tmp/err"; fail "2: the run does not fail naming the sleep"; }
[ "$(cgroups_of "$bg")" = 0 ] || { find "$cgmnt" -path "*topoadvisor-$bg-*"; fail "2: the run's cgroup (or its sub-cgroup) leaks"; }
grep -E -q "^cgroup " "$TOPOADVISOR_LOCK" && { cat "$TOPOADVISOR_LOCK"; fail "2: the lock still records a cgroup"; }

# --- 3: the next holder ends a killed controller's sub-cgroups ---------------------
bench subk "$here
mkdir \"\$run/bench-sub\" && sh -c 'echo \$\$ >\"\$1/bench-sub/cgroup.procs\" && exec setsid sleep ${mark}4' sh \"\$run\" &
exec sleep ${mark}5"
"$TOPOADVISOR" --db "$db" -q run "$tmp/subk.yaml" >/dev/null 2>"$tmp/err" &
bg=$!; pids="$pids $bg"
i=0
until [ "$(ours | wc -l)" -ge 2 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || { cat "$tmp/err"; fail "3: the benchmark never started"; }
	sleep 0.1
done
kill -KILL "$bg"; wait "$bg" 2>/dev/null
timeout -s KILL 60 "$TOPOADVISOR" --db "$db" restore-host >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "3: restore-host failed"; }
[ -z "$(ours)" ] || fail "3: the killed controller's sleeps survive the next holder"
grep -q "survive" "$tmp/err" && { cat "$tmp/err"; fail "3: the next holder says processes survive SIGKILL"; }
grep -q "ended [0-9]* process.* left running by an earlier sweep: .*sleep(" "$tmp/err" ||
	{ cat "$tmp/err"; fail "3: the next holder does not name what it ended"; }
[ "$(cgroups_of "$bg")" = 0 ] || fail "3: the killed controller's cgroups leak"

# --- 4: SIGKILL as soon as a run's cgroup exists ------------------------------------
bench early "exec $fb 100"
leaked=0
for t in $(seq 20); do
	"$TOPOADVISOR" --db "$db" -q run "$tmp/early.yaml" >/dev/null 2>&1 &
	bg=$!; pids="$pids $bg"
	i=0
	while [ $i -lt 20000 ] && kill -0 "$bg" 2>/dev/null; do
		set -- "$self"/topoadvisor-$bg-*
		[ -e "$1" ] && break
		i=$((i + 1))
	done
	kill -KILL "$bg" 2>/dev/null; wait "$bg" 2>/dev/null
	timeout -s KILL 60 "$TOPOADVISOR" --db "$db" restore-host >/dev/null 2>&1
	[ "$(cgroups_of "$bg")" = 0 ] || leaked=$((leaked + 1))
done
echo "4: $leaked of 20 early SIGKILLs leaked a cgroup"
[ $leaked = 0 ] || fail "4: $leaked of 20 early SIGKILLs leaked a cgroup past the next lock holder"
pass
