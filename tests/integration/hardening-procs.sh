#!/bin/sh
# What a sweep starts on the host stays contained and accounted for (issue 18):
#  1 a benchmark, a noise load and a preparation command that daemonize
#    (setsid -f): the benchmark's and the preparation's runs fail naming what
#    was left, nothing survives the run, nothing stays recorded in the lock,
#    no cgroup of the controller is left
#  2 timeouts by the clock: a setsid child holding stdout, stdout and stderr
#    closed — "timed out after 2 s", well before the 60 s bound
#  3 SIGTERM or SIGINT to the controller while such a benchmark runs: it stops
#    promptly, the experiment is interrupted, nothing survives, and resume
#    finds nothing left behind
#  4 SIGKILL to the controller while daemonized processes run: resume ends
#    them all (the setsid ones too) and names them
#  5 output beyond the 64 MiB cap: the cause names the limit and what was
#    dropped (bytes, lines) before the last MiB, which is kept (the result
#    printed last is in the stored artifact), and it ends saying so; a missing
#    primary metric names the metrics the output had
#  6 benchmarks, and the command `trace` runs, inherit no descriptor of the
#    controller (not even one its own parent leaked to it)
# Every wait is bounded (timeout(1)); every process has a unique marker.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
chmod 755 "$tmp"
export TOPOADVISOR_LOCK="$tmp/lock"
db=$tmp/t.db
ta() { timeout -s KILL 120 "$TOPOADVISOR" --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }
mark=$((23000 + $$ % 1000))
ours() { pgrep -f "^sleep $mark" || true; }
# The cgroup2 mount, from mountinfo (fields after " - ": type, source).
cgmnt=$(awk '{ for (i = 1; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -n 1)
pids=""
cleanup() {
	# What a controller killed here left is the next lock holder's to end.
	"$TOPOADVISOR" --db "$db" restore-host >/dev/null 2>&1
	pkill -KILL -f "^sleep $mark" 2>/dev/null
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
		[ -n "$cgmnt" ] && find "$cgmnt" -maxdepth 3 -type d -name "topoadvisor-$p-*" \
			-exec rmdir {} + 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
# cgroups_of PID: how many cgroups of controller PID exist.
cgroups_of() {
	[ -n "$cgmnt" ] || { echo 0; return; }
	find "$cgmnt" -maxdepth 3 -type d -name "topoadvisor-$1-*" 2>/dev/null | wc -l
}
# start_bg CMD...: runs a topoadvisor command in the background, $bg its pid.
start_bg() {
	"$TOPOADVISOR" --db "$db" "$@" >"$tmp/bg.out" 2>"$tmp/bg.err" &
	bg=$!
	pids="$pids $bg"
}
# wait_ours N: until N of our sleeps run (at most 30 s).
wait_ours() {
	i=0
	until [ "$(ours | wc -l)" -ge "$1" ]; do
		i=$((i + 1)); [ $i -lt 300 ] || { cat "$tmp/bg.err"; fail "$2: our processes never started"; }
		sleep 0.1
	done
}
bench() { # NAME ARGV-YAML [EXTRA-YAML]
	cat >"$tmp/$1.yaml" <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: command
  argv: $2
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 1
  timeout: 2
repetitions: 1
order: sequential
$3
YAML
}
fb=$TA_TOP/tests/helpers/fake-bench

# --- 1: daemons are contained, named, ended ------------------------------------
bench daemon "[sh, -c, \"setsid -f sleep ${mark}1; exec $fb 100\"]" \
	"noise: [{kind: command, name: d, argv: [sh, -c, \"setsid -f sleep ${mark}2; exec sleep ${mark}3\"]}]"
start_bg -q run "$tmp/daemon.yaml"
wait "$bg"
[ -z "$(ours)" ] || { ps -o pid,ppid,pgid,sid,args -p "$(ours | tr '\n' ,)0"; fail "1: processes survive the run"; }
q "SELECT status || ': ' || error FROM runs" >"$tmp/err"
grep -q "^failed: the benchmark left processes running after it ended: sleep(" "$tmp/err" ||
	{ cat "$tmp/err" "$tmp/bg.err"; fail "1: the run is not failed naming what the benchmark left"; }
grep -E -q "^(group|cgroup) " "$TOPOADVISOR_LOCK/host.lock" && fail "1: ended trees still recorded in the lock"
[ "$(cgroups_of "$bg")" = 0 ] || fail "1: the controller left cgroups behind"
bench prep "[$fb, \"100\"]" "noise: [{kind: command, name: d, argv: [sh, -c, \"setsid -f sleep ${mark}2; exec sleep ${mark}3\"]}]"
ta -q run "$tmp/prep.yaml" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "1: a clean benchmark beside a daemonizing noise failed"; }
[ -z "$(ours)" ] || fail "1: the noise's daemon survives the run"
q "SELECT status FROM runs ORDER BY id DESC LIMIT 1" | grep -qx ok || fail "1: that run is not ok"
printf '  prepare: [[sh, -c, "setsid -f sleep %s4"]]\n' "$mark" >"$tmp/prep-guest"
sed "s/^guest: {runner: host}/guest:\n  runner: host/" "$tmp/prep.yaml" | sed "/^  runner: host/r $tmp/prep-guest" |
	sed '/^noise:/d' >"$tmp/prep2.yaml"
ta -q run "$tmp/prep2.yaml" >/dev/null 2>"$tmp/err"
[ -z "$(ours)" ] || fail "1: the preparation's daemon survives the run"
q "SELECT error FROM runs ORDER BY id DESC LIMIT 1" | grep -q "preparation 'sh' left processes running after it ended: sleep(" ||
	{ q "SELECT status, error FROM runs ORDER BY id DESC LIMIT 1"; fail "1: the preparation's leftover is not named"; }

# --- 2: timeouts by the clock ---------------------------------------------------
for argv in "[sh, -c, \"setsid sleep ${mark}5 & exec sleep ${mark}6\"]" \
	    "[sh, -c, \"exec >&- 2>&-; exec sleep ${mark}7\"]"; do
	bench to "$argv"
	start=$(date +%s)
	timeout -s KILL 60 "$TOPOADVISOR" --db "$db" -q run "$tmp/to.yaml" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -ne 137 ] || { pkill -KILL -f "^sleep $mark"; fail "2: '$argv' was never timed out (killed after 60 s)"; }
	[ $(( $(date +%s) - start )) -lt 60 ] || fail "2: '$argv' took too long"
	q "SELECT error FROM runs ORDER BY id DESC LIMIT 1" | grep -q "timed out after 2 s" ||
		{ q "SELECT error FROM runs ORDER BY id DESC LIMIT 1"; fail "2: '$argv': no 'timed out after 2 s'"; }
	[ -z "$(ours)" ] || fail "2: '$argv' left processes"
done

# --- 3: SIGTERM or SIGINT to the controller is prompt -----------------------------
# resume runs the stored config: the benchmark hangs only until $tmp/go exists.
bench term "[sh, -c, \"[ -e $tmp/go ] && exec $fb 100; setsid sleep ${mark}8 & exec >&- 2>&-; exec sleep ${mark}9\"]"
sed -i 's/^  timeout: 2$/  timeout: 600/' "$tmp/term.yaml"
for sig in TERM INT; do
	start_bg run "$tmp/term.yaml"
	wait_ours 2 "3 ($sig)"
	kill -$sig "$bg"
	i=0
	while kill -0 "$bg" 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 300 ] || fail "3: the controller ignored SIG$sig for 30 s"
		sleep 0.1
	done
	[ -z "$(ours)" ] || fail "3: processes survive the sweep interrupted by SIG$sig"
	term=$(head -n 1 "$tmp/bg.out")
	[ "$(q "SELECT status FROM experiments WHERE id = $term")" = interrupted ] ||
		{ cat "$tmp/bg.err"; fail "3: SIG$sig: the experiment is not interrupted"; }
	touch "$tmp/go"
	ta resume "$term" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "3: resume failed"; }
	grep -q "left running by an earlier sweep" "$tmp/err" && { cat "$tmp/err"; fail "3: resume found survivors"; }
	[ -z "$(ours)" ] || fail "3: resume left processes"
	rm -f "$tmp/go"
done

# --- 4: SIGKILL to the controller; resume ends daemons too ------------------------
bench killed "[sh, -c, \"[ -e $tmp/go ] && exec $fb 100; setsid -f sleep ${mark}10; exec sleep ${mark}11\"]" \
	"noise: [{kind: command, name: d, argv: [sh, -c, \"setsid -f sleep ${mark}12; exec sleep ${mark}13\"]}]"
sed -i 's/^  timeout: 2$/  timeout: 600/' "$tmp/killed.yaml"
start_bg run "$tmp/killed.yaml"
wait_ours 4 4
kill -KILL "$bg"
wait "$bg" 2>/dev/null
sleep 0.3
[ "$(ours | wc -l)" -ge 2 ] || echo "note: fewer daemons than expected outlived the controller"
killed=$(head -n 1 "$tmp/bg.out")
touch "$tmp/go"
ta resume "$killed" >/dev/null 2>"$tmp/err"
[ -z "$(ours)" ] || { ps -o pid,ppid,sid,args -p "$(ours | tr '\n' ,)0"; fail "4: processes of the killed sweep survive resume"; }
grep -q "ended [0-9]* processes left running by an earlier sweep: .*sleep" "$tmp/err" ||
	{ cat "$tmp/err"; fail "4: resume does not name what it ended"; }
[ "$(cgroups_of "$bg")" = 0 ] || fail "4: the killed controller's cgroups were not removed"

# --- 5: output cut at the cap is said ----------------------------------------------
bench big "[sh, -c, \"head -c 70000000 /dev/zero | tr '\\\\0' '\\\\n'; echo 'throughput: 5 ops/s'\"]"
sed -i 's/^  timeout: 2$/  timeout: 120/' "$tmp/big.yaml"
ta -q run "$tmp/big.yaml" >/dev/null 2>"$tmp/err"
q "SELECT error FROM runs ORDER BY id DESC LIMIT 1" >"$tmp/cause"
grep -q "stdout was cut at the 64 MiB limit: 2.8 MiB (2891156 lines) were dropped before its last 1 MiB" "$tmp/cause" ||
	{ cat "$tmp/cause"; fail "5: the cause does not say what was cut"; }
# The head and the tail are kept: the result printed last is in the artifact.
q "SELECT substr(content, -200) FROM artifacts WHERE name = 'benchmark.stdout' ORDER BY id DESC LIMIT 1" |
	grep -q "^throughput: 5 ops/s$" || fail "5: the output's last line (its result) was not kept"
q "SELECT substr(content, -120) FROM artifacts WHERE name = 'benchmark.stdout' ORDER BY id DESC LIMIT 1" |
	grep -q "\[topoadvisor: stdout was cut at the 64 MiB limit" || fail "5: the artifact does not say it was cut"
# sysbench output with a 95th percentile, asked for the 99th.
bench nometric "[cat, $TA_TOP/tests/fixtures/bench/sysbench/1.0.20-cpu.out]"
sed -i -e 's/^  kind: command/  kind: sysbench/' -e '/^  parse: /d' \
	-e 's/^  metric: ops/  metric: latency_p99_ms/' "$tmp/nometric.yaml"
ta -q run "$tmp/nometric.yaml" >/dev/null 2>"$tmp/err"
q "SELECT error FROM runs ORDER BY id DESC LIMIT 1" |
	grep -q "no 'latency_p99_ms' (the primary metric); it has .*latency_p95_ms.*events_per_s" ||
	{ q "SELECT error FROM runs ORDER BY id DESC LIMIT 1"; cat "$tmp/err"; fail "5: the metrics found are not named"; }

# --- 6: no stray descriptors --------------------------------------------------------
bench fds "[sh, -c, \"for n in 3 4 5 6 7 8 9; do [ -e /proc/\$\$/fd/\$n ] && echo fd \$n: \$(readlink /proc/\$\$/fd/\$n); done; echo 'throughput: 1 ops/s'\"]"
ta -q run "$tmp/fds.yaml" 9>"$tmp/stray" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "6: run failed"; }
q "SELECT content FROM artifacts WHERE name = 'benchmark.stdout' ORDER BY id DESC LIMIT 1" >"$tmp/fds"
grep -q "^fd" "$tmp/fds" && { cat "$tmp/fds"; fail "6: the benchmark inherited descriptors"; }
grep -q "throughput" "$tmp/fds" || fail "6: no output stored"
# Nor does the command `trace` runs (root: it traces through tracefs).
if [ "$(id -u)" -eq 0 ] && grep -q " tracefs " /proc/mounts; then
	timeout -s KILL 60 "$TOPOADVISOR" trace -- sh -c \
		'for n in 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do [ -e /proc/$$/fd/$n ] && echo "fd $n: $(readlink /proc/$$/fd/$n)"; done; true' \
		>"$tmp/trace.out" 2>&1 || { cat "$tmp/trace.out"; fail "6: trace failed"; }
	grep "^fd " "$tmp/trace.out" && fail "6: the traced command inherited descriptors"
else
	echo "note: not root or no tracefs: the trace case is skipped"
fi
pass
