#!/bin/sh
# The Slurm executor's controller against fake sbatch/squeue/scancel on PATH
# (tests/helpers/fake-slurm: a job table in files, "nodes" that are names,
# jobs run as processes of this host with SLURMD_NODENAME/SLURM_JOB_ID set),
# so that every failure case is made to happen, in a few seconds: blocks
# spread over nodes and ingested once; an sbatch that fails (with and
# without having submitted); one that keeps failing; a node that dies
# mid-block; a slurmd that dies while its job goes on (a duplicate result);
# squeue failing and forgetting ended jobs; workers that fail on every node;
# a controller killed with SIGKILL and resumed; SIGINT; a race whose
# eliminations equal a serial replay of the same blocks; a killed worker's
# knobs restored by the next worker on its node.  Host runner, host knobs
# under one fake sysfs root per node (--root DIR/%n).
. "$TA_TOP/tests/lib.sh"
command -v flock >/dev/null || skip "flock missing"
ta_tmpdir
. "$TA_TOP/tests/slurm-lib.sh"
export PATH="$TA_TOP/tests/helpers/fake-slurm:$PATH"
export FAKE_SLURM_NODES="fn1 fn2 fn3"
fake=$TA_TOP/tests/helpers/fake-slurm
slurm_nodes fn1 fn2 fn3

# Everything a killed test could leave running: our fake jobs (by their
# recorded session ids) and background controllers (by pid).
cleanup() {
	for p in $bg; do kill -KILL "$p" 2>/dev/null; done
	for f in "$tmp"/slurm*/jobs/*/pid; do
		[ -s "$f" ] && kill -KILL "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
bg=

# fresh NAME: a new fake cluster state for one scenario.
fresh() {
	export FAKE_SLURM_DIR="$tmp/slurm-$1"
	mkdir -p "$FAKE_SLURM_DIR/faults"
}

# ---- plan: how the sweep is spread, its wall time with max_hosts hosts -----
fresh plan
sweep planned 5 0.05 0.05 2
ta plan --root "$ROOTS/fn1" "$tmp/planned.yaml" >"$tmp/out" || fail "plan exited $?"
grep -q "^On Slurm: 5 blocks (one job each, 2 runs, .*at most 2 at once (executor.max_hosts 2, 3 nodes can take a job)" "$tmp/out" ||
	fail "plan: $(cat "$tmp/out")"
ta --json plan "$tmp/planned.yaml" >"$tmp/plan.json" || fail "plan --json"
# 3 rounds of 2 blocks (ceil(5 / 2)) of what one block takes.
[ "$(sqlite3 :memory: "SELECT j ->> '\$.executor.kind', j ->> '\$.executor.blocks',
	abs(j ->> '\$.executor.estimated_seconds' - 3 * (j ->> '\$.executor.block_seconds')) < 0.01
	FROM (SELECT readfile('$tmp/plan.json') AS j)")" = "slurm|5|1" ] || fail "plan --json: $(cat "$tmp/plan.json")"
ta --json plan --root "$ROOTS/fn1" --executor local "$tmp/planned.yaml" | grep -q '"kind": "local"' || fail "plan --executor local"
ta plan --executor pbs "$tmp/planned.yaml" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "expected local, slurm or ssh" "$tmp/err" || fail "plan --executor pbs"
# No shared_dir: refused up front, nothing stored.
sed '/^executor:/,$d' "$tmp/planned.yaml" >"$tmp/noshared.yaml"
ta -q run --executor slurm "$tmp/noshared.yaml" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "needs executor.shared_dir" "$tmp/err" || fail "no shared_dir: $(cat "$tmp/err")"
[ "$(q "SELECT COUNT(*) FROM experiments")" = 0 ] || fail "a refused sweep left an experiment"

# ---- blocks spread over the nodes, each ingested once ---------------------
fresh spread
sweep spread 4 0.05 0.05 2
ta -q run --root "$ROOTS/%n" "$tmp/spread.yaml" >"$tmp/out" 2>"$tmp/err" ||
	run_failed "run exited $?"
e=$(exp_of spread)
check_blocks "$e" 4 2
[ "$(hosts_of "$e")" -ge 2 ] || fail "runs on fewer than 2 hosts"
# A run saw its own configuration's knob value on its node, restored after.
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $e AND r.host_state ->> '\$.knobs.\"kvm_hv.dynamic_mt_modes\"'
	<> CAST(c.dynamic_mt_modes AS TEXT)")" = 0 ] || fail "a run saw another knob value"
for n in fn1 fn2 fn3; do
	[ "$(cat "$ROOTS/$n/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] ||
		fail "$n: knob not restored"
done
[ -z "$(find "$tmp/nodes" -name '*.db')" ] || fail "a worker left its database: $(find "$tmp/nodes" -name '*.db')"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e")" = 4 ] || fail "spread: extra attempts"
[ "$(q "SELECT status FROM experiments WHERE id = $e")" = done ] || fail "spread: not done"
[ "$(ls "$tmp/shared"/ta-e"$e"-*/block-*.db | wc -l)" = 4 ] || fail "spread: result files"

# ---- two workers on one host exclude each other ---------------------------
# The requests of blocks 1 and 2 again, both on fn3 at once (as a second
# slurmd on one real host would start them): the second waits for the node
# lock, so their runs never overlap; nodes share node_dir, keyed by name.
work=$(ls -d "$tmp/shared"/ta-e"$e"-*)
touch "$GATES/fn3"
SLURMD_NODENAME=fn3 SLURM_JOB_ID=901 "$TOPOADVISOR" run-block "$work/ta-e$e-${work##*-}-b1-a1.json" \
	>"$tmp/w1.out" 2>&1 &
w1=$!; bg="$bg $w1"
wait_until 20 worker_db_on fn3
SLURMD_NODENAME=fn3 SLURM_JOB_ID=902 "$TOPOADVISOR" run-block "$work/ta-e$e-${work##*-}-b2-a1.json" \
	>"$tmp/w2.out" 2>&1 &
w2=$!; bg="$bg $w2"
sleep 0.3
[ "$(find "$tmp/nodes/fn3" -name '*.db' | wc -l)" = 1 ] || fail "two workers ran on fn3 at once"
rm -f "$GATES/fn3"
wait "$w1" || fail "worker 1: $(cat "$tmp/w1.out")"
wait "$w2" || fail "worker 2: $(cat "$tmp/w2.out")"
[ "$(sqlite3 "$work/block-1.attempt-1.job-901.fn3.db" "SELECT MAX(finished_at) FROM runs")" \< \
  "$(sqlite3 "$work/block-2.attempt-1.job-902.fn3.db" "SELECT MIN(started_at) FROM runs")" ] ||
	fail "the second worker's runs began before the first's ended"

# ---- sbatch: fails, loses its reply after submitting, submits unseen ------
# The lost reply is found by the job's name (no second job); the unseen
# job is submitted again and, once seen, the extra one cancelled.  Every
# node is held at its gate until then, so that the block is still out
# when the late job shows up.
fresh sbatch
echo 1 >"$FAKE_SLURM_DIR/faults/sbatch-lost-reply"
echo 1 >"$FAKE_SLURM_DIR/faults/sbatch-fail"
echo 1 >"$FAKE_SLURM_DIR/faults/sbatch-hidden"
sweep sbatch 4 0.05 0.05 2
touch "$GATES/fn1" "$GATES/fn2" "$GATES/fn3"
"$TOPOADVISOR" --db "$db" run --root "$ROOTS/%n" "$tmp/sbatch.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 grep -q "cancelling 1 extra job" "$tmp/err"
rm -f "$GATES/fn1" "$GATES/fn2" "$GATES/fn3"
wait "$pid" || run_failed "sbatch faults: run failed"
e=$(exp_of sbatch)
check_blocks "$e" 4 2
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e")" = 4 ] ||
	fail "sbatch faults: $(q "SELECT block, attempt, job_id, state, outcome FROM block_attempts WHERE experiment_id = $e")"
grep -q "found job .* by its name after sbatch failed" "$tmp/err" || fail "lost reply not adopted: $(cat "$tmp/err")"
# 4 blocks + the one resubmitted after the hidden submission: 5 jobs, one cancelled.
[ "$(ls "$FAKE_SLURM_DIR/jobs" | wc -l)" = 5 ] || fail "jobs made: $(ls "$FAKE_SLURM_DIR/jobs")"

# ---- sbatch fails for good: a clear error, the experiment failed ----------
# A partition that does not exist: refused by plan and run at once (sinfo),
# nothing submitted, nothing stored.
fresh badpart
sweep badpart 2 0.05 0.05 2 ", partition: bad"
ta plan "$tmp/badpart.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "partition bad has no nodes" "$tmp/err" || fail "plan, bad partition: $(cat "$tmp/err")"
ta -q run --root "$ROOTS/%n" "$tmp/badpart.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a partition that does not exist should exit 2"
grep -q "partition bad has no nodes" "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ -z "$(exp_of badpart)" ] || fail "a refused partition left an experiment"
[ ! -s "$FAKE_SLURM_DIR/sbatch.log" ] || fail "a job was submitted to a partition that does not exist"

# ---- a node dies mid-block: NODE_FAIL, the block runs again elsewhere -----
fresh nodefail
sweep nodefail 3 0.05 0.05 2
touch "$GATES/fn1"
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/nodefail.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 grep -qx fn1 "$FAKE_SLURM_DIR"/jobs/101/node
wait_until 20 worker_db_on fn1
"$fake/fake-node" fn1 die
rm -f "$GATES/fn1"
wait "$pid" || run_failed "nodefail: run exited $?"
e=$(exp_of nodefail)
check_blocks "$e" 3 2
[ "$(q "SELECT state, slurm_state, outcome IS NULL FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = 1")" = "failed|NODE_FAIL|1" ] ||
	fail "attempt on the dead node: $(q "SELECT * FROM block_attempts WHERE experiment_id = $e")"
[ "$(q "SELECT outcome, node <> 'fn1' FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = 2")" = "ingested|1" ] ||
	fail "the block was not run again elsewhere"
# The killed worker's database (its journal) is still on the node, its knob changed.
[ -n "$(find "$tmp/nodes/fn1" -name '*.db')" ] || fail "the killed worker left no journal"
# show names the node and how to put it back.
ta show "$e" >"$tmp/show" || fail "show exited $?"
grep -q "node fn1 may be left with changed host knobs: the worker of block 1 attempt 1 (job 101) was killed (NODE_FAIL).*topoadvisor --db $tmp/nodes/fn1/.*-b1-a1.job-101.db restore-host" "$tmp/show" ||
	fail "show does not name the node left changed: $(cat "$tmp/show")"
[ -f "$(sed -n 's/.*topoadvisor --db \(.*\) restore-host/\1/p' "$tmp/show")" ] || fail "show names no journal that exists"
# The node comes back: the next worker there restores what the dead one left.
rm -f "$FAKE_SLURM_DIR/down/fn1"
fresh nodeback
sweep nodeback 1 0.05 0.05 2
FAKE_SLURM_NODES=fn1 ta -q run --root "$ROOTS/%n" "$tmp/nodeback.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "nodeback: run exited $?"
grep -q "restored what an earlier worker on fn1 left" "$tmp/shared"/ta-e"$(exp_of nodeback)"-*/*.out ||
	fail "the next worker did not restore: $(cat "$tmp/shared"/ta-e"$(exp_of nodeback)"-*/*.out)"
[ -z "$(find "$tmp/nodes/fn1" -name '*.db')" ] || fail "the dead worker's journal is still there"
[ "$(cat "$ROOTS/fn1/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] || fail "fn1 knob not restored"

# ---- only slurmd dies: the job goes on; its late result is a duplicate ----
fresh slurmd
sweep slurmd 3 0.05 0.05 2
touch "$GATES/fn1"
echo "-b3-" >"$FAKE_SLURM_DIR/faults/hold"
FAKE_SLURM_NODES="fn1 fn2" "$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/slurmd.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 grep -qx fn1 "$FAKE_SLURM_DIR"/jobs/101/node
wait_until 20 worker_db_on fn1
"$fake/fake-node" fn1 slurmd
e=$(exp_of slurmd)
wait_until 20 outcome_is "$e" 0 2 ingested
rm -f "$GATES/fn1"
"$fake/fake-node" fn1 wake
wait_until 20 outcome_is "$e" 0 1 duplicate
: >"$FAKE_SLURM_DIR/faults/hold"
wait "$pid" || run_failed "slurmd: run failed"
check_blocks "$e" 3 2
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $e AND r.repetition = 0 AND r.host = 'fn2'")" = 2 ] ||
	fail "block 1's runs are not the first complete result's"
[ -f "$(q "SELECT result_file FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = 1")" ] ||
	fail "the duplicate's file is not kept"

# ---- squeue fails twice, and forgets ended jobs (MinJobAge) ---------------
# (Not at the start: a Slurm that does not answer then is refused up front.)
fresh squeue
touch "$FAKE_SLURM_DIR/purge" "$GATES/fn1"
sweep squeue 3 0.05 0.05 2
"$TOPOADVISOR" --db "$db" run --root "$ROOTS/%n" "$tmp/squeue.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 worker_db_on fn1
echo 2 >"$FAKE_SLURM_DIR/faults/squeue-fail"
rm -f "$GATES/fn1"
wait "$pid" || run_failed "squeue faults: run failed"
grep -q "warning: squeue exited with status 1" "$tmp/err" || fail "no squeue warning: $(cat "$tmp/err")"
check_blocks "$(exp_of squeue)" 3 2
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $(exp_of squeue)")" = 3 ] ||
	fail "a purged job's block was run again"

# ---- the worker fails on every node: attempts, then the block's runs fail -
fresh broken
sweep broken 2 0.05 0.05 2 ", max_attempts: 2"
sed -i 's/kvm_hv.dynamic_mt_modes: \[2, 6\]/kvm_hv.one_vm_per_core: [Y, N]/' "$tmp/broken.yaml"
ta -q run --root "$ROOTS/%n" "$tmp/broken.yaml" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || run_failed "failing workers: run exited $rc, expected 1"
e=$(exp_of broken)
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND state = 'failed' AND error LIKE '%without a result: %one_vm_per_core%'")" = 4 ] ||
	fail "broken attempts: $(q "SELECT block, attempt, state, error FROM block_attempts WHERE experiment_id = $e")"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $e AND r.status = 'failed' AND r.error LIKE '%no result in 2 attempts%'")" = 4 ] ||
	fail "broken runs: $(q "SELECT status, error FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $e")"

# ---- the controller killed with SIGKILL: resume adopts what is out --------
fresh killed
sweep killed 3 0.05 0.05 2
touch "$GATES/fn1" "$GATES/fn2"
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/killed.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/102/pid"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
e=$(exp_of killed)
rm -f "$GATES/fn1"
wait_until 20 test -f "$FAKE_SLURM_DIR/jobs/101/rc"
( sleep 0.5; rm -f "$GATES/fn2" ) &
ta -q resume --root "$ROOTS/%n" "$e" >/dev/null 2>"$tmp/err" || run_failed "resume exited $?"
check_blocks "$e" 3 2
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e")" = 3 ] ||
	fail "resume did not adopt the jobs: $(q "SELECT block, attempt, job_id, state FROM block_attempts WHERE experiment_id = $e")"

# ---- SIGINT: the jobs out are cancelled, the node put back; resume ends it -
fresh sigint
sweep sigint 2 0.05 0.05 2
touch "$GATES/fn1"
"$TOPOADVISOR" --db "$db" -q run --root "$ROOTS/%n" "$tmp/sigint.yaml" >/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 worker_db_on fn1
kill -INT "$pid"
wait "$pid"
[ $? -eq 130 ] || fail "SIGINT: run should exit 130"
e=$(exp_of sigint)
wait_until 20 no_worker_db_on fn1
[ "$(cat "$FAKE_SLURM_DIR/jobs/101/final")" = CANCELLED ] || fail "job not cancelled"
[ "$(cat "$ROOTS/fn1/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] || fail "SIGINT: knob not restored"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND state = 'cancelled'")" -ge 1 ] ||
	fail "no cancelled attempt"
rm -f "$GATES/fn1"
ta -q resume --root "$ROOTS/%n" "$e" >/dev/null 2>"$tmp/err" || run_failed "resume after SIGINT exited $?"
check_blocks "$e" 2 2

# ---- a race across nodes equals the serial replay of its blocks -----------
fresh race
sweep race 6 0.05 0.05 3 "" "strategy: race
race: {first_test: 3}"
sed -i 's/\[2, 6\]/[2, 4, 6]/' "$tmp/race.yaml"
ta -q run --root "$ROOTS/%n" "$tmp/race.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "race: run exited $?"
check_race "$(exp_of race)"
pass
