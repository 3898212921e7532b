#!/bin/sh
# scripts/mutate.py, the mutation tool itself (not a mutation run): it never
# mutates inside assert(...)/testcase(...) (a mutant there cannot be killed
# by a passing test, so mutating invariants only rewarded deleting them),
# its sample is drawn afresh from a seed and replayed by --seed, and it
# names the unit tests for every folder it is asked to mutate.
. "$TA_TOP/tests/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3 to run scripts/mutate.py"
ta_tmpdir
m="$TA_TOP/scripts/mutate.py"
cd "$TA_TOP" || fail "cannot enter $TA_TOP"

# The fixture has a '<', a '&&' and a '==' inside assert/testcase and two
# relational operators in code: only the latter two are mutated.
python3 "$m" --list --files tests/fixtures/mutate/sample.c >"$tmp/list" ||
	fail "mutate.py --list failed"
printf '%s\n' 'tests/fixtures/mutate/sample.c:8: < -> <=' \
	'tests/fixtures/mutate/sample.c:10: > -> >=' >"$tmp/want"
cmp -s "$tmp/want" "$tmp/list" || fail "mutants of the fixture differ: $(cat "$tmp/list")"

# A sample is a function of its seed; two seeds draw two samples.
python3 "$m" --list --sample 4 --seed 7 >"$tmp/a" 2>/dev/null || fail "--sample failed"
python3 "$m" --list --sample 4 --seed 7 >"$tmp/b" 2>/dev/null || fail "--sample failed"
python3 "$m" --list --sample 4 --seed 8 >"$tmp/c" 2>/dev/null || fail "--sample failed"
python3 "$m" --list >"$tmp/all" || fail "--list of decide/ failed"
cmp -s "$tmp/a" "$tmp/b" || fail "the same seed drew two samples"
cmp -s "$tmp/a" "$tmp/c" && fail "two seeds drew the same sample"
all=$(wc -l <"$tmp/all")
got=$(wc -l <"$tmp/a")
[ "$got" -gt $((all / 8)) ] && [ "$got" -lt $((all / 2)) ] ||
	fail "a 1/4 sample of $all mutants has $got"
# Without --seed the seed is printed, so the run can be replayed.
python3 "$m" --list --sample 4 2>&1 >/dev/null | grep -q -- '--seed [0-9]' ||
	fail "a fresh sample does not print its seed"

# Every mutated folder has its unit tests; an unknown one is refused, not scored.
for f in decide/engine.c collectors/gang.c experiments/plan.c model/config-record.c; do
	python3 - "$f" <<'PY' || fail "no unit tests named for $f"
import sys, importlib.util
spec = importlib.util.spec_from_file_location("mutate", "scripts/mutate.py")
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.exit(0 if mod.tests_for(sys.argv[1]) else 1)
PY
done
python3 "$m" --files util/strbuf.c --out "$tmp/s" >"$tmp/out" 2>&1 &&
	fail "a file without unit tests was scored"
grep -q 'no unit tests are named for util/strbuf.c' "$tmp/out" ||
	fail "the refusal does not say why: $(cat "$tmp/out")"
echo "mutate-tool: asserts skipped, seeded samples, tests per folder"
