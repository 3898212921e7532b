#!/bin/sh
# A raced sweep end to end with the host runner under a fake sysfs root.
# The benchmark's throughput is 100 x subcores_per_core (read back from the
# fake sysfs) with a reproducible jitter of at most 0.5 %, so the
# configurations with 4 subcores are best and the others fall after the
# first test; the baseline (1 subcore) is kept as the reference.  Checks
# the database (eliminations, runs after them, the stop), show, rank,
# plan's estimate, then a race killed with SIGKILL mid-block and resumed,
# then rerun.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup

# $1: sleep per run, $2: the counter file of the benchmark's jitter, $3 its scale.
write_sweep() {
	cat >"$tmp/race.yaml" <<YAML
name: raced
guest: {runner: host}
topology: [1x1x1, 1x2x1]
host: {subcores_per_core: [1, 2, 4]}
noise: [none, {kind: spin, cpus: "0"}]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100", "$1", "knob", "$knob", "$2", "$3"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 10
strategy: race
race: {first_test: 3}
seed: 11
baseline: {topology: 1x1x1, subcores_per_core: 1, noise: none}
YAML
}
write_sweep 0 "$tmp/count1" 1

# plan: the maximum and the expected number of runs of the race.
ta plan --root "$root" "$tmp/race.yaml" >"$tmp/plan" 2>&1 || { cat "$tmp/plan"; fail "plan failed"; }
grep -q "race: at most 120 runs" "$tmp/plan" || fail "plan's race estimate: $(cat "$tmp/plan")"

exp=$(ta -q run --root "$root" "$tmp/race.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run exited $?"; }
[ "$exp" = 1 ] || fail "run printed '$exp'"
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = done ] || fail "experiment not done"
# 6 decision configurations x 2 noise levels; a full design would run 120.
nruns=$(q "SELECT COUNT(*) FROM runs")
[ "$nruns" -lt 120 ] || fail "the race ran every run ($nruns)"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status <> 'ok'")" = 0 ] ||
	fail "runs left: $(q "SELECT status, COUNT(*) FROM runs GROUP BY status")"
# The first three blocks hold every configuration.
[ "$(q "SELECT COUNT(*) FROM runs WHERE repetition < 3")" = 36 ] || fail "first three blocks"
# Every configuration without 4 subcores, except the baseline, fell after
# block 3, against a 4-subcore configuration at the same noise level.
[ "$(q "SELECT COUNT(*) FROM eliminations")" = 6 ] ||
	fail "eliminations: $(q "SELECT * FROM eliminations")"
[ "$(q "SELECT COUNT(*) FROM eliminations e JOIN configurations c ON c.id = e.configuration_id
	JOIN configurations a ON a.id = e.against_id
	WHERE e.after_block = 3 AND c.subcores_per_core < 4 AND a.subcores_per_core = 4
	AND a.noise = c.noise AND e.p < 0.05 AND e.ratio < 1 AND c.is_baseline = 0")" = 6 ] ||
	fail "elimination rows: $(q "SELECT * FROM eliminations")"
# No eliminated configuration ran after its block; the survivors ran in
# every block the race ran.
[ "$(q "SELECT COUNT(*) FROM runs r JOIN eliminations e ON e.configuration_id = r.configuration_id
	WHERE r.repetition >= e.after_block")" = 0 ] || fail "an eliminated configuration ran on"
stopped=$(q "SELECT stopped_after FROM races WHERE experiment_id = 1")
[ -n "$stopped" ] && [ "$stopped" -ge 3 ] || fail "race not stopped: $(q "SELECT * FROM races")"
[ "$(q "SELECT COUNT(*) FROM configurations c WHERE c.id NOT IN (SELECT configuration_id FROM eliminations)
	AND (SELECT COUNT(*) FROM runs r WHERE r.configuration_id = c.id) <> $stopped")" = 0 ] ||
	fail "survivors' runs"
[ "$(q "SELECT stop_reason IS NOT NULL FROM races WHERE experiment_id = 1")" = 1 ] || fail "stop reason"
[ "$(cat "$knob")" = 1 ] || fail "knob not restored"

ta show 1 >"$tmp/out" || fail "show"
grep -q "race: stopped after block $stopped" "$tmp/out" || fail "show lacks the race: $(cat "$tmp/out")"
grep -q "1x2x1/pin=none/subcores_per_core=2/noise=none .*eliminated after block 3" "$tmp/out" ||
	fail "show lacks the elimination: $(cat "$tmp/out")"
ta rank 1 >"$tmp/out" || fail "rank exited $?"
grep -q "eliminated after block 3" "$tmp/out" || fail "rank status: $(cat "$tmp/out")"
ta --json rank 1 >"$tmp/json" || fail "rank --json"
[ "$(sqlite3 :memory: "SELECT COUNT(*) FROM json_each(readfile('$tmp/json'), '\$.configurations')
	WHERE value ->> 'eliminated_block' = 3")" = 6 ] || fail "rank --json eliminated_block"
ta --json show 1 >"$tmp/json" || fail "show --json"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'), '\$.race.eliminations')")" = 6 ] ||
	fail "show --json race: $(cat "$tmp/json")"
ta report 1 -o "$tmp/r.html" >/dev/null 2>&1 || fail "report exited $?"
grep -q "<h2 id='race'>Race</h2>" "$tmp/r.html" || fail "report lacks the race"
[ "$(grep -o "<td>3</td><td>[^<]*subcores_per_core=4" "$tmp/r.html" | wc -l)" = 6 ] ||
	fail "report's eliminations: $(grep -A20 "id='eliminations'" "$tmp/r.html")"
ta resume --root "$root" 1 2>&1 | grep -q "nothing to resume" || fail "resume of a finished race"
# Killed after its last run but before its last look: resume takes the look.
q "UPDATE races SET stop_reason = NULL, stopped_after = NULL, blocks_evaluated = $stopped - 1
   WHERE experiment_id = 1"
ta -q resume --root "$root" 1 2>"$tmp/err" || { cat "$tmp/err"; fail "resume for the last look"; }
[ "$(q "SELECT blocks_evaluated = $stopped AND stopped_after = $stopped FROM races WHERE experiment_id = 1")" = 1 ] ||
	fail "resume did not take the race's last look: $(q "SELECT * FROM races")"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1")" = "$nruns" ] || fail "the last look ran more runs"

# SIGKILL in the middle of the race (after its first test), then resume:
# the race goes on from the stored state and ends as a race does.  A 2 %
# jitter keeps the two best from being shown equivalent at the first test.
write_sweep 0.2 "$tmp/count2" 4
"$TOPOADVISOR" --db "$db" -q run --root "$root" "$tmp/race.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
i=0
while [ "$(q "SELECT blocks_evaluated FROM races WHERE experiment_id = 2" 2>/dev/null)" != 3 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill -9 $pid; fail "the second race never tested"; }
	sleep 0.1
done
kill -9 $pid
wait $pid 2>/dev/null
[ "$(q "SELECT stop_reason IS NULL FROM races WHERE experiment_id = 2")" = 1 ] ||
	fail "the race stopped before it was killed; the test needs a longer race"
ta -q resume --root "$root" 2 2>"$tmp/err" || { cat "$tmp/err"; fail "resume exited $?"; }
[ "$(q "SELECT status FROM experiments WHERE id = 2")" = done ] || fail "resumed race not done"
[ "$(q "SELECT stop_reason IS NOT NULL FROM races WHERE experiment_id = 2")" = 1 ] ||
	fail "resumed race has no stop"
[ "$(q "SELECT COUNT(*) FROM eliminations e JOIN configurations c ON c.id = e.configuration_id
	WHERE c.experiment_id = 2")" = 6 ] || fail "resumed race's eliminations"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 2 AND r.status <> 'ok' AND r.status <> 'interrupted'")" = 0 ] ||
	fail "resumed race left runs: $(q "SELECT r.status, COUNT(*) FROM runs r GROUP BY 1")"
[ "$(cat "$knob")" = 1 ] || fail "knob not restored after the resumed race"

# rerun: a new raced experiment from the stored config.
exp3=$(ta -q rerun --root "$root" 1 2>"$tmp/err") || { cat "$tmp/err"; fail "rerun exited $?"; }
[ "$(q "SELECT COUNT(*) FROM races WHERE experiment_id = $exp3 AND stop_reason IS NOT NULL")" = 1 ] ||
	fail "rerun did not race"

# extend: two more blocks of the first race's survivors; the eliminated
# stay out, the race goes on over the new blocks, and the ranking follows.
before=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1")
survivors=$(q "SELECT COUNT(*) FROM configurations WHERE experiment_id = 1
	AND id NOT IN (SELECT configuration_id FROM eliminations)")
ta extend --root "$root" 1 --repetitions 2 >"$tmp/out" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "extend exited $?"; }
grep -q "^RANK" "$tmp/out" || fail "extend did not rank again: $(cat "$tmp/out")"
after=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1 AND r.status = 'ok'")
[ "$after" -gt "$before" ] && [ "$after" -le $((before + 2 * survivors)) ] ||
	fail "extend ran $((after - before)) runs for $survivors survivors"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN eliminations e ON e.configuration_id = r.configuration_id
	WHERE r.repetition >= e.after_block")" = 0 ] || fail "extend ran an eliminated configuration"
[ "$(q "SELECT max_blocks = $stopped + 2 AND stop_reason IS NOT NULL FROM races WHERE experiment_id = 1")" = 1 ] ||
	fail "extended race: $(q "SELECT * FROM races WHERE experiment_id = 1")"
[ "$(q "SELECT MAX(r.repetition) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1")" -le $((stopped + 1)) ] || fail "extend went past its blocks"
expect_exit 2 ta extend --root "$root" 1
expect_exit 2 ta extend --root "$root" 1 --repetitions 0

# extend a full (unraced) experiment: one more run of every configuration.
cat >"$tmp/full.yaml" <<YAML
name: full
guest: {runner: host}
topology: [1x1x1, 1x2x1]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
YAML
full=$(ta -q run "$tmp/full.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "full run"; }
ta -q extend "$full" --repetitions 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "extend full"; }
[ "$(q "SELECT COUNT(*) || '/' || MAX(r.repetition) FROM runs r JOIN configurations c
	ON c.id = r.configuration_id WHERE c.experiment_id = $full AND r.status = 'ok'")" = 6/2 ] ||
	fail "extended full experiment: $(q "SELECT repetition, status FROM runs")"
[ "$(q "SELECT COUNT(*) FROM races WHERE experiment_id = $full")" = 0 ] || fail "a full experiment raced"

# compare: the first race with its rerun, configuration by configuration.
ta --json compare 1 "$exp3" >"$tmp/json" || fail "compare exited $?"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'), '\$.configurations')")" = 12 ] ||
	fail "compare configurations: $(cat "$tmp/json")"
[ "$(sqlite3 :memory: "SELECT COUNT(*) FROM json_each(readfile('$tmp/json'), '\$.configurations')
	WHERE value ->> 'verdict' IN ('better', 'worse', 'equivalent', 'undecided', 'insufficient')")" = 12 ] ||
	fail "compare verdicts: $(cat "$tmp/json")"
case "$(sqlite3 :memory: "SELECT json_type(readfile('$tmp/json'), '\$.recommendation.holds')")" in
true|false|null) ;; *) false ;; esac ||
	fail "compare lacks the recommendation"
ta compare 1 "$exp3" >"$tmp/out" || fail "compare text"
grep -q "^recommendation: " "$tmp/out" || fail "compare text: $(cat "$tmp/out")"
expect_exit 2 ta compare 1
pass
