#!/bin/sh
# redis in real TCG guests, client and server inside the guest as in the
# RFC: a sweep of 2 shapes x 2 repetitions in reused guests (one boot per
# shape) where every run is ok, stores redis-benchmark's per-test figures
# with their units and directions, and leaves no redis-server behind for
# the next run in the same guest; then a server that never answers fails
# its run with a clear message while the sweep goes on to the next shape
# (without reuse: one boot per run).
. "$TA_TOP/tests/lib.sh"
guest_sweep_setup taredistest-

# The RFC's two shapes; `prepare` fails a run whose reused guest still has
# the previous run's server.
cat >"$tmp/redis.yaml" <<YAML
name: redis-in-guest
libvirt: {name_prefix: $prefix, memory_mib: 384}
guest:
  runner: agent
  boot_timeout: 180
  reuse: true
  reuse_runs: 2
  prepare: [[sh, -c, "! pidof redis-server"]]
topology: [1x1x2, 1x2x1]
benchmark:
  kind: redis
  argv: [redis-benchmark, -q, -n, "500", -t, "set,get"]
  duration: 10
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: true}
repetitions: 2
order: randomized
seed: 5
YAML
ta plan "$tmp/redis.yaml" | grep -q "^Guest boots: 2 for 4 guest runs" || fail "plan: $(ta plan "$tmp/redis.yaml" | grep -i boots)"
start=$(date +%s)
exp=$(ta -q run "$tmp/redis.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run exited $?"; }
echo "redis sweep: $(( $(date +%s) - start )) s for 4 runs"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 4 ] ||
	fail "runs: $(q "SELECT status, error FROM runs")"
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'boot_seconds'")" = 2 ] ||
	fail "guest.reuse: $(q "SELECT COUNT(*) FROM metrics WHERE name = 'boot_seconds'") boots for 2 shapes"
for t in SET GET; do
	[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'redis.$t' AND value > 0
		AND unit = 'requests/s' AND direction = 'higher' AND higher_is_better = 1")" = 4 ] ||
		fail "redis.$t rows: $(q "SELECT * FROM metrics WHERE name = 'redis.$t'")"
	[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'redis.$t.p50_ms' AND value > 0
		AND unit = 'ms' AND direction = 'lower' AND higher_is_better = 0")" = 4 ] ||
		fail "redis.$t.p50_ms rows: $(q "SELECT * FROM metrics WHERE name = 'redis.$t.p50_ms'")"
done
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'boot_seconds' AND direction = 'none'")" = 2 ] ||
	fail "boot_seconds is not stored as 'none'"
q "SELECT c.key, ROUND(AVG(m.value)) FROM metrics m JOIN runs r ON r.id = m.run_id
   JOIN configurations c ON c.id = r.configuration_id WHERE m.name = 'redis.GET' GROUP BY c.key" |
	sed 's/^/redis.GET mean: /'
ta rank "$exp" --metric redis.GET.p50_ms >"$tmp/rank" || fail "rank by a latency: $(cat "$tmp/rank")"
grep -q "lower is better" "$tmp/rank" || fail "a latency ranked as higher-is-better: $(head -n 2 "$tmp/rank")"
[ "$(ours)" = 0 ] || fail "guests left after the sweep"

# A server that never answers on the 1-vCPU shape: that run fails saying
# so, the 2-vCPU shape's run still runs and succeeds.  A host noise load
# notes when it starts: after the guest booted, never before.
cat >"$tmp/deaf.yaml" <<YAML
name: redis-deaf-server
libvirt: {name_prefix: $prefix, memory_mib: 384}
guest: {runner: agent, boot_timeout: 180}
topology: [1x1x1, 1x2x1]
noise: [{kind: command, name: stamp, argv: [sh, -c, 'date +%s.%N >>$tmp/noise.start; exec sleep 1000']}]
benchmark:
  kind: redis
  server_argv: [sh, -c, 'if [ "\$(nproc)" = 1 ]; then exec sleep 1000; fi; exec redis-server --save "" --appendonly no']
  argv: [redis-benchmark, -q, -n, "300", -t, "get"]
  duration: 10
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: false}
repetitions: 1
order: sequential
YAML
ta plan "$tmp/deaf.yaml" | grep -q "^Guest boots: 2 (one per guest run" || fail "plan without reuse: $(ta plan "$tmp/deaf.yaml" | grep -i boots)"
ta -q run "$tmp/deaf.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "a sweep with a failed run should exit 1"
exp2=$(q "SELECT MAX(id) FROM experiments")
row=$(q "SELECT r.status, r.error FROM runs r JOIN configurations c ON c.id = r.configuration_id
	 WHERE c.experiment_id = $exp2 AND c.key LIKE '1x1x1/%'")
case "$row" in
"failed|benchmark server: the redis server did not answer PING within 15 s"*) ;;
*) fail "the deaf server's run: '$row'" ;;
esac
[ "$(q "SELECT r.status FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $exp2 AND c.key LIKE '1x2x1/%'")" = ok ] ||
	fail "the sweep did not go on: $(q "SELECT status, error FROM runs WHERE id > 4")"
[ "$(q "SELECT status FROM experiments WHERE id = $exp2")" = done ] || fail "experiment status"
[ "$(q "SELECT COUNT(*) FROM metrics m JOIN runs r ON r.id = m.run_id JOIN configurations c
	ON c.id = r.configuration_id WHERE c.experiment_id = $exp2 AND m.name = 'boot_seconds'")" = 2 ] ||
	fail "without reuse every run boots its own guest"
[ "$(ours)" = 0 ] || fail "guests left after the failed run"
# started_at + boot_seconds is no later than the end of the boot.
q "SELECT (julianday(r.started_at) - 2440587.5) * 86400.0 + m.value FROM runs r
   JOIN configurations c ON c.id = r.configuration_id JOIN metrics m ON m.run_id = r.id
   WHERE c.experiment_id = $exp2 AND m.name = 'boot_seconds' ORDER BY r.order_index" >"$tmp/booted"
[ "$(wc -l <"$tmp/noise.start")" = 2 ] || fail "the noise started $(wc -l <"$tmp/noise.start") times for 2 runs"
paste "$tmp/booted" "$tmp/noise.start" | awk '$2 < $1 { bad = 1 } END { exit bad }' ||
	fail "host noise started before the guest had booted: $(paste "$tmp/booted" "$tmp/noise.start")"
pass
