#!/bin/sh
# What `rank` and `report` show beside the gains, and what the report says
# about an experiment's history:
# - the tables' figure is the geometric mean (the gains are ratios of them),
#   recomputed here from the stored runs, with its interval on the log scale;
# - a multi-metric benchmark (the redis-multi fixture) gets one table per
#   operation, each test with its own gain;
# - the bar chart's legend lists only what the chart draws;
# - an extended experiment says so (blocks planned beyond its config's
#   repetitions), a rerun names what it reruns and is named by it;
# - recommend gives each environment level's gain beside its mean.
# Host-runner sweeps on a fake sysfs root (fake-bench: 100 x the knob).
. "$TA_TOP/tests/lib.sh"
host_sweep_setup
fixture_bin="$TA_BUILD/tests/test-rank"
[ -x "$fixture_bin" ] || skip "$fixture_bin not built (make units)"

cat >"$tmp/s.yaml" <<YAML
name: views
guest: {runner: host}
topology: 1x1x1
host: {subcores_per_core: [1, 4]}
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100", "0", "knob", "$knob", "$tmp/count", "20"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
collect: {gang_exits: false, exit_reasons: false}
repetitions: 3
seed: 5
baseline: {subcores_per_core: 1}
YAML
ta -q run --root "$root" "$tmp/s.yaml" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; }
ta -q extend --root "$root" --repetitions 2 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "extend"; }
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1 AND r.status = 'ok'")" = 10 ] || fail "extend ran no 2 more blocks"
ta -q rerun --root "$root" 1 >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "rerun"; }
[ "$(q "SELECT parent_id FROM experiments WHERE id = 2")" = 1 ] || fail "rerun's parent"

# The geometric mean of the 4-subcore configuration's runs, from the store.
key4=$(q "SELECT key FROM configurations WHERE experiment_id = 1 AND key LIKE '%subcores_per_core=4%'")
geo=$(q "SELECT m.value FROM metrics m JOIN runs r ON r.id = m.run_id
	JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1 AND c.key = '$key4' AND m.name = 'ops'" |
	awk '{ s += log($1); n++ } END { printf "%.6g", exp(s / n) }')
ari=$(q "SELECT printf('%.6g', AVG(m.value)) FROM metrics m JOIN runs r ON r.id = m.run_id
	JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 1 AND c.key = '$key4' AND m.name = 'ops'")
[ "$geo" != "$ari" ] || fail "the fixture's geometric and arithmetic means coincide ($geo)"

# rank: the GEOMEAN column holds it, and says what the means are.
ta rank 1 >"$tmp/rank" 2>&1 || fail "rank: $(cat "$tmp/rank")"
grep -q "^RANK .* GEOMEAN " "$tmp/rank" || fail "rank's header: $(cat "$tmp/rank")"
grep -q "^1 .*$key4 .* $geo  \[" "$tmp/rank" || fail "rank's geometric mean ($geo): $(cat "$tmp/rank")"
grep -q "^means: geometric" "$tmp/rank" || fail "rank does not say the means are geometric"
ta recommend 1 >"$tmp/rec" 2>&1 || fail "recommend: $(cat "$tmp/rec")"
grep -q "ops: geometric mean $geo (95% CI " "$tmp/rec" || fail "recommend's mean: $(cat "$tmp/rec")"

# report of the extended experiment: its table, its lineage.
ta -q report 1 -o "$tmp/r1.html" || fail "report 1"
grep -q "<th>geometric mean</th>" "$tmp/r1.html" || fail "report's table header"
grep -q "<td>$geo</td>" "$tmp/r1.html" || fail "report's geometric mean ($geo)"
grep -q "<li class='extended'>Extended: 5 blocks planned where the sweep configured 3" "$tmp/r1.html" ||
	fail "no mark of the extension: $(grep -A4 lineage "$tmp/r1.html")"
grep -q "<li class='reruns'>Rerun as experiment 2.</li>" "$tmp/r1.html" || fail "no mark of the rerun"
! grep -q "class='rerun-of'" "$tmp/r1.html" || fail "experiment 1 reruns nothing"
ta -q report 2 -o "$tmp/r2.html" || fail "report 2"
grep -q "<li class='rerun-of'>A rerun of experiment 1 (views)" "$tmp/r2.html" || fail "rerun's origin"
! grep -q "class='extended'" "$tmp/r2.html" || fail "experiment 2 was not extended"
ta -q report 1 -o "$tmp/r1.html" || fail "report 1"

# Legends list what is drawn: here a recommended bar and the baseline's,
# no race, no host reference, no outlier (fake-bench's jitter is tiny).
legend=$(sed -n "/<g id='legend'>/,/<\/g>/p" "$tmp/r1.html" | grep -o "class='legend'[^>]*>[^<]*" | sed 's/.*>//')
[ "$legend" = "recommended
baseline
one run
95 % CI of the geometric mean (log scale)" ] || fail "legend: $legend"

# Per operation: one table per redis operation, each with its tests.
"$fixture_bin" --write-fixture redis-multi "$tmp/redis.db" >/dev/null || fail "fixture"
"$TOPOADVISOR" --db "$tmp/redis.db" -q report redis-multi -o "$tmp/redis.html" || fail "redis report"
ops=$(grep -o "<table class='op' id='op-[A-Z]*'" "$tmp/redis.html" | sed "s/.*op-//; s/'//" | tr '\n' ' ')
[ "$ops" = "SET GET INCR LPUSH LPOP SADD SPOP MSET " ] || fail "operation tables: $ops"
get=$(sed -n "/id='op-GET'/,/<\/table>/p" "$tmp/redis.html")
echo "$get" | grep -q "<th>throughput (higher is better): geometric mean</th>" || fail "GET throughput"
echo "$get" | grep -q "<th>p50_ms (lower is better): geometric mean</th>" || fail "GET latency"
[ "$(echo "$get" | grep -c "^<tr><td>")" = 3 ] || fail "one GET row per configuration"
# The redis-multi fixture: 1x2x1 is faster than the baseline at GET.
echo "$get" | grep -q "^<tr><td>1</td><td>1x2x1</td><td>5</td><td>[0-9.]*</td><td>[0-9.]* &ndash; [0-9.]*</td><td>+" ||
	fail "GET row of 1x2x1: $get"
# A lower-is-better test reads as the change of its value: the p50 latency fell.
"$TOPOADVISOR" --db "$tmp/redis.db" recommend redis-multi >"$tmp/redisrec" || fail "redis recommend"
grep -q "^    redis\.GET\.p50_ms  *-[0-9.]* % \[-[0-9.]* %, -[0-9.]* %\], 1\.[0-9][0-9]x faster (lower is better)$" "$tmp/redisrec" ||
	fail "the GET latency's change: $(grep p50 "$tmp/redisrec")"
# recommend over environment levels: each level's gain with its interval and verdict.
"$fixture_bin" --write-fixture environment "$tmp/env.db" >/dev/null || fail "fixture"
"$TOPOADVISOR" --db "$tmp/env.db" recommend environment >"$tmp/envrec" 2>&1 || fail "recommend"
for level in none spin; do
	grep -q "^  records_per_s at noise=$level: geometric mean [0-9.]* (95% CI [0-9.]* \.\. [0-9.]*) over 5 runs; +5\.0 % \[+[0-9.]* %, +[0-9.]* %\] against the baseline there (better)$" "$tmp/envrec" ||
		fail "recommend's gain at noise=$level: $(cat "$tmp/envrec")"
done
# A single-metric report has no such section.
! grep -q "id='operations'" "$tmp/r1.html" || fail "operations section in a single-metric report"
pass
