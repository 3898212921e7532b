#!/bin/sh
# A real Slurm cluster on this machine (scripts/slurm-cluster.sh: munged,
# slurmctld and three slurmd "hosts" tasl-n1..3, each in its own network
# namespace and UTS namespace, sharing the filesystem), started and torn
# down here, running host-runner sweeps with one fake sysfs root per node:
# every block ingested exactly once, runs on >= 2 hosts, no two blocks at
# once on one host, a raced sweep equal to the serial replay of its blocks,
# and a node killed mid-block (every process of its namespace) whose block
# is run again elsewhere with no run lost or doubled.  Nothing is left:
# daemons, namespaces, links, spool files, munge.  Run it under
# flock /tmp/ta-suite.lock (namespaces and daemons are global).
. "$TA_TOP/tests/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, Slurm daemons)"
for b in slurmctld slurmd munged sbatch squeue scancel scontrol sinfo ip nsenter unshare; do
	command -v "$b" >/dev/null || skip "$b not installed (scripts/deps.sh check)"
done
ta_tmpdir
. "$TA_TOP/tests/slurm-lib.sh"
cluster=$tmp/cluster
mkdir -p "$cluster"
bg=
cleanup() {
	for p in $bg; do kill -KILL "$p" 2>/dev/null; done
	"$TA_TOP/scripts/slurm-cluster.sh" stop "$cluster" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
SLURM_CONF=$("$TA_TOP/scripts/slurm-cluster.sh" start "$cluster" 3) || fail "the cluster did not start"
export SLURM_CONF
slurm_nodes tasl-n1 tasl-n2 tasl-n3

# ---- a sweep across the nodes ---------------------------------------------
sweep spread 6 0.2 0.5 3
ta -q run --root "$ROOTS/%n" "$tmp/spread.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "spread: run failed"
e=$(exp_of spread)
check_blocks "$e" 6 2
[ "$(hosts_of "$e")" -ge 2 ] || fail "runs on fewer than 2 hosts"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e")" = 6 ] ||
	fail "spread attempts: $(q "SELECT block, attempt, job_id, node, state FROM block_attempts WHERE experiment_id = $e")"
# Slurm's own view: the job ids stored are real jobs that ran on the nodes stored.
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND node LIKE 'tasl-n%'
	AND job_id GLOB '[0-9]*' AND result_file IS NOT NULL")" = 6 ] || fail "attempt rows"
for n in tasl-n1 tasl-n2 tasl-n3; do
	[ "$(cat "$ROOTS/$n/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] ||
		fail "$n: knob not restored"
done
[ -z "$(find "$tmp/nodes" -name '*.db')" ] || fail "a worker left its database"

# ---- a race across the nodes ------------------------------------------------
sweep race 6 0.1 0.5 3 "" "strategy: race
race: {first_test: 3}"
sed -i 's/\[2, 6\]/[2, 4, 6]/' "$tmp/race.yaml"
ta -q run --root "$ROOTS/%n" "$tmp/race.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "race: run failed"
check_race "$(exp_of race)"

# ---- a node killed mid-block ------------------------------------------------
# tasl-n1's block waits at its gate until the node is dead; slurmctld sees
# the node down (SlurmdTimeout) and ends the job NODE_FAIL.
sweep nodefail 3 0.1 0.5 2
touch "$GATES/tasl-n1"
t0=$(date +%s)
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/nodefail.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 30 worker_db_on tasl-n1
"$TA_TOP/scripts/slurm-cluster.sh" kill-node "$cluster" tasl-n1
rm -f "$GATES/tasl-n1"
wait "$pid" || run_failed "nodefail: run failed"
echo "nodefail: the sweep with a node killed mid-block took $(( $(date +%s) - t0 )) s (SlurmdTimeout=10)" >&2
e=$(exp_of nodefail)
# show names the dead node, whose worker could not restore its knobs.
ta show "$e" >"$tmp/show" || fail "show exited $?"
grep -q "node tasl-n1 may be left with changed host knobs: the worker of block .* was killed (NODE_FAIL)" "$tmp/show" ||
	fail "show does not name the dead node: $(cat "$tmp/show")"
check_blocks "$e" 3 2
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND node = 'tasl-n1'
	AND state = 'failed' AND slurm_state = 'NODE_FAIL' AND outcome IS NULL")" = 1 ] ||
	fail "the dead node's attempt: $(q "SELECT block, attempt, node, state, slurm_state, outcome FROM block_attempts WHERE experiment_id = $e")"
[ "$(q "SELECT COUNT(*) FROM block_attempts a WHERE experiment_id = $e AND attempt = 2 AND outcome = 'ingested'
	AND node <> 'tasl-n1' AND block = (SELECT block FROM block_attempts WHERE experiment_id = $e AND node = 'tasl-n1' AND state = 'failed')")" = 1 ] ||
	fail "the dead node's block was not run again elsewhere"

# ---- nothing left behind ----------------------------------------------------
"$TA_TOP/scripts/slurm-cluster.sh" stop "$cluster" || fail "the cluster did not stop"
[ -z "$(ip netns list | grep '^ta-slurm-')" ] || fail "namespaces left: $(ip netns list)"
[ -z "$(ip -o link show | grep -e ' ta-sl-' -e ' ta-slurm-br')" ] || fail "links left"
pgrep -f "$cluster" >/dev/null && fail "daemons left: $(pgrep -af "$cluster")"
[ -z "$(ls -A "$cluster")" ] || fail "files left in the cluster directory: $(ls -A "$cluster")"
pass
