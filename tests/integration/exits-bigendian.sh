#!/bin/sh
# A trace-cmd file from a big-endian POWER8 host (64 KiB pages, int/pid_t/
# unsigned long/u8 fields, two CPUs, two vcores of one VM at once) gives the
# known answers with both gang rules, the same as its little-endian twin;
# recorded overruns make the counts lower bounds; damaged copies are rejected
# cleanly.  The same events as perf.data (file and pipe mode, both byte
# orders) give the same answers, and structurally damaged perf.data is
# refused with what and where.  Needs no root: the files are generated.
set -u
TA=${TOPOADVISOR:-$TA_TOP/topoadvisor}
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
WORK=$(mktemp -d /tmp/ta-be.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "FAIL: $*"; exit 1; }
export LSAN_OPTIONS="suppressions=$TA_TOP/tests/helpers/lsan.supp:print_suppressions=0"

gen() { python3 "$TA_TOP/tests/helpers/mkpowertrace.py" "$@" || fail "generator failed"; }
gen "$WORK/be.dat"
gen "$WORK/le.dat" --little
gen "$WORK/lost.dat" --lost 7

check() { # FILE ALGO GANG LOST
	"$TA" --json exits --algorithm "$2" "$1" >"$WORK/out.json" 2>"$WORK/err" \
		|| { cat "$WORK/err"; fail "exits $1 failed"; }
	python3 - "$WORK/out.json" "$3" "$4" <<'PY' || fail "wrong answer for $1 ($2)"
import json, sys
j = json.load(open(sys.argv[1])); gang = int(sys.argv[2]); lost = int(sys.argv[3])
try:
    p = {x["tgid"]: x for x in j["processes"]}
    q = p[4242]
    assert (q["gang_exits"], q["core_runs"], q["bailouts"], q["guest_exits"], q["cedes"]) == \
        (gang, 8, 1, 16, 4), q
    assert q["comm"] == "qemu-system-ppc", q
    assert (p[-5]["core_runs"], p[-5]["gang_exits"]) == (1, 0), p[-5]
    r = {x["name"]: x["count"] for x in j["exit_reasons"]}
    assert r == {"H_DATA_STORAGE": 12, "HV_DECREMENTER": 2, "EXTERNAL": 2, "-0x1": 1}, r
    v = [x for x in j["exit_reasons_by_vcpu"] if x["tgid"] == -5]
    # No kvm_guest_enter in this file: the times are null, never 0.
    assert v == [{"tgid": -5, "vcpu": -1, "source": "powerpc", "reason": -1, "name": "-0x1",
                  "count": 1, "time_total_s": None, "time_min_s": None, "time_avg_s": None,
                  "time_max_s": None, "time_pairs": None}], v
    assert j["exit_times"]["timed"] is False and "no entry events" in j["exit_times"]["why"]
    assert j["events"] == 36 and j["applicable"] is True
    assert j["lost_events"] == lost and j["lost_events_exact"] is True
    assert j["counts_are_lower_bounds"] is (lost > 0)
except (AssertionError, KeyError) as e:
    print("assertion failed:", repr(e)); print(json.dumps(j, indent=1)[:2500]); sys.exit(1)
PY
}
check "$WORK/be.dat" vcore 4 0
check "$WORK/be.dat" seed 2 0
check "$WORK/le.dat" vcore 4 0
check "$WORK/le.dat" seed 2 0
check "$WORK/lost.dat" vcore 4 7
"$TA" exits "$WORK/lost.dat" | grep -q "lower bound" || fail "no lower-bound warning in text"
echo "ok: big-endian POWER file, both rules, losses"

# The same events as perf.data: file and pipe mode, both byte orders.
for v in "be.perf:--perf" "le.perf:--perf --little" "bep.perf:--perf-pipe" \
	 "lep.perf:--perf-pipe --little"; do
	# shellcheck disable=SC2086
	gen "$WORK/${v%%:*}" ${v#*:}
	check "$WORK/${v%%:*}" vcore 4 0
	check "$WORK/${v%%:*}" seed 2 0
done
gen "$WORK/lost.perf" --perf --lost 7
check "$WORK/lost.perf" vcore 4 7
echo "ok: perf.data, file and pipe mode, both byte orders, losses"

# Structurally damaged perf.data: each case exit 2 with what and where.
for src in be.perf le.perf; do
	for case in "data-beyond:data section lies beyond" "attr-size0:attribute size is impossible" \
		    "record-size0:shorter than its header (at offset" \
		    "no-tracing:before the event formats" "raw-huge:raw data runs past" \
		    "ids-beyond:ids section lies beyond" "compressed:perf record -z" \
		    "callchain-huge:call chain runs past"; do
		python3 "$TA_TOP/tests/helpers/perfpatch.py" "$WORK/$src" "$WORK/h.perf" "${case%%:*}" \
			|| fail "perfpatch ${case%%:*}"
		timeout 20 "$TA" exits "$WORK/h.perf" >"$WORK/out" 2>"$WORK/err"
		rc=$?
		[ $rc -eq 2 ] || fail "$src ${case%%:*}: exit $rc, want 2: $(cat "$WORK/out" "$WORK/err")"
		grep -q -- "${case#*:}" "$WORK/err" || fail "$src ${case%%:*}: message: $(cat "$WORK/err")"
	done
done
# Every truncation of a trace.dat (v6; v7 plain and zstd, made by trace-cmd
# convert where installed) or a file-mode perf.data is refused: never a
# shorter valid recording.
gen "$WORK/x86-6.dat" --x86
set -- "$WORK/be.dat" "$WORK/le.dat" "$WORK/x86-6.dat" "$WORK/be.perf" "$WORK/le.perf" \
	"$WORK/lost.perf"
if command -v trace-cmd >/dev/null; then
	trace-cmd convert -i "$WORK/le.dat" --file-version 7 --compression none \
		-o "$WORK/le7.dat" >/dev/null 2>&1 && set -- "$@" "$WORK/le7.dat"
	trace-cmd convert -i "$WORK/le.dat" --file-version 7 --compression zstd \
		-o "$WORK/le7z.dat" >/dev/null 2>&1 && set -- "$@" "$WORK/le7z.dat"
fi
# The recordings of a real POWER8/POWER9 kvm_hv (v7 zstd, trace-cmd:ppc64el) too.
for real in "$TA_TOP"/tests/fixtures/real/*/trace.dat; do
	[ -f "$real" ] && set -- "$@" "$real"
done
"$TA_BUILD/tests/helpers/prefixes" "$@" || fail "a truncated file read as a valid recording"

# A pipe recording cut before its tracing data is not an empty recording.
head -c 304 "$WORK/bep.perf" >"$WORK/cut.perf"
"$TA" exits "$WORK/cut.perf" >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] || fail "a pipe recording cut before its formats should exit 2"
echo "ok: damaged perf.data refused with what and where"

# Damage inside a stretch of samples, where the first pass's lanes run
# (these files' samples are in two rounds, so the merge reads them; a
# time-ordered one: exits-perf.sh): the file is read, its counts flagged as
# lower bounds with the damage named; the sample of no recorded tracepoint
# is not counted.
for src in be.perf le.perf; do
	"$TA" --json exits "$WORK/$src" >"$WORK/whole.json" || fail "exits $src"
	for case in "raw-short-mid:impossible type or size:0" "type-mid:no recorded tracepoint:1"; do
		c=${case%%:*} rest=${case#*:}
		python3 "$TA_TOP/tests/helpers/perfpatch.py" "$WORK/$src" "$WORK/h.perf" "$c" ||
			fail "perfpatch $c"
		"$TA" --json exits "$WORK/h.perf" >"$WORK/h.json" 2>"$WORK/err" ||
			fail "$src $c: exit $?: $(cat "$WORK/err")"
		python3 "$TA_TOP/tests/helpers/damagecheck.py" "$WORK/whole.json" "$WORK/h.json" \
			"$src $c" "${rest%:*}" "${rest##*:}" || fail "$src $c"
	done
done
echo "ok: damage inside a stretch of samples flagged and named"

# An x86 host's file: kvm:kvm_exit (VMX and SVM) and kvm:kvm_userspace_exit.
gen "$WORK/x86.dat" --x86
"$TA" --json exits "$WORK/x86.dat" >"$WORK/x86.json" || fail "exits x86 failed"
python3 - "$WORK/x86.json" <<'PY' || fail "wrong x86 answer"
import json, sys
j = json.load(open(sys.argv[1]))
r = {(x["source"], x["name"]): x["count"] for x in j["exit_reasons"]}
assert r == {("vmx", "HLT"): 5, ("vmx", "IO_INSTRUCTION"): 3, ("vmx", "INVALID_STATE"): 1,
             ("svm", "HLT"): 2, ("userspace", "IO"): 3}, r
assert j["applicable"] is False and "no kvm_hv" in j["why"], j
# A recording names no processes: one entry per thread.
assert j["x86_per_thread"] is True, j
assert [(p["tgid"], p["guest_exits"], p["gang_exits"]) for p in j["processes"]] == \
    [(6001, 6, None), (6002, 5, None)], j["processes"]
v = {(x["source"], x["vcpu"]): x["count"] for x in j["exit_reasons_by_vcpu"] if x["name"] == "HLT"}
assert v == {("vmx", 0): 5, ("svm", 1): 2}, v
PY
echo "ok: x86 exit reasons"

mkdir "$WORK/bad"
python3 "$TA_TOP/tests/helpers/corrupt.py" "$WORK/be.dat" "$WORK/bad" 60
python3 "$TA_TOP/tests/helpers/corrupt.py" "$WORK/be.perf" "$WORK/bad" 60
python3 "$TA_TOP/tests/helpers/corrupt.py" "$WORK/bep.perf" "$WORK/bad" 60
export ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=halt_on_error=1:exitcode=98
ok=0 rejected=0
for f in "$WORK"/bad/*; do
	timeout 60 "$TA" exits "$f" >/dev/null 2>"$WORK/err"
	rc=$?
	case $rc in
	0)
		# A cut perf.data (file mode) is always an error, never a short result.
		case $f in *be.perf.cut*) fail "$f: a truncated perf.data was read as valid" ;; esac
		ok=$((ok + 1)) ;;
	2)
		grep -q "$f" "$WORK/err" || fail "$f: message does not name the file: $(cat "$WORK/err")"
		rejected=$((rejected + 1)) ;;
	*) cat "$WORK/err"; cp "$f" /tmp/topoadvisor-be-failure.dat
	   fail "$f: exit $rc (kept as /tmp/topoadvisor-be-failure.dat)" ;;
	esac
done
[ $rejected -gt 0 ] || fail "no damaged file was rejected"
echo "damaged big-endian files: $ok still readable, $rejected rejected"
