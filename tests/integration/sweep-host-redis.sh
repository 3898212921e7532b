#!/bin/sh
# redis with the host runner, as a new user meets it: a redis-benchmark
# that times out stores what a terminal shows of its progress counter (the
# last text of each CR-rewritten line), not the hundreds of rewrites; and
# a run interrupted while its server is still starting is stored as
# interrupted, not as "the redis server did not answer PING".
# Every sweep here sets collect off: no tracefs, so no need for the suite lock.
. "$TA_TOP/tests/lib.sh"
for b in redis-server redis-cli redis-benchmark; do
	command -v $b >/dev/null || skip "$b not installed (scripts/deps.sh check)"
done
# The kind's server and its readiness check use redis' default port.
redis-cli ping >/dev/null 2>&1 && skip "something already answers on redis' port 6379"
host_sweep_setup

# --- a benchmark that times out mid-progress ---
cat >"$tmp/slow.yaml" <<YAML
name: redis-timeout
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: redis
  argv: [redis-benchmark, -q, -n, "1000000000", -t, get]
  duration: 1
  timeout: 3
collect: {gang_exits: false, exit_reasons: false}
repetitions: 1
YAML
ta -q run "$tmp/slow.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "a timed-out run should make run exit 1: $(cat "$tmp/err")"
err=$(q "SELECT error FROM runs WHERE status = 'failed'")
case "$err" in *"timed out after 3 s"*) ;; *) fail "timed-out run: '$(q "SELECT status, error FROM runs")'" ;; esac
# One progress line, the last one; no CR anywhere.
[ "$(printf '%s' "$err" | grep -o 'rps=' | wc -l)" -le 1 ] || fail "progress junk in the error: $err"
[ "$(q "SELECT COUNT(*) FROM runs WHERE instr(error, char(13)) > 0")" = 0 ] || fail "CR in the error"
out=$(q "SELECT CAST(content AS TEXT) FROM artifacts WHERE name = 'benchmark.stdout'")
[ -n "$out" ] || fail "no benchmark.stdout stored"
[ "$(q "SELECT COUNT(*) FROM artifacts WHERE name LIKE 'benchmark.%' AND instr(CAST(content AS TEXT), char(13)) > 0")" = 0 ] ||
	fail "CR junk in the stored output"
[ "$(printf '%s\n' "$out" | grep -c 'GET: rps=')" -le 1 ] || fail "stored output keeps every rewrite: $(printf '%s' "$out" | head -c 300)"
redis-cli ping >/dev/null 2>&1 && fail "the sweep left its redis server running"

# --- interrupted while the server is not answering yet ---
cat >"$tmp/deaf.yaml" <<YAML
name: redis-deaf
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: redis
  server_argv: [sleep, "4245"]
collect: {gang_exits: false, exit_reasons: false}
repetitions: 2
YAML
"$TOPOADVISOR" --db "$db" -q run "$tmp/deaf.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
wait_started $pid "sleep 4245"
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc, expected 130: $(cat "$tmp/err")"
row=$(q "SELECT r.status || '|' || r.error FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 2 AND r.status <> 'planned'")
[ "$row" = "interrupted|benchmark server: interrupted by signal 2 while waiting for the redis server to answer PING" ] ||
	fail "interrupted run stored as: $row"
pgrep -f "sleep 4245" >/dev/null && fail "the server of the interrupted run is still running"
# The hint names the experiment and the database.
grep -q "finish it with 'topoadvisor --db $db resume 2'" "$tmp/err" || fail "resume hint: $(cat "$tmp/err")"
pass
