#!/bin/sh
# A raced sweep whose pinning is an environment factor (advisor.environment:
# [pinning]) decides exactly what `rank` ranks: pinnings are levels of one
# decision in the race too, so the race never drops one pinning of a
# decision (the baseline's above all) while keeping another, and race, show
# and rank name the same decisions.  Throughput is 100 x subcores_per_core
# (fake sysfs root), so the 1-subcore decision that is not the baseline
# falls after the first test, at both pinnings.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup

cat >"$tmp/env.yaml" <<YAML
name: environment-pinning
guest: {runner: host}
topology: [1x1x1, 1x2x1]
pinning: [none, compact]
host: {subcores_per_core: [1, 4]}
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100", "0", "knob", "$knob", "$tmp/count", "1"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 6
strategy: race
race: {first_test: 3}
seed: 11
baseline: {topology: 1x1x1, subcores_per_core: 1, pinning: none}
advisor: {environment: [pinning]}
# No tracing: another suite's uprobe events may come and go meanwhile.
collect: {gang_exits: false, exit_reasons: false}
YAML

ta run --root "$root" "$tmp/env.yaml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run exited $?"; }
# The race's decisions have no pinning in them.
grep -q "^race: after block 3: dropped " "$tmp/err" || fail "nothing dropped: $(cat "$tmp/err")"
grep "^race: " "$tmp/err" | grep -q "pin=" && fail "the race raced pinnings as decisions: $(grep '^race: ' "$tmp/err")"
# Only the 1x2x1 decision at 1 subcore falls, at both of its pinnings; the
# baseline decision keeps its compact level.
[ "$(q "SELECT group_concat(c.key, ' ') FROM eliminations e JOIN configurations c
	ON c.id = e.configuration_id ORDER BY c.key")" = \
	"1x2x1/pin=compact/subcores_per_core=1/noise=none 1x2x1/pin=none/subcores_per_core=1/noise=none" ] ||
	fail "eliminated: $(q "SELECT c.key FROM eliminations e JOIN configurations c ON c.id = e.configuration_id")"
# rank groups the same way: every decision's levels were eliminated together, or none.
ta --json rank 1 >"$tmp/json" || fail "rank --json exited $?"
[ "$(sqlite3 :memory: "SELECT COUNT(*) FROM (SELECT value ->> 'decision' AS d,
	COUNT(DISTINCT value ->> 'eliminated_block') AS n FROM json_each(readfile('$tmp/json'), '\$.configurations')
	GROUP BY d HAVING n > 1)")" = 0 ] || fail "rank splits a decision the race dropped whole: $(cat "$tmp/json")"
[ "$(sqlite3 :memory: "SELECT COUNT(DISTINCT value ->> 'decision') FROM json_each(readfile('$tmp/json'), '\$.configurations')")" = 4 ] ||
	fail "rank's decisions: $(cat "$tmp/json")"
[ "$(cat "$knob")" = 1 ] || fail "knob not restored"
pass
