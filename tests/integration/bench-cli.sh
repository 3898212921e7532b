#!/bin/sh
# The instrument of `make bench-advisor`'s command-line part, checked so its
# rates can be trusted: truth-bench draws what its spec says (mean, CV,
# tails, the slowest runs failing, boots, reproducible per configuration and
# seed), and the driver's smoke case takes sweeps of truths no working
# pipeline can miss (+100 % at CV 1 %) through run, rank, recommend, extend,
# rerun and compare.  Fixed seeds: nothing here depends on chance.
. "$TA_TOP/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 not installed (scripts/deps.sh check)"
bench=$TA_BUILD/tests/helpers/truth-bench
[ -x "$bench" ] || fail "$bench not built (make units)"
ta_tmpdir

knob=sys/module/kvm_hv/parameters/dynamic_mt_modes
mkdir -p "$tmp/root/$(dirname $knob)"
echo 6 >"$tmp/root/$knob"

# spec NAME SEED TRUTH...: a spec keyed by the knob, with its own state.
spec() {
	name=$1 seed=$2; shift 2
	mkdir -p "$tmp/$name.state"
	{
		echo "root $tmp/root"
		echo "state $tmp/$name.state"
		echo "seed $seed"
		echo "knob kvm_hv.dynamic_mt_modes $knob"
		for t in "$@"; do echo "truth $t"; done
	} >"$tmp/$name"
}
# draw NAME N: N runs; prints each value, or "fail" for a failed run.
draw() {
	: >"$tmp/draw"
	i=0
	while [ $i -lt "$2" ]; do
		"$bench" "$tmp/$1" >>"$tmp/draw" 2>/dev/null
		case $? in
		0) ;;
		3) echo "throughput: fail ops/s" >>"$tmp/draw" ;;
		*) fail "truth-bench $1 exited with an unexpected status" ;;
		esac
		i=$((i + 1))
	done
	sed -n 's/^throughput: \([0-9.]*\|fail\) ops\/s$/\1/p' "$tmp/draw"
}

# Log-normal with the asked mean and CV (400 runs: the mean's SE is 0.25 %).
spec clean 11 "6 mean=100 cv=0.05"
draw clean 400 >"$tmp/v"
awk '{ n++; s += $1; q += $1 * $1 } END { m = s / n; sd = sqrt((q - n * m * m) / (n - 1));
	exit !(n == 400 && m > 98 && m < 102 && sd / m > 0.04 && sd / m < 0.06) }' "$tmp/v" ||
	fail "clean draws: not mean 100, CV 5 %: $(awk '{ s += $1 } END { print NR, s / NR }' "$tmp/v")"
# The benchmark's own log holds every run with its key.
[ "$(grep -c '^6 [0-9]* ok ' "$tmp/clean.state/log")" = 400 ] || fail "run log"

# Reproducible: the k-th run of a configuration follows from (seed, key, k).
spec again 11 "6 mean=100 cv=0.05"
draw again 400 | cmp -s - "$tmp/v" || fail "the same seed drew other values"
spec other 12 "6 mean=100 cv=0.05"
head -n 5 "$tmp/v" >"$tmp/v5"
draw other 5 | cmp -s - "$tmp/v5" && fail "another seed drew the same values"

# The configuration comes from the knob; the first matching truth counts.
echo 0 >"$tmp/root/$knob"
spec gain 11 "0 mean=200 cv=0.01" "* mean=100 cv=0.01"
draw gain 20 | awk '$1 < 180 || $1 > 220 { bad = 1 } END { exit bad }' ||
	fail "knob value 0 did not select mean 200"
echo 6 >"$tmp/root/$knob"
draw gain 20 | awk '$1 < 90 || $1 > 110 { bad = 1 } END { exit bad }' ||
	fail "knob value 6 did not fall through to mean 100"

# Heavy tails: about 5 % of runs 3x slower.
spec tails 11 "* cv=0.05 tail_p=0.05"
draw tails 400 | awk '$1 < 50 { slow++ } END { exit !(slow >= 8 && slow <= 40) }' ||
	fail "tails: not about 5 % of runs 3x slower"

# Informative failures: the slowest 30 % fail, so every failure is slower
# than every run that succeeded (the log keeps their values).
spec failing 11 "* cv=0.05 fail_slow=0.3"
draw failing 400 >"$tmp/f"
n=$(grep -c fail "$tmp/f")
[ "$n" -ge 80 ] && [ "$n" -le 160 ] || fail "fail_slow=0.3 failed $n of 400 runs"
awk '$3 == "fail" && $4 > maxf { maxf = $4 } $3 == "ok" && (minok == "" || $4 < minok) { minok = $4 }
	END { exit !(maxf < minok) }' "$tmp/failing.state/log" || fail "a failed run was not among the slowest"

# Boots: guest.prepare draws a boot's effect, every run of the boot shares it.
spec boot 11 "* cv=0.05 boot_sd=0.5"
"$bench" "$tmp/boot" >/dev/null 2>&1 && fail "boot_sd without a boot drawn should fail"
"$bench" --boot "$tmp/boot" || fail "truth-bench --boot"
spec noboot 11 "* cv=0.05"
cp "$tmp/boot.state/boot" "$tmp/b1"
draw boot 3 >"$tmp/with"
draw noboot 3 | paste "$tmp/with" - |
	awk '{ r = $1 / $2; if (NR > 1 && (r / r1 > 1.0001 || r / r1 < 0.9999)) bad = 1; r1 = r }
	END { exit bad }' || fail "the runs of one boot do not share its effect"
"$bench" --boot "$tmp/boot"
cmp -s "$tmp/boot.state/boot" "$tmp/b1" && fail "a second boot drew the same effect"

# Explicit pinnings: the key is the CPUs the host runner pinned it to, and
# boot_by keeps one boot per pinning (reuse group), as sessions interleave.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	mkdir -p "$tmp/pin.state"
	printf 'root %s\nstate %s\nseed 3\nknob pin @affinity\nboot_by pin\ntruth * cv=0.05 boot_sd=0.5\n' \
		"$tmp/root" "$tmp/pin.state" >"$tmp/pin"
	taskset -c 0 "$bench" --boot "$tmp/pin" || fail "--boot pinned to cpu 0"
	taskset -c 0 "$bench" "$tmp/pin" >/dev/null || fail "a run in the boot of cpu 0"
	taskset -c 1 "$bench" "$tmp/pin" >/dev/null 2>&1 && fail "cpu 1 ran in the boot of cpu 0"
	taskset -c 1 "$bench" --boot "$tmp/pin" && taskset -c 1 "$bench" "$tmp/pin" >/dev/null ||
		fail "a run in the boot of cpu 1"
	[ "$(cut -d' ' -f1 "$tmp/pin.state/log" | tr '\n' ' ')" = "0 1 " ] ||
		fail "affinity keys: $(cat "$tmp/pin.state/log")"
	cmp -s "$tmp/pin.state/boot-0" "$tmp/pin.state/boot-1" && fail "two pinnings drew one boot"
fi

# Bad specs exit 2 with a reason.
printf 'root %s\nstate %s\nseed 1\nknob x %s\ntruth * cv=oops\n' "$tmp/root" "$tmp" "$knob" >"$tmp/bad"
"$bench" "$tmp/bad" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "bad number" "$tmp/err" || fail "bad spec: $(cat "$tmp/err")"
printf 'root %s\nstate %s\nseed 1\nknob x %s\ntruth 0 cv=0.1\n' "$tmp/root" "$tmp" "$knob" >"$tmp/bad"
"$bench" "$tmp/bad" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "no truth line matches" "$tmp/err" || fail "unmatched key: $(cat "$tmp/err")"

# The driver end to end, on truths that cannot be missed, seeds fixed.
BENCH_CASES=smoke BENCH_JOBS=1 BENCH_SEED=1 BENCH_TMP="$tmp" TRUTH_BENCH="$bench" \
	python3 "$TA_TOP/tests/bench/advisor-cli.py" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; fail "advisor-cli smoke exited $rc"; }
[ "$(grep -c ' PASS$' "$tmp/out")" = 4 ] || { cat "$tmp/out"; fail "smoke: not 4 PASS lines"; }
grep -q "every target met" "$tmp/out" || { cat "$tmp/out"; fail "smoke summary"; }
# A case that does not exist is bad usage.
BENCH_CASES=nonesuch TRUTH_BENCH="$bench" python3 "$TA_TOP/tests/bench/advisor-cli.py" \
	>/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "BENCH_CASES=nonesuch should exit 2"
# Nothing left behind in the scratch directory but ours.
[ -z "$(find "$tmp" -maxdepth 1 -name 'ta-bench-*')" ] || fail "sweep directories left behind"
pass
