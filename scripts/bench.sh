#!/bin/sh
# make bench: throughput of the exit collectors, as ratios measured in one run.
#
#  1. fakehv fires >= 5 M emulated kvm_hv events, recorded by trace-cmd as an
#     uncompressed and a zstd (default) version 7 file;
#  2. `topoadvisor exits` vs the named peer `trace-cmd report | awk` doing the
#     same per-vcore counting, on the same files: events/s and the ratio (and
#     both must agree on the counts);
#  3. the live path: `topoadvisor trace -- fakehv bench N`, three times:
#     events/s and loss count of each, judged on the median;
#  4. perf.data (the seed's workflow): the seed's own script, ported to
#     Python 3, under `perf script -s` against `exits --algorithm seed` on
#     the same 1 M-event recording (both must agree);
#  5. the fixed cost: `exits` on a 78 k-event default trace.dat that carries
#     the full kallsyms section;
#  6. `exits` against `trace-cmd report | awk` on a 2 M-event default (zstd)
#     recording, and the peak RSS on 20 M events uncompressed.
# Parts 4-6 compare CPU time (user + sys, of the whole pipeline for the
# peers), which the other work on a shared host does not inflate.
# Targets (DESIGN §6, issue 13): >= 20x the peer on both files, >= 10 M
# events/s uncompressed, live >= 2 M events/s with zero loss; >= 40x the
# seed script; <= 30 ms fixed cost; >= 20x the peer on 2 M zstd events;
# peak RSS <= 100 MB on 20 M events uncompressed.
set -u
TA_TOP=$(cd "$(dirname "$0")/.." && pwd)
TA_BUILD=${TA_BUILD:-$TA_TOP/build}
TOPOADVISOR=${TOPOADVISOR:-$TA_BUILD/topoadvisor}
export TA_TOP TA_BUILD TOPOADVISOR
ITER=${BENCH_ITERATIONS:-1250000}	# 4 events each
EVENTS=$((ITER * 4))
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
command -v trace-cmd >/dev/null || ta_skip "trace-cmd not installed"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.2f", n / s / 1e6 }'; }

# The peer: trace-cmd's text report counted by awk with the same per-runner rule.
PEER_AWK='
{
	ev = ""; for (i = 1; i <= NF; i++) if ($i ~ /^(kvmppc_run_core|kvm_guest_exit):$/) ev = $i
	if (ev == "") next
	n = split($1, a, "-"); pid = a[n]
	delete f
	for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
	if (ev == "kvmppc_run_core:") {
		t = f["tgid"]
		if (f["where"] == 0) { inrun[pid] = 1; ced[pid] = 0; tg[pid] = t }
		else if (inrun[pid]) { runs[t]++; if (f["n_runnable"] - ced[pid] > 1) gang[t]++; inrun[pid] = 0 }
		else bail[t]++
	} else {
		t = (pid in tg) ? tg[pid] : 0
		exits[t]++; reason[f["trap"]]++
		if (f["ceded"] != 0) { cedes[t]++; if (inrun[pid]) ced[pid]++ }
	}
}
END { for (t in runs) printf "tgid %s gang_exits %d core_runs %d guest_exits %d cedes %d\n", t, gang[t], runs[t], exits[t], cedes[t] }'

record() { # FILE ARGS... (retried: trace-cmd fails if /proc/kallsyms changes meanwhile)
	out=$1; shift
	for try in 1 2 3; do
		trace-cmd record -d --no-filter -C mono -b 65536 "$@" -e kvm_hv -o "$out" \
			sh -c "sleep 0.2; '$FAKEHV' bench $ITER" >"$WORK/rec.log" 2>&1
		[ -s "$out" ] && return
	done
	cat "$WORK/rec.log"; ta_fail "trace-cmd wrote no $out"
}

echo "bench: recording $EVENTS emulated kvm_hv events (uncompressed and zstd v7)..."
record "$WORK/none.dat" --compression none
record "$WORK/zstd.dat"
ls -l "$WORK/none.dat" "$WORK/zstd.dat" | awk '{ printf "  %s: %d MB\n", $NF, $5 / 1e6 }'

fail=0
for kind in none zstd; do
	f="$WORK/$kind.dat"
	"$TOPOADVISOR" --json exits "$f" >"$WORK/ours.json" || ta_fail "exits $f failed"
	got=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j['events'], j['lost_events'])" "$WORK/ours.json")
	[ "${got% *}" -eq $EVENTS ] || echo "  note: $kind recorded ${got% *} events (lost ${got#* }), not $EVENTS"
	n=${got% *}
	best=999
	for i in 1 2 3; do
		t0=$(now); "$TOPOADVISOR" exits "$f" >/dev/null; t1=$(now)
		best=$(awk -v a="$best" -v b="$(secs "$t0" "$t1")" 'BEGIN { print (b < a) ? b : a }')
	done
	t0=$(now); trace-cmd report "$f" 2>/dev/null | awk "$PEER_AWK" >"$WORK/peer.txt"; t1=$(now)
	peer=$(secs "$t0" "$t1")
	# Both must count the same.
	python3 - "$WORK/ours.json" "$WORK/peer.txt" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
ours = {str(p["tgid"]): (p["gang_exits"], p["core_runs"], p["guest_exits"], p["cedes"]) for p in j["processes"]}
peer = {}
for line in open(sys.argv[2]):
    w = line.split()
    peer[w[1]] = (int(w[3]), int(w[5]), int(w[7]), int(w[9]))
if ours != peer:
    print("  MISMATCH ours %r peer %r" % (ours, peer))
    sys.exit(1)
PY
	ratio=$(awk -v p="$peer" -v o="$best" 'BEGIN { printf "%.1f", p / o }')
	echo "offline $kind: topoadvisor exits $(rate "$n" "$best") M events/s ($best s);" \
	     "trace-cmd report | awk $(rate "$n" "$peer") M events/s ($peer s); ratio ${ratio}x"
	awk -v r="$ratio" 'BEGIN { exit !(r >= 20) }' || { echo "  below target: ratio < 20x"; fail=1; }
	if [ $kind = none ]; then
		awk -v n="$n" -v s="$best" 'BEGIN { exit !(n / s >= 10e6) }' \
			|| { echo "  below target: < 10 M events/s uncompressed"; fail=1; }
	fi
done

# libtracecmd 3.1.6's own reader on the same files (why we read data ourselves).
for kind in none zstd; do
	/usr/bin/time -f "%e %M" -o "$WORK/tc.time" "$TA_BUILD/tests/tcread" "$WORK/$kind.dat" >/dev/null \
		|| ta_fail "tcread failed"
	read -r t kb <"$WORK/tc.time"
	/usr/bin/time -f "%e %M" -o "$WORK/ta.time" "$TOPOADVISOR" exits "$WORK/$kind.dat" >/dev/null
	read -r t2 kb2 <"$WORK/ta.time"
	echo "libtracecmd read-only ($kind): $t s, $((kb / 1024)) MB RSS; topoadvisor exits: $t2 s, $((kb2 / 1024)) MB RSS"
done

# Live.  The emitter is the limit on this host: a NOP5 uprobe hit costs it
# ~0.85 us of kernel time, so two emitter threads top out near 2.3 M events/s
# with nobody reading.  Three times that ceiling and a live session (the
# host's own noise moves single runs by +-10 %): each session must lose
# nothing, and the median rate is held to the target.  The reader's CPU time
# comes from /proc/PPID/stat, read by the traced shell.
BI=ta-bench-$$
ta_track_instance $BI
mkdir $TRACEFS/instances/$BI || ta_fail "cannot make instance $BI"
alone=""
for i in 1 2 3; do	# interleaved, so the host's drift hits both alike
	echo 1 >$TRACEFS/instances/$BI/events/kvm_hv/enable
	t0=$(now); "$FAKEHV" bench $ITER 2; t1=$(now)
	echo 0 >$TRACEFS/instances/$BI/events/kvm_hv/enable
	alone="$alone $(rate $EVENTS "$(secs "$t0" "$t1")")"
	"$TOPOADVISOR" --json trace -- sh -c "'$FAKEHV' bench $ITER 2 && cat /proc/\$PPID/stat >'$WORK/reader.$i'" \
		>"$WORK/live.$i.json" || ta_fail "live trace failed"
done
rmdir $TRACEFS/instances/$BI
echo "emitter alone (2 threads, no reader):$alone M events/s"
python3 - "$WORK" $EVENTS "$(getconf CLK_TCK)" $alone <<'PY' || fail=1
import json, statistics, sys
work, want, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
alone = statistics.median(float(a) for a in sys.argv[4:])
rates, bad = [], False
for i in (1, 2, 3):
    j = json.load(open("%s/live.%d.json" % (work, i)))
    st = open("%s/reader.%d" % (work, i)).read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / hz
    r = j["events"] / j["span_seconds"]
    rates.append(r)
    complete = j["events"] + j["lost_events"] == want
    bad |= j["lost_events"] != 0 or not complete
    print("live run %d: %.2f M events/s over %.2f s, %d events, %d lost%s; reader %.2f CPU s "
          "(%.1f M events per CPU-second)" % (
        i, r / 1e6, j["span_seconds"], j["events"], j["lost_events"],
        "" if complete else " (expected %d in all)" % want, cpu,
        j["events"] / cpu / 1e6 if cpu else float("inf")))
med = statistics.median(rates)
print("live: median %.2f M events/s with zero loss (%.2f-%.2f); the emitter alone "
      "made a median %.2f: tracing costs it %.0f %%" % (
    med / 1e6, min(rates) / 1e6, max(rates) / 1e6, alone, 100 * (1 - med / 1e6 / alone)))
if bad or med < 2e6:
    print("  below target: live >= 2 M events/s with zero loss")
    sys.exit(1)
PY
# The smallest default buffer (1 MiB per CPU, on hosts with 256+ CPUs) at the
# same rate: shown, not judged (the target is about the default).
"$TOPOADVISOR" --json trace --buffer-kib 1024 -- "$FAKEHV" bench $ITER 2 >"$WORK/live.small.json" \
	|| ta_fail "live trace failed"
python3 - "$WORK/live.small.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("live, 1 MiB per-CPU buffer: %.2f M events/s, %d events, %d lost" % (
    j["events"] / j["span_seconds"] / 1e6, j["events"], j["lost_events"]))
PY
# CPU seconds (user + sys, to the microsecond) of a command and its children
# (tests/helpers/cputime.c); its output goes to $WORK/cpu.out, its peak RSS
# (KiB) to $WORK/cpu.rss.
cpu_time() {
	"$TA_BUILD/tests/helpers/cputime" "$WORK/cpu.out" "$@" >"$WORK/cpu.res" 2>"$WORK/cpu.err" \
		|| { cat "$WORK/cpu.err" >&2; echo "bench: $* failed" >&2; return 1; }
	read -r secs kib <"$WORK/cpu.res"
	echo "$kib" >"$WORK/cpu.rss"
	echo "$secs"
}
peak_mb() { awk '{ printf "%d", $1 / 1024 }' "$WORK/cpu.rss"; }
best_cpu() { # N CMD...: the least CPU time of N runs
	n=$1; shift; b=999
	for i in $(seq "$n"); do
		c=$(cpu_time "$@") || return 1
		b=$(awk -v a="$b" -v c="$c" 'BEGIN { print (c < a) ? c : a }')
	done
	echo "$b"
}
judge() { # WHAT VALUE OP TARGET
	if awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { exit !(op == ">=" ? v >= t : v <= t) }'; then
		echo "  target met: $1 $2 $3 $4"
	else
		echo "  below target: $1 $2 (target $3 $4)"; fail=1
	fi
}

# 4. perf.data: the seed's script against ours (64 MiB buffers: no loss).
SEED_ITER=${BENCH_SEED_ITERATIONS:-500000}
echo "bench: perf record of $((SEED_ITER * 4)) events (the seed's recipe, -m 64M)..."
# Retried: opening the uprobe events fails now and then with EINTR under load.
for try in 1 2 3 4 5; do
	perf record -q -m 64M -a -e kvm_hv:kvm_guest_exit -e kvm_hv:kvmppc_run_core \
		-o "$WORK/seed.data" "$FAKEHV" bench "$SEED_ITER" >"$WORK/rec.log" 2>&1 && break
	[ $try -eq 5 ] && { cat "$WORK/rec.log"; ta_fail "perf record failed"; }
	sleep 2
done
if perf version --build-options 2>/dev/null | grep -q 'libpython: *\[ on'; then
	seed_cpu=$(cpu_time perf script -i "$WORK/seed.data" -s "$TA_TOP/tests/helpers/gang-exits-seed.py") \
		|| ta_fail "the seed script failed"
	cp "$WORK/cpu.out" "$WORK/seed.out"
	ours_cpu=$(best_cpu 3 "$TOPOADVISOR" --json exits --algorithm seed "$WORK/seed.data") \
		|| ta_fail "exits failed"
	ours_mb=$(peak_mb)
	python3 - "$WORK/seed.out" "$WORK/cpu.out" <<'PY' || fail=1
import json, re, sys
theirs = {int(m.group(1)): int(m.group(2)) for m in
          re.finditer(r"Ganged exits for process (-?\d+) : +(\d+)", open(sys.argv[1]).read())}
j = json.load(open(sys.argv[2]))
ours = {p["tgid"]: p["gang_exits"] for p in j["processes"] if p["core_runs"] or p["bailouts"]}
print("  perf.data: %d events, %d lost; seed script and --algorithm seed agree: %s" % (
    j["events"], j["lost_events"], theirs == ours))
sys.exit(0 if theirs == ours else 1)
PY
	n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$WORK/cpu.out")
	ratio=$(awk -v a="$seed_cpu" -v b="$ours_cpu" 'BEGIN { printf "%.0f", a / b }')
	echo "perf.data: seed script under perf script $(rate "$n" "$seed_cpu") M events/s" \
	     "($seed_cpu CPU s); topoadvisor exits $(rate "$n" "$ours_cpu") M events/s" \
	     "($ours_cpu CPU s, $ours_mb MB peak RSS); ratio ${ratio}x"
	judge "seed-script ratio" "$ratio" ">=" 40
else
	echo "perf.data: this perf is built without Python scripting (perf version --build-options): seed script not run"
	t=$(best_cpu 3 "$TOPOADVISOR" exits "$WORK/seed.data") || ta_fail "exits failed"
	echo "perf.data: topoadvisor exits $t CPU s"
fi

# 5. Fixed cost: 78 k events in a default (zstd) file with the full kallsyms.
SMALL_ITER=19500
for try in 1 2 3; do
	trace-cmd record -d --no-filter -C mono -e kvm_hv -o "$WORK/small.dat" \
		sh -c "sleep 0.2; '$FAKEHV' bench $SMALL_ITER" >"$WORK/rec.log" 2>&1
	[ -s "$WORK/small.dat" ] && break
done
[ -s "$WORK/small.dat" ] || { cat "$WORK/rec.log"; ta_fail "no small recording"; }
kallsyms=$(trace-cmd dump --kallsyms "$WORK/small.dat" 2>/dev/null | wc -c)
fixed=$(best_cpu 5 "$TOPOADVISOR" exits "$WORK/small.dat") || ta_fail "exits failed"
fixed_ms=$(awk -v c="$fixed" 'BEGIN { printf "%.1f", c * 1000 }')
echo "fixed cost: $((SMALL_ITER * 4)) events, kallsyms section of $((kallsyms / 1024)) KiB:" \
     "topoadvisor exits ${fixed_ms} ms CPU (best of 5)"
judge "fixed cost (ms)" "$fixed_ms" "<=" 30

# 6a. 2 M events, default (zstd): against trace-cmd report | awk, CPU time.
MID_ITER=500000
for try in 1 2 3; do
	trace-cmd record -d --no-filter -C mono -b 65536 -e kvm_hv -o "$WORK/mid.dat" \
		sh -c "sleep 0.2; '$FAKEHV' bench $MID_ITER" >"$WORK/rec.log" 2>&1
	[ -s "$WORK/mid.dat" ] && break
done
[ -s "$WORK/mid.dat" ] || { cat "$WORK/rec.log"; ta_fail "no 2 M recording"; }
ours_cpu=$(best_cpu 3 "$TOPOADVISOR" exits "$WORK/mid.dat") || ta_fail "exits failed"
peer_cpu=$(cpu_time sh -c "trace-cmd report '$WORK/mid.dat' 2>/dev/null | awk '$PEER_AWK'") \
	|| ta_fail "the peer failed"
ratio=$(awk -v a="$peer_cpu" -v b="$ours_cpu" 'BEGIN { printf "%.1f", a / b }')
echo "2 M zstd events: topoadvisor exits $ours_cpu CPU s; trace-cmd report | awk $peer_cpu" \
     "CPU s; ratio ${ratio}x"
judge "2 M zstd ratio" "$ratio" ">=" 20

# 6b. Peak RSS on 20 M events, uncompressed.
BIG_ITER=${BENCH_BIG_ITERATIONS:-5000000}
for try in 1 2 3; do
	trace-cmd record -d --no-filter -C mono -b 65536 --compression none -e kvm_hv \
		-o "$WORK/big.dat" sh -c "sleep 0.2; '$FAKEHV' bench $BIG_ITER" >"$WORK/rec.log" 2>&1
	[ -s "$WORK/big.dat" ] && break
done
[ -s "$WORK/big.dat" ] || { cat "$WORK/rec.log"; ta_fail "no 20 M recording"; }
t=$(cpu_time "$TOPOADVISOR" --json exits "$WORK/big.dat") || ta_fail "exits failed"
big_mb=$(peak_mb)
n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$WORK/cpu.out")
echo "20 M uncompressed: $n events in $(($(stat -c %s "$WORK/big.dat") / 1000000)) MB:" \
     "topoadvisor exits $t CPU s, peak RSS $big_mb MB"
judge "peak RSS (MB)" "$big_mb" "<=" 100
rm -f "$WORK/big.dat"

[ $fail -eq 0 ] && echo "bench: all targets met" || echo "bench: some targets missed (see above)"
exit $fail
