#!/bin/sh
# Exit handling time on the committed real recordings, against an
# independent reference: tests/helpers/exit-times-ref.py pairs each exit with
# its vCPU's next entry in `trace-cmd report -R -t` text (libtraceevent's
# reading of the file, not ours).  Every (reason, process, vCPU) must have
# the same count, timed pairs, total, min and max to the nanosecond, and the
# unmatched exits, unpaired entries and lost-event gaps the same counts.
# POWER8 and POWER9 (emulated powernv, kvm_hv) were recorded with
# kvm_guest_enter; the nested-SVM recording has no kvm:kvm_entry, so its
# exits must say "not timed", never 0.  Synthesized POWER9 files add doorbell
# exits (H_FAC_UNAVAIL) and a lost-events gap with known answers.
# perf kvm stat is not compared: it reads only perf.data recorded by
# `perf kvm stat record` on the host's own architecture (and its CPU vendor
# from the file's header), and every recording committed here is a trace.dat
# (the x86 one without kvm_entry); none of kvm events in perf.data can be
# made on this machine without booting a guest.
set -u
. "$TA_TOP/tests/lib.sh"

command -v trace-cmd >/dev/null || skip "trace-cmd not installed (scripts/deps.sh check)"
command -v python3 >/dev/null || skip "python3 not installed"
ta_tmpdir
real=$TA_TOP/tests/fixtures/real

# Synthesized POWER9 recordings (tests/helpers/mkpowertrace.py --p9): doorbell
# exits of two vCPU threads, big- and little-endian, and one whose CPU 0 page
# says events were lost before it.
gen() { python3 "$TA_TOP/tests/helpers/mkpowertrace.py" "$@" || fail "generator failed"; }
gen "$tmp/p9-be.dat" --p9
gen "$tmp/p9-le.dat" --p9 --little
gen "$tmp/p9-gap.dat" --p9 --gap
n=0
for f in "$real/power8/trace.dat" "$real/power9/trace.dat" "$real"/power8-smt/*.dat \
	 "$real"/power8-smt-stock/*.dat "$tmp"/p9-*.dat; do
	"$TOPOADVISOR" --json exits "$f" >"$tmp/ours.json" || fail "exits --json $f exited $?"
	trace-cmd report -R -t "$f" 2>/dev/null | python3 "$TA_TOP/tests/helpers/exit-times-ref.py" \
		>"$tmp/ref.json" || fail "the reference cannot read $f"
	python3 - "$tmp/ours.json" "$tmp/ref.json" "$f" <<'PY' || fail "exit times of $f differ from the reference (above)"
import json, sys
ours, ref, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
t = ours["exit_times"]
assert t["timed"] is True and t["why"] is None, t
got = {}
for x in ours["exit_reasons_by_vcpu"]:
    if x["source"] == "userspace":
        assert x["time_pairs"] is None and x["time_total_s"] is None, x
        continue
    key = "%s %d %d %d" % (x["source"], x["reason"], x["tgid"], x["vcpu"])
    ns = lambda s: None if s is None else round(s * 1e9)
    got[key] = [x["count"], x["time_pairs"], ns(x["time_total_s"]), ns(x["time_min_s"]),
                ns(x["time_max_s"]) if x["time_pairs"] else 0]
want = ref["reasons"]
if got != want:
    print(name, "ours:", json.dumps(got, sort_keys=True), "\nreference:", json.dumps(want, sort_keys=True))
    sys.exit(1)
counts = (t["unmatched_exits"], t["unpaired_entries"], t["across_lost_events"], t["entry_events"])
if counts != (ref["unmatched"], ref["unpaired"], ref["gap"], ref["entries"]):
    print(name, "untimed counts", counts, "reference", ref)
    sys.exit(1)
pairs = sum(v[1] for v in want.values())
assert t["pairs"] == pairs and pairs > 0, (t, pairs)
# The per-reason sums in exit_reasons add up the per-vCPU rows.
for r in ours["exit_reasons"]:
    if r["source"] == "userspace":
        continue
    rows = [v for k, v in want.items() if k.startswith("%s %d " % (r["source"], r["reason"]))]
    assert r["time_pairs"] == sum(v[1] for v in rows), r
    assert round(r["time_total_s"] * 1e9) == sum(v[2] for v in rows), r
print("ok:", name, pairs, "pairs")
PY
	n=$((n + 1))
done
[ "$n" -ge 11 ] || fail "only $n recordings checked"

# The synthesized POWER9 answers (mkpowertrace.py's docstring): doorbells per
# process and vCPU with their times, the untimed counts, gang columns null.
for f in p9-be p9-le p9-gap; do
	"$TOPOADVISOR" --json exits "$tmp/$f.dat" >"$tmp/$f.json" || fail "exits $f exited $?"
	python3 - "$tmp/$f.json" "$f" <<'PY' || fail "wrong doorbell answer for $f"
import json, sys
j, gap = json.load(open(sys.argv[1])), sys.argv[2] == "p9-gap"
d = {(x["tgid"], x["vcpu"]): (x["count"], x["time_pairs"], round(x["time_total_s"] * 1e9))
     for x in j["doorbells"]}
assert d == {(7001, 0): (3, 2 if gap else 3, 4000 if gap else 5000),
             (7002, 1): (1, 1, 2000)}, d
t = j["exit_times"]
assert (t["pairs"], t["unmatched_exits"], t["across_lost_events"], t["unpaired_entries"]) == \
    ((4, 1, 1, 2) if gap else (5, 1, 0, 2)), t
assert all(p["gang_exits"] is None and p["core_runs"] is None for p in j["processes"]), j["processes"]
r = {x["name"]: x for x in j["exit_reasons"]}
assert r["H_FAC_UNAVAIL"]["count"] == 4 and r["HV_DECREMENTER"]["time_pairs"] == 1, r
PY
done
"$TOPOADVISOR" exits "$tmp/p9-be.dat" >"$tmp/p9.txt" || fail "exits exited $?"
grep -q '^Doorbell exits (msgsndp to a sibling vCPU, trapped as H_FAC_UNAVAIL 0xf80 on POWER9+): 4$' "$tmp/p9.txt" &&
	grep -Eq '^ +7001  0 +3 +0\.000005$' "$tmp/p9.txt" ||
	{ cat "$tmp/p9.txt"; fail "no doorbell table per process and vCPU"; }

# The text table: a line per reason with its timed count and total, and the
# untimed ones said.
"$TOPOADVISOR" exits "$real/power8/trace.dat" >"$tmp/p8.txt" || fail "exits exited $?"
grep -Eq '^  powerpc +SYSCALL +20 +100\.00 +19 +100\.00 +0\.003403 ' "$tmp/p8.txt" &&
	grep -q '^Not timed: 1 exits with no entry' "$tmp/p8.txt" ||
	{ cat "$tmp/p8.txt"; fail "the POWER8 time table is not as the reference says"; }

# No entry events (the nested-SVM recording): not timed, in text and JSON.
"$TOPOADVISOR" exits "$real/svm/trace.dat" >"$tmp/svm.txt" || fail "exits exited $?"
grep -q '^Exit handling time: not timed (no entry events in this recording' "$tmp/svm.txt" ||
	{ cat "$tmp/svm.txt"; fail "the SVM recording's exits are not said to be untimed"; }
"$TOPOADVISOR" --json exits "$real/svm/trace.dat" >"$tmp/svm.json" || fail "exits --json exited $?"
python3 - "$tmp/svm.json" <<'PY' || fail "the SVM recording's JSON gives times"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["exit_times"]["timed"] is False and "no entry events" in j["exit_times"]["why"]
for x in j["exit_reasons"] + j["exit_reasons_by_vcpu"]:
    for k in ("time_total_s", "time_min_s", "time_avg_s", "time_max_s", "time_pairs"):
        assert x[k] is None, x
PY

# POWER9: the ganged columns are not applicable, never 0.
"$TOPOADVISOR" --json exits "$real/power9/trace.dat" >"$tmp/p9.json" || fail "exits exited $?"
python3 - "$tmp/p9.json" <<'PY' || fail "POWER9's gang columns are not 'not applicable'"
import json, sys
j = json.load(open(sys.argv[1]))
for p in j["processes"]:
    assert p["gang_exits"] is None and p["core_runs"] is None and p["bailouts"] is None, p
    assert p["gang_columns_why"] == "not applicable on POWER9+ (one vCPU per vcore)", p
PY
"$TOPOADVISOR" exits "$real/power9/trace.dat" | grep -q 'not applicable on POWER9+ (one vCPU per vcore)' ||
	fail "the text does not say the gang columns are not applicable on POWER9"
"$TOPOADVISOR" --json exits "$real/power8/trace.dat" | grep -q gang_columns_why &&
	fail "POWER8 gang columns said not applicable"
echo "ok: $n recordings agree with the reference"
