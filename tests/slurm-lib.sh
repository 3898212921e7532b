# Shared by the Slurm executor's suites (sourced after tests/lib.sh and
# ta_tmpdir): a database, per-node fake sysfs roots, a benchmark that reads
# its node's knob, sweep configs, and the checks every distributed sweep
# must pass.  Nodes are named by the caller (slurm_nodes NAME...).
export TOPOADVISOR_LOCK="$tmp/lock"
export ROOTS="$tmp/roots" GATES="$tmp/gates"
db=$tmp/t.db
ta() { "$TOPOADVISOR" --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }
mkdir -p "$tmp/shared" "$GATES"

# slurm_nodes NAME...: a fake sysfs root per node ($ROOTS/NAME).
slurm_nodes() {
	for n; do
		mkdir -p "$ROOTS/$n/sys/module/kvm_hv/parameters" "$ROOTS/$n/sys/devices/system/cpu"
		echo 6 >"$ROOTS/$n/sys/module/kvm_hv/parameters/dynamic_mt_modes"
		echo 1 >"$ROOTS/$n/sys/devices/system/cpu/subcores_per_core"
	done
}

# wait_until SECONDS CMD...: polls every 0.05 s, fails the test after SECONDS.
wait_until() {
	limit=$(( $1 * 20 )); shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt "$limit" ] || fail "timed out waiting for: $*"
		sleep 0.05
	done
}

# The benchmark: ops from this node's dynamic_mt_modes (a fake knob the
# sweep sets: 2 is far worse than 6, 4 close to it) with a jitter of at
# most 1 % from a per-node counter; sleeps $1 seconds; records its working
# directory in $ROOTS/NODE/cwd; waits while
# $GATES/NODE exists (a test holds a node's block mid-run that way).
cat >"$tmp/bench" <<'EOF'
#!/bin/sh
node=$SLURMD_NODENAME
while [ -e "$GATES/$node" ]; do sleep 0.02; done
pwd >"$ROOTS/$node/cwd"
k=$(cat "$ROOTS/$node/sys/module/kvm_hv/parameters/dynamic_mt_modes")
c=$(cat "$ROOTS/$node/count" 2>/dev/null || echo 0)
echo $((c + 1)) >"$ROOTS/$node/count"
sleep "${1:-0}"
awk -v k="$k" -v c="$c" 'BEGIN { v = k == 2 ? 50 : k == 4 ? 98 : 100
	printf "throughput: %.3f ops/s\n", v * (1 + ((c * 37) % 11 - 5) / 500) }'
EOF
chmod +x "$tmp/bench"

# Conditions to wait for (functions: wait_until runs them again each time).
worker_db_on() { [ -n "$(find "$tmp/nodes/$1" -name '*.db' 2>/dev/null)" ]; }
no_worker_db_on() { ! worker_db_on "$1"; }
outcome_is() { # EXP BLOCK ATTEMPT OUTCOME
	[ "$(q "SELECT outcome FROM block_attempts WHERE experiment_id = $1 AND block = $2 AND attempt = $3")" = "$4" ]
}

# sweep NAME REPS SLEEP POLL HOSTS [EXTRA EXECUTOR KEYS] [EXTRA TOP-LEVEL YAML]:
# writes $tmp/NAME.yaml, a host-runner sweep of two dynamic_mt_modes values,
# the benchmark sleeping SLEEP s, at most HOSTS jobs out.  Not traced: as
# root a host run is traced host-wide, and tracefs is every suite's (the
# fake-Slurm suite runs without the suite lock).
sweep() {
	cat >"$tmp/$1.yaml" <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1]
host:
  kvm_hv.dynamic_mt_modes: [2, 6]
benchmark:
  kind: command
  argv: ["$tmp/bench", "$3"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
collect: {gang_exits: false, exit_reasons: false}
repetitions: $2
seed: 11
executor: {kind: slurm, max_hosts: $5, shared_dir: "$tmp/shared", node_dir: "$tmp/nodes",
           poll_interval: $4${6:-}}
${7:-}
YAML
}

# run_failed WHAT: fails the test showing the controller's stderr ($tmp/err)
# and every run that did not end ok, with its error.
run_failed() {
	cat "$tmp/err" >&2
	q "SELECT c.key, r.repetition, r.host, r.status, r.error FROM runs r JOIN configurations c
	   ON c.id = r.configuration_id WHERE r.status <> 'ok'" >&2
	fail "$1"
}

# exp_of NAME: the newest experiment of that name.
exp_of() { q "SELECT MAX(id) FROM experiments WHERE name = '$1'"; }

# check_blocks EXP BLOCKS CONFIGS: every block ingested exactly once, from
# one host, every run stored once and ok, no two runs on one host at once.
check_blocks() {
	e=$1
	[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND outcome = 'ingested'")" = "$2" ] ||
		fail "exp $e: ingested attempts: $(q "SELECT block, attempt, state, outcome FROM block_attempts WHERE experiment_id = $e")"
	[ "$(q "SELECT COUNT(DISTINCT block) FROM block_attempts WHERE experiment_id = $e AND outcome = 'ingested'")" = "$2" ] ||
		fail "exp $e: a block ingested twice"
	runs="SELECT r.* FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $e"
	[ "$(q "SELECT COUNT(*), SUM(status = 'ok') FROM ($runs)")" = "$(( $2 * $3 ))|$(( $2 * $3 ))" ] ||
		fail "exp $e runs: $(q "SELECT repetition, status, host, error FROM ($runs)")"
	[ "$(q "SELECT COUNT(*) FROM (SELECT repetition FROM ($runs) GROUP BY repetition HAVING COUNT(DISTINCT host) <> 1)")" = 0 ] ||
		fail "exp $e: a block's runs come from several hosts"
	[ "$(q "SELECT COUNT(*) FROM ($runs) a, ($runs) b WHERE a.host = b.host AND a.id <> b.id
		AND a.started_at < b.finished_at AND b.started_at < a.finished_at")" = 0 ] ||
		fail "exp $e: two runs overlapped on one host"
}

# hosts_of EXP: how many hosts its runs ran on.
hosts_of() {
	q "SELECT COUNT(DISTINCT r.host) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $1"
}

# check_race EXP: the race eliminated something, and its eliminations and
# stop equal a serial replay of the same blocks (tests/helpers/race-replay);
# nothing but ok runs after the stop.
check_race() {
	[ "$(q "SELECT COUNT(*) FROM eliminations el JOIN configurations c ON c.id = el.configuration_id WHERE c.experiment_id = $1")" -ge 1 ] ||
		fail "the race eliminated nothing"
	q "SELECT c.key || ' after ' || el.after_block || ' against ' || a.key FROM eliminations el
	   JOIN configurations c ON c.id = el.configuration_id JOIN configurations a ON a.id = el.against_id
	   WHERE c.experiment_id = $1 ORDER BY el.after_block, c.idx" >"$tmp/race.got"
	q "SELECT 'stop ' || COALESCE(stop_reason, 'none') || ' after ' || COALESCE(stopped_after, 0) FROM races WHERE experiment_id = $1" >>"$tmp/race.got"
	cp "$db" "$tmp/replay.db"
	"$TA_BUILD/tests/helpers/race-replay" "$tmp/replay.db" "$1" >"$tmp/race.want" || fail "race-replay"
	diff "$tmp/race.want" "$tmp/race.got" >&2 || fail "the race differs from its serial replay"
	stop=$(q "SELECT COALESCE(stopped_after, 1000000) FROM races WHERE experiment_id = $1")
	[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $1 AND r.repetition >= $stop AND r.status <> 'ok'")" = 0 ] ||
		fail "runs left after the race stopped"
}
