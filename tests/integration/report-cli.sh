#!/bin/sh
# rank, recommend and export on the fixture databases of tests/unit/test-rank
# (written with `test-rank --write-fixture`): text and JSON output, the seeds'
# redis recommendation (2 subcores, GET near +80 %), tidy export row counts,
# and exit status 2 for bad input.  JSON is checked with the sqlite3 shell's
# JSON functions (no other tool needed).
set -u
: "${TOPOADVISOR:?}" "${TA_BUILD:?}"
fixture_bin="$TA_BUILD/tests/test-rank"
[ -x "$fixture_bin" ] || { echo "skip: $fixture_bin not built (make units)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "skip: sqlite3 shell missing (scripts/deps.sh)"; exit 77; }

tmp=$(mktemp -d /tmp/ta-report-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "FAIL: $*"; exit 1; }
db="$tmp/f.db"
for f in redis-seeds failed-runs all-tied high-variance one-of-five; do
	"$fixture_bin" --write-fixture "$f" "$db" >/dev/null || fail "writing fixture $f"
done
ta() { "$TOPOADVISOR" --db "$db" "$@"; }
jq_sql() { # FILE SQL-EXPRESSION-ON-j: evaluates with j = the file's JSON
	sqlite3 :memory: "WITH d(j) AS (SELECT readfile('$1')) SELECT $2 FROM d"
}

# recommend, text: the seeds' answer.
ta recommend redis-seeds >"$tmp/rec.txt" || fail "recommend exited $?"
grep -q '^recommended: 1x2x1/subcores=2$' "$tmp/rec.txt" || { cat "$tmp/rec.txt"; fail "not 2 subcores"; }
grep -q 'ppc64_cpu --subcores-per-core=2' "$tmp/rec.txt" || fail "no host command"
grep -q "<topology sockets='1' dies='1' cores='2' threads='1'/>" "$tmp/rec.txt" || fail "no XML"
grep -Eq 'redis\.GET +\+8[01]\.[0-9] %' "$tmp/rec.txt" || fail "GET gain not near +80 %"

# recommend --json: documented keys and the GET gain.
ta --json recommend redis-seeds >"$tmp/rec.json" || fail "recommend --json exited $?"
[ "$(jq_sql "$tmp/rec.json" "json_valid(j)")" = 1 ] || fail "recommend --json is not JSON"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.recommended.key')")" = "1x2x1/subcores=2" ] ||
	fail "recommended.key"
get=$(sqlite3 :memory: "SELECT json_extract(value, '\$.gain') FROM
	json_each(readfile('$tmp/rec.json'), '\$.test_gains')
	WHERE json_extract(value, '\$.metric') = 'redis.GET'")
[ "$(sqlite3 :memory: "SELECT $get BETWEEN 0.75 AND 0.86")" = 1 ] || fail "GET gain $get"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.evidence.gang_exits_applicable')")" = 1 ] ||
	fail "gang exits applicable"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.verdict')")" = better ] || fail "verdict not better"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.recommended.verdict')")" = better ] ||
	fail "recommended configuration's verdict"

# undecided: says so, names the contention and what would settle it, exit 0.
ta recommend high-variance >"$tmp/und.txt" || fail "recommend high-variance exited $?"
grep -q '^verdict: undecided$' "$tmp/und.txt" || { cat "$tmp/und.txt"; fail "not undecided"; }
# "leading" names the best objective (1x2x1), never the baseline that stays meanwhile
grep -Eq '^no decision yet; leading for now: 1x2x1; until then: 2x1x1 \(the baseline\)$' "$tmp/und.txt" ||
	{ cat "$tmp/und.txt"; fail "leader not named as such"; }
grep -q '^recommended:' "$tmp/und.txt" && fail "undecided printed as a recommendation"
grep -q 'needed_repetitions: [0-9]' "$tmp/und.txt" || fail "no needed_repetitions"
grep -q 'min_detectable_effect: [0-9.]* %' "$tmp/und.txt" || fail "no min_detectable_effect"
ta --json recommend high-variance >"$tmp/und.json" || fail "recommend --json high-variance"
[ "$(jq_sql "$tmp/und.json" "json_extract(j, '\$.verdict') || ' ' || json_extract(j, '\$.decisive')")" = "undecided 0" ] ||
	fail "undecided JSON verdict"
[ "$(jq_sql "$tmp/und.json" "json_extract(j, '\$.contention[0].key')")" = 1x2x1 ] || fail "contention"
[ "$(jq_sql "$tmp/und.json" "json_extract(j, '\$.needed_repetitions') > 0")" = 1 ] || fail "needed_repetitions"

# one successful run of five is never the recommendation.
ta --json recommend one-of-five >"$tmp/one.json" || fail "recommend one-of-five"
[ "$(jq_sql "$tmp/one.json" "json_extract(j, '\$.recommended.key') <> '1x2x1/lucky' AND json_extract(j, '\$.decisive') = 0")" = 1 ] ||
	fail "a 1-of-5 configuration recommended decisively"

# all tied: says so and keeps the baseline.
ta recommend all-tied >"$tmp/tied.txt" || fail "recommend all-tied exited $?"
grep -q "nothing beats the baseline (every other shown worse, within" "$tmp/tied.txt" ||
	fail "not said plainly"
grep -q "^verdict: equivalent$" "$tmp/tied.txt" || fail "verdict not equivalent"
grep -q '^recommended: 1x1x2$' "$tmp/tied.txt" || fail "baseline not recommended"

# rank --json: every configuration, failures counted, warnings present.
ta --json rank failed-runs >"$tmp/rank.json" || fail "rank --json exited $?"
[ "$(jq_sql "$tmp/rank.json" "json_array_length(j, '\$.configurations')")" = 3 ] || fail "configs"
[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[0].key')")" = 1x1x2 ] ||
	fail "lower-is-better order"
# The failing one (160 s) after the baseline (200 s, shown worse than the best): by status first.
[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[2].runs_failed')")" = 2 ] ||
	fail "runs_failed"
[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[1].gang_exits')")" = "" ] ||
	fail "gang_exits must be null (not applicable), not 0"
[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[0].verdict')")" = better ] ||
	fail "rank --json verdict per configuration"
ta rank --metric requests_per_s redis-seeds | grep -q '^1 .*1x2x1/subcores=2' || fail "rank --metric"

# export: one row per run x metric; runs without metrics still listed.
ta export redis-seeds --csv >"$tmp/seeds.csv" || fail "export exited $?"
head -n 1 "$tmp/seeds.csv" | grep -q '^experiment_id,configuration_id,configuration,' || fail "header"
# 10 runs x (8 redis tests + requests_per_s + gang_exits + gang_exits_per_s) + header
[ "$(wc -l <"$tmp/seeds.csv")" -eq 111 ] || fail "seeds rows: $(wc -l <"$tmp/seeds.csv")"
ta export failed-runs --csv >"$tmp/failed.csv" || fail "export failed-runs"
[ "$(grep -c ',failed,benchmark timed out after 600 s,' "$tmp/failed.csv")" -eq 2 ] ||
	fail "failed runs missing from the export"
ta --json export failed-runs >"$tmp/failed.json" || fail "export --json"
[ "$(jq_sql "$tmp/failed.json" "json_array_length(j)")" = 12 ] || fail "json rows"

# bad input: exit status 2 with a message.
ta rank no-such-experiment 2>"$tmp/err"; [ $? -eq 2 ] || fail "unknown experiment not 2"
grep -q "no experiment 'no-such-experiment'" "$tmp/err" || fail "message"
ta rank --metric nope redis-seeds 2>"$tmp/err"; [ $? -eq 2 ] || fail "unknown metric not 2"
grep -q 'redis.GET' "$tmp/err" || fail "unknown metric message lists the metrics"
ta report redis-seeds 2>/dev/null; [ $? -eq 2 ] || fail "report without -o not 2"
"$TOPOADVISOR" --db "$tmp/missing.db" rank 1 2>/dev/null; [ $? -eq 2 ] || fail "missing db not 2"
ta export redis-seeds --csv --json 2>/dev/null; [ $? -eq 2 ] || fail "--csv --json not 2"
echo "ok"
