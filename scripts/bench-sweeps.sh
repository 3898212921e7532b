#!/bin/sh
# make bench, the sweeps' part (issue 22): each figure printed next to its
# target, measured in this run.
#
#  1. The store, on databases tests/helpers/mkstore writes through the
#     schema's own layer (kept in $TA_BUILD/bench-store, made again when
#     mkstore changes): one of ~2 k and one of 200 k host-runner runs (the
#     kind of sweep that reaches 100 k runs: a 25 ms benchmark), and one of
#     100 k guest runs with vCPU statistics and exit counts (17 metrics and
#     12 exit rows each).  `list` at 2 k and 200 k runs (target: the same
#     CPU time, <= 1.5x); `export` of 100 k runs as CSV and JSON (target:
#     flat memory, peak RSS <= 1.25x that of exporting 2 k); `rank`,
#     `report` and `compare` on 100 k host-runner runs (target <= 1 CPU s
#     each; compare of two 50 k-run experiments); rank and report on the
#     100 k guest runs, shown.
#  2. plan: a raced sweep of 200 configurations (target <= 0.2 CPU s); the
#     estimate of a host-runner sweep after a smaller one of the same
#     benchmark is stored, against its measured wall time (target +-25 %).
#  3. Guests (real TCG, under flock /tmp/ta-suite.lock; skipped with the
#     reason when libvirt, QEMU or the image are missing): a sweep without
#     guest.reuse, then plan and run of another without reuse and of one
#     with reuse, estimate against wall time (target +-25 %); the runs in a
#     reused guest: time outside the benchmark window (target <= 0.3 s) and
#     the window against the benchmark's own elapsed time (ebizzy's `real`,
#     target <= 0.2 s longer), median and maximum; then `make demo`'s study
#     (configs/ebizzy-tcg.yaml): the share of its wall time outside
#     benchmark windows (target <= 25 %, judged when the host is quiet:
#     load average below 2 on this 2-CPU machine; BENCH_DEMO=0 skips it).
# CPU time is user + sys of the command and its children (to the
# microsecond, tests/helpers/cputime), best of 3, which the other work on a
# shared host inflates far less than wall time.  Usage: bench-sweeps.sh
# [store] [plan] [guests] (default: all three).
set -u
TA_TOP=$(cd "$(dirname "$0")/.." && pwd)
TA_BUILD=${TA_BUILD:-$TA_TOP/build}
TOPOADVISOR=${TOPOADVISOR:-$TA_BUILD/topoadvisor}
export TA_TOP TA_BUILD TOPOADVISOR
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
export TOPOADVISOR_LOCK="$tmp/lock"
unset TOPOADVISOR_DB
CPUTIME=$TA_BUILD/tests/helpers/cputime
MKSTORE=$TA_BUILD/tests/helpers/mkstore
for b in "$CPUTIME" "$MKSTORE"; do
	[ -x "$b" ] || fail "$b is missing (make bench builds it)"
done
missed=0

judge() { # WHAT VALUE OP TARGET
	if awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { exit !(op == ">=" ? v >= t : v <= t) }'; then
		echo "  target met: $1 $2 $3 $4"
	else
		echo "  below target: $1 $2 (target $3 $4)"; missed=1
	fi
}
# best CMD...: "CPU_SECONDS PEAK_MB" of the least CPU time of 3 runs; the
# output of the last run in $tmp/out.
best() {
	b=999 mb=0
	for i in 1 2 3; do
		"$CPUTIME" "$tmp/out" "$@" >"$tmp/cpu" 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
		read -r s kib <"$tmp/cpu"
		b=$(awk -v a="$b" -v s="$s" 'BEGIN { print (s < a) ? s : a }')
		mb=$(awk -v a="$mb" -v k="$kib" 'BEGIN { m = k / 1024; printf "%.1f", (m > a ? m : a) }')
	done
	echo "$b $mb"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# ---- 1. the store ----------------------------------------------------------

# store NAME ARGS...: $TA_BUILD/bench-store/NAME.db, made by mkstore ARGS
# (one call per "EXPERIMENTS CONFIGS REPS KIND" group, separated by --),
# again when mkstore is newer than it.
store() {
	name=$1; shift
	db=$TA_BUILD/bench-store/$name.db
	if [ ! -s "$db" ] || [ "$MKSTORE" -nt "$db" ]; then
		mkdir -p "$TA_BUILD/bench-store"
		rm -f "$db" "$db-wal" "$db-shm"
		t0=$(now)
		while [ $# -gt 0 ]; do
			"$MKSTORE" "$db.new" "$1" "$2" "$3" "$4" >/dev/null || fail "mkstore $name"
			shift 4
			[ "${1:-}" = -- ] && shift
		done
		mv "$db.new" "$db"
		echo "  (made $name.db: $(sqlite3 "$db" 'SELECT COUNT(*) FROM runs') runs," \
		     "$(($(stat -c %s "$db") / 1000000)) MB, in $(since "$t0") s)" >&2
	fi
	echo "$db"
}

bench_store() {
	echo "bench: the store (databases in $TA_BUILD/bench-store; the first run makes them)"
	small=$(store small 3 20 34 host)
	big=$(store big 1 20 5000 host -- 2 20 2500 host)
	guests=$(store guests 1 20 5000 guest)
	set -- $(best "$TOPOADVISOR" --db "$small" list); l_small=$1
	set -- $(best "$TOPOADVISOR" --db "$big" list); l_big=$1
	r=$(ratio "$l_big" "$l_small")
	echo "list: $(ms "$l_small") ms CPU at 2 k runs, $(ms "$l_big") ms at 200 k runs: ${r}x"
	judge "list at 200 k / 2 k runs" "$r" "<=" 1.5
	for fmt in csv json; do
		if [ $fmt = csv ]; then args="export 1 --csv"; else args="--json export 1"; fi
		set -- $(best "$TOPOADVISOR" --db "$small" $args); rss_small=$2
		set -- $(best "$TOPOADVISOR" --db "$big" $args); cpu=$1 rss=$2
		out=$(($(stat -c %s "$tmp/out") / 1000000))
		r=$(ratio "$rss" "$rss_small")
		echo "export --$fmt of 100 k runs: $out MB out, $cpu CPU s, peak RSS $rss MB" \
		     "($rss_small MB for 2 k runs: ${r}x)"
		judge "export --$fmt peak RSS, 100 k / 2 k runs" "$r" "<=" 1.25
	done
	set -- $(best "$TOPOADVISOR" --db "$big" rank 1); echo "rank on 100 k runs: $1 CPU s"
	judge "rank, 100 k runs (CPU s)" "$1" "<=" 1
	set -- $(best "$TOPOADVISOR" --db "$big" report 1 -o "$tmp/r.html")
	echo "report on 100 k runs: $1 CPU s"
	judge "report, 100 k runs (CPU s)" "$1" "<=" 1
	set -- $(best "$TOPOADVISOR" --db "$big" compare 2 3)
	echo "compare of two 50 k-run experiments: $1 CPU s"
	judge "compare, 2 x 50 k runs (CPU s)" "$1" "<=" 1
	# Shown, not judged: 100 k guest runs are days of guest time; each run
	# holds 6x the host run's rows, which every reader reads.
	set -- $(best "$TOPOADVISOR" --db "$guests" rank 1); r=$1
	set -- $(best "$TOPOADVISOR" --db "$guests" report 1 -o "$tmp/r.html")
	echo "on 100 k guest runs (17 metrics, 12 exit rows each; shown): rank $r CPU s," \
	     "report $1 CPU s"
}

# ---- 2. plan ---------------------------------------------------------------

# host_sweep NAME REPETITIONS: a host-runner sweep of a ~10 ms benchmark.
host_sweep() {
	cat <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1, 1x2x1, 2x1x1, 1x1x2]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "250"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 1
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: false}
repetitions: $2
YAML
}

# estimate DB CONFIG: plan's estimate (seconds) for CONFIG with history DB.
estimate() {
	"$TOPOADVISOR" --db "$1" plan --json "$2" >"$tmp/plan.json" || fail "plan $2"
	sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimated_seconds'"
}

# run_sweep DB CONFIG: runs it, prints its wall time in seconds.
run_sweep() {
	t0=$(now)
	"$TOPOADVISOR" --db "$1" -q run "$2" >/dev/null 2>"$tmp/run.err" ||
		{ cat "$tmp/run.err" >&2; fail "run $2"; }
	since "$t0"
}

# judge_estimate WHAT ESTIMATE WALL BUILTIN
judge_estimate() {
	d=$(awk -v e="$2" -v w="$3" 'BEGIN { printf "%+.0f", (e - w) / w * 100 }')
	echo "$1: estimated $(printf %.2f "$2") s (built-in figures: $(printf %.0f "$4") s)," \
	     "took $3 s: ${d} %"
	judge "$1 estimate error (%)" "$(echo "$d" | tr -d +-)" "<=" 25
}

bench_plan() {
	echo "bench: plan"
	# 25 shapes x 8 host-knob settings = 200 decisions raced over 10 blocks.
	cat >"$tmp/race200.yaml" <<'YAML'
name: race200
guest: {runner: host}
topology: [1x1x1, 1x2x1, 2x1x1, 1x1x2, 2x2x1, 1x2x2, 2x1x2, 1x4x1, 4x1x1, 1x1x4, 8x1x1,
  4x2x1, 2x4x1, 1x8x1, 4x1x2, 2x2x2, 1x4x2, 2x1x4, 1x2x4, 1x1x8, 3x1x1, 1x3x1, 6x1x1,
  1x6x1, 3x2x1]
host: {thp: [always, never], ksm: [0, 1], sched_autogroup: [0, 1]}
benchmark: {kind: command, argv: [/bin/true], parse: 'x (?<ops>[0-9]+)', metric: ops}
repetitions: 10
strategy: race
race: {first_test: 3}
YAML
	set -- $(best "$TOPOADVISOR" --db "$tmp/none.db" plan "$tmp/race200.yaml")
	grep -q "^200 configurations" "$tmp/out" || fail "race200.yaml: not 200 configurations"
	echo "plan of a raced sweep of 200 configurations: $(ms "$1") ms CPU"
	judge "plan, 200-configuration race (CPU s)" "$1" "<=" 0.2

	host_sweep small 10 >"$tmp/hsmall.yaml"
	host_sweep big 50 >"$tmp/hbig.yaml"
	db=$tmp/host.db
	builtin=$(estimate "$db" "$tmp/hbig.yaml")
	small=$(run_sweep "$db" "$tmp/hsmall.yaml")
	learned=$(estimate "$db" "$tmp/hbig.yaml")
	wall=$(run_sweep "$db" "$tmp/hbig.yaml")
	echo "host runner: 40 runs took $small s, stored"
	judge_estimate "host runner, 200 runs of a ~10 ms benchmark" "$learned" "$wall" "$builtin"
}

# ---- 3. guests -------------------------------------------------------------

# guest_sweep NAME REPETITIONS REUSE: 2 shapes, ebizzy 3 s in a TCG guest;
# with REUSE one guest per shape serves every block (reuse_runs).
guest_sweep() {
	reuse=$3
	[ "$3" = true ] && reuse="true, reuse_runs: $2"
	cat <<YAML
name: $1
libvirt: {uri: "qemu:///system", domain_type: auto, arch: x86_64, memory_mib: 384}
guest: {runner: agent, boot_timeout: 300, reuse: $reuse}
topology: [1x2x1, 1x1x2]
benchmark: {kind: ebizzy, argv: [ebizzy, -t, "2", -S, "3"], duration: 3, metric: records_per_s}
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: true}
repetitions: $2
YAML
}

# figures DB EXP: median and maximum, over the runs of EXP in a reused guest
# (no boot_seconds), of the time outside the window and of the window minus
# ebizzy's own elapsed time.
figures() {
	sqlite3 "$1" "SELECT (julianday(r.finished_at) - julianday(r.started_at)) * 86400 - w.value,
		w.value - e.value FROM runs r JOIN configurations c ON c.id = r.configuration_id
		JOIN metrics w ON w.run_id = r.id AND w.name = 'benchmark_seconds'
		JOIN metrics e ON e.run_id = r.id AND e.name = 'real_s'
		WHERE c.experiment_id = $2 AND r.status = 'ok' AND NOT EXISTS
		(SELECT 1 FROM metrics b WHERE b.run_id = r.id AND b.name = 'boot_seconds')" |
	python3 -c '
import statistics, sys
rows = [tuple(map(float, l.split("|"))) for l in sys.stdin if l.strip()]
if not rows:
    print("0 0 0 0 0"); sys.exit()
out, win = [r[0] for r in rows], [r[1] for r in rows]
print(len(rows), "%.3f %.3f %.3f %.3f" % (statistics.median(out), max(out),
      statistics.median(win), max(win)))'
}

bench_guests() {
	echo "bench: runs in TCG guests (load average $(cut -d' ' -f1 /proc/loadavg))"
	for b in /usr/sbin/libvirtd /usr/sbin/virtlogd /usr/bin/qemu-system-x86_64 /usr/bin/virsh; do
		[ -x "$b" ] || { echo "  skipped: $b not installed (scripts/deps.sh check)"; return; }
	done
	"$TA_TOP/scripts/guest-image.sh" >/dev/null ||
		{ echo "  skipped: cannot build the guest image"; return; }
	out=$("$TA_TOP/scripts/libvirtd-start.sh" --user $$) ||
		{ echo "  skipped: libvirtd did not start: $out"; return; }
	trap '"$TA_TOP/scripts/libvirtd-stop.sh" --user $$ >/dev/null 2>&1; rm -rf "$tmp"' EXIT
	db=$tmp/guests.db
	guest_sweep fresh1 2 false >"$tmp/g1.yaml"
	guest_sweep fresh2 3 false >"$tmp/g2.yaml"
	guest_sweep reused 4 true >"$tmp/g3.yaml"
	w=$(run_sweep "$db" "$tmp/g1.yaml")
	echo "a sweep without reuse (4 runs, 4 boots): $w s, stored"
	builtin=$(estimate "$tmp/none.db" "$tmp/g2.yaml")
	e=$(estimate "$db" "$tmp/g2.yaml")
	w=$(run_sweep "$db" "$tmp/g2.yaml")
	judge_estimate "TCG, 6 runs without reuse" "$e" "$w" "$builtin"
	builtin=$(estimate "$tmp/none.db" "$tmp/g3.yaml")
	e=$(estimate "$db" "$tmp/g3.yaml")
	w=$(run_sweep "$db" "$tmp/g3.yaml")
	judge_estimate "TCG, 8 runs in 2 reused guests" "$e" "$w" "$builtin"
	set -- $(figures "$db" 3)
	if [ "$1" -eq 0 ]; then
		echo "  below target: no run of the reused sweep ran in a reused guest"; missed=1
	else
		echo "runs in a reused guest ($1): outside the window median $2 s (max $3 s);" \
		     "window minus ebizzy's own time median $4 s (max $5 s)"
		judge "time outside the window, reused guest (median s)" "$2" "<=" 0.3
		judge "window minus the benchmark's time (median s)" "$4" "<=" 0.2
	fi

	[ "${BENCH_DEMO:-1}" = 0 ] && { echo "make demo's study: skipped (BENCH_DEMO=0)"; return; }
	# The sweeps above keep both CPUs busy and leave the 1-minute load
	# average at 2-3: give it up to 2 minutes to fall below 2, else the demo
	# is never judged after them on this 2-CPU machine.
	i=0
	while awk '{ exit !($1 >= 2) }' /proc/loadavg && [ $i -lt 120 ]; do
		sleep 1
		i=$((i + 1))
	done
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(now)
	exp=$("$TOPOADVISOR" --db "$tmp/demo.db" -q run "$TA_TOP/configs/ebizzy-tcg.yaml" \
		2>"$tmp/run.err") || { cat "$tmp/run.err" >&2; fail "the demo's sweep failed"; }
	wall=$(since "$t0")
	share=$(sqlite3 "$tmp/demo.db" "SELECT printf('%.1f', 100 * (1 - SUM(m.value) / $wall))
		FROM metrics m JOIN runs r ON r.id = m.run_id
		JOIN configurations c ON c.id = r.configuration_id
		WHERE c.experiment_id = $exp AND m.name = 'benchmark_seconds'")
	runs=$(sqlite3 "$tmp/demo.db" "SELECT COUNT(*) FROM runs r JOIN configurations c
		ON c.id = r.configuration_id WHERE c.experiment_id = $exp AND r.status <> 'planned'")
	echo "make demo's study: $runs runs in $wall s, ${share} % outside benchmark windows" \
	     "(load average $load at its start)"
	if awk -v l="$load" 'BEGIN { exit !(l < 2) }'; then
		judge "demo's overhead share (%)" "$share" "<=" 25
	else
		echo "  not judged: the host was busy (load average $load; the target is for a quiet one)"
	fi
}

# suite_lock_held: true when a process this one descends from holds the
# suite lock (`flock /tmp/ta-suite.lock make bench`, as the README says);
# taking it again on a new descriptor would wait for ourselves for ever.
suite_lock_held() {
	[ -e /tmp/ta-suite.lock ] || return 1
	ino=$(stat -c %i /tmp/ta-suite.lock)
	holders=$(awk -v i=":$ino\$" '$2 == "FLOCK" && $6 ~ i { print $5 }' /proc/locks)
	p=$$
	while [ "$p" -gt 1 ] 2>/dev/null; do
		for h in $holders; do [ "$h" = "$p" ] && return 0; done
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null) || return 1
	done
	return 1
}

# Arguments name the parts to run (store, plan, guests); none: all three.
parts=${*:-store plan guests}
for part in $parts; do
	case $part in
	store) bench_store ;;
	plan) bench_plan ;;
	guests)
		if suite_lock_held; then
			( bench_guests; exit $missed ) || missed=1
		else
			( flock 9; bench_guests; exit $missed ) 9>/tmp/ta-suite.lock || missed=1
		fi ;;
	*) fail "unknown part '$part' (store, plan, guests)" ;;
	esac
done
[ $missed -eq 0 ] && echo "bench-sweeps: all targets met" ||
	echo "bench-sweeps: some targets missed (see above)"
exit $missed
