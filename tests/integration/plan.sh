#!/bin/sh
# `plan` on every shipped example (text and valid JSON with the documented
# keys), and a bad config exits 2 naming file:line:column.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir

for c in "$TA_TOP"/configs/*.yaml; do
	"$TOPOADVISOR" plan "$c" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "plan $c"; }
	grep -Eq '^[0-9]+ configurations x [0-9]+ repetitions = [0-9]+ runs' "$tmp/out" ||
		fail "plan $c: no run count line"
	"$TOPOADVISOR" plan --json "$c" >"$tmp/json" || fail "plan --json $c"
	for key in configurations runs dropped estimated_seconds; do
		grep -q "\"$key\":" "$tmp/json" || fail "plan --json $c lacks $key"
	done
	[ "$(sqlite3 :memory: "SELECT json_valid(readfile('$tmp/json'))")" = 1 ] ||
		fail "plan --json $c is not valid JSON"
	# Every configuration has a key, and keys are unique.
	n=$(sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'), '\$.configurations')")
	u=$(sqlite3 :memory: "SELECT COUNT(DISTINCT value ->> 'key') FROM json_each(readfile('$tmp/json'), '\$.configurations')")
	[ "$n" -gt 0 ] && [ "$n" = "$u" ] || fail "plan --json $c: $n configurations, $u keys"
done

# The quickstart: 3 shapes x 2 noise loads x 3 repetitions, one baseline.
"$TOPOADVISOR" plan --json "$TA_TOP/configs/quickstart.yaml" >"$tmp/json"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/json') ->> '\$.runs'")" = 18 ] || fail "quickstart runs"
[ "$(sqlite3 :memory: "SELECT COUNT(*) FROM json_each(readfile('$tmp/json'), '\$.configurations') WHERE value ->> 'baseline'")" = 1 ] ||
	fail "quickstart baseline"

# A dropped combination is listed with its reason.
cat >"$tmp/drop.yaml" <<'YAML'
name: drop
libvirt: {arch: ppc64}
topology: [1x1x4, 1x4x1]
host: {subcores_per_core: [1, 4]}
benchmark: {kind: ebizzy}
YAML
"$TOPOADVISOR" plan "$tmp/drop.yaml" >"$tmp/out" || fail "plan drop.yaml"
grep -q '1x1x4/subcores_per_core=4: POWER8 with 4 subcores per core has 2 threads' "$tmp/out" ||
	fail "dropped reason missing"
grep -q '^3 configurations' "$tmp/out" || fail "drop.yaml should keep 3 configurations"

# A knob this host lacks fails plan up front, naming the key and why; under a
# root that has it, the same sweep plans.
cat >"$tmp/knob.yaml" <<'YAML'
name: knob
topology: [1x2x1]
host: {subcores_per_core: [1, 2]}
benchmark: {kind: stress-ng}
YAML
if [ ! -e /sys/devices/system/cpu/subcores_per_core ]; then
	"$TOPOADVISOR" plan "$tmp/knob.yaml" 2>"$tmp/err"
	[ $? -eq 2 ] || fail "an unsupported knob should fail plan with 2"
	grep -q "knob.yaml:3:8: host.subcores_per_core: .*POWER8" "$tmp/err" || fail "knob message: $(cat "$tmp/err")"
fi
mkdir -p "$tmp/root/sys/devices/system/cpu"
echo 1 >"$tmp/root/sys/devices/system/cpu/subcores_per_core"
"$TOPOADVISOR" plan --root "$tmp/root" "$tmp/knob.yaml" >/dev/null || fail "plan --root with the knob present"

# Bad input: exit 2 and FILE:LINE:COL.
printf 'name: bad\ntopology: [1x2x1]\nbenchmark: {kind: ebizy}\n' >"$tmp/bad.yaml"
"$TOPOADVISOR" plan "$tmp/bad.yaml" 2>"$tmp/err"
[ $? -eq 2 ] || fail "bad config should exit 2"
grep -q "bad.yaml:3:" "$tmp/err" || { cat "$tmp/err"; fail "no file:line in the error"; }
grep -q "ebizzy" "$tmp/err" || fail "no did-you-mean"

# A metric the kind's parser never reports would fail every run: plan refuses it.
printf 'name: typo\ntopology: [1x2x1]\nbenchmark: {kind: sysbench, metric: event_per_s}\n' \
	>"$tmp/typo.yaml"
"$TOPOADVISOR" plan "$tmp/typo.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a misspelt metric should fail plan with 2"
grep -q "typo.yaml:3:.*benchmark.metric: sysbench reports no metric 'event_per_s' (did you mean 'events_per_s'?)" \
	"$tmp/err" || fail "metric message: $(cat "$tmp/err")"
pass
