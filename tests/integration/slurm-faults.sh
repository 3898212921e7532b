#!/bin/sh
# The Slurm executor against bad files and bad nodes, with the fake Slurm
# of slurm-fake.sh (tests/helpers/fake-slurm): forged result files (a block
# of -1, one out of range, another block's, an unknown configuration, an
# oversized one, another job's) each fail only their attempt, with the
# reason stored, and never put more jobs out than max_hosts; job output
# files that are a FIFO or /dev/zero neither block nor spin the controller.
. "$TA_TOP/tests/lib.sh"
command -v flock >/dev/null || skip "flock missing"
command -v sqlite3 >/dev/null || skip "sqlite3 missing"
ta_tmpdir
. "$TA_TOP/tests/slurm-lib.sh"
export PATH="$TA_TOP/tests/helpers/fake-slurm:$PATH"
export FAKE_SLURM_NODES="fn1 fn2 fn3"
slurm_nodes fn1 fn2 fn3

cleanup() {
	for p in $bg; do kill -KILL "$p" 2>/dev/null; done
	for f in "$tmp"/slurm*/jobs/*/pid; do
		[ -s "$f" ] && kill -KILL "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
bg=

fresh() {
	export FAKE_SLURM_DIR="$tmp/slurm-$1"
	mkdir -p "$FAKE_SLURM_DIR/faults"
}

# Never more jobs pending or running than max_hosts ($1) when one more came.
check_active() {
	awk -v max="$1" '$2 >= max { bad = 1; print } END { exit bad }' "$FAKE_SLURM_DIR/active.log" >&2 ||
		fail "a job was submitted while $1 were out already"
}

# A real result to forge from.
fresh template
sweep template 1 0 0.05 1
FAKE_SLURM_NODES=fn1 ta -q run --root "$ROOTS/%n" "$tmp/template.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "template run"
template=$(ls "$tmp"/shared/ta-e*/block-1.attempt-1.job-*.db)
[ -f "$template" ] || fail "no template result"
twork=${template%/*}
request=$(ls "$twork"/*-b1-a1.json)

# ---- the worker: a private working directory, its own node_dir only --------
# The benchmark ran in the job's own directory on the node, not among the
# results in the shared work directory, and that directory is gone.
case "$(cat "$ROOTS/fn1/cwd")" in
"$tmp/nodes/fn1/run.101") ;;
*) fail "the benchmark ran in $(cat "$ROOTS/fn1/cwd")" ;;
esac
[ ! -e "$tmp/nodes/fn1/run.101" ] || fail "the job's working directory stays"
# worker NODE JOB REQUEST: run-block as Slurm would start it on NODE.
worker() {
	SLURMD_NODENAME=$1 SLURM_JOB_ID=$2 "$TOPOADVISOR" run-block "$3" >"$tmp/w.out" 2>&1
}
# A request whose job name climbs out of node_dir: refused, nothing touched.
echo precious >"$tmp/victim.job-901.db"
sed 's|"job_name": *"[^"]*"|"job_name":"../../victim"|' "$request" >"$twork/evil.json"
grep -qF '"../../victim"' "$twork/evil.json" || fail "the evil request: $(cat "$twork/evil.json")"
worker fn2 901 "$twork/evil.json" && fail "a job name with '..' was used"
grep -q "cannot name a file" "$tmp/w.out" || fail "evil job name: $(cat "$tmp/w.out")"
[ "$(cat "$tmp/victim.job-901.db")" = precious ] || fail "the worker wrote outside node_dir"
# Files in node_dir that are not our journals are left alone, the block runs.
mkdir -p -m 0700 "$tmp/nodes/fn2"
echo "not a database" >"$tmp/nodes/fn2/notes.job-7.db"
echo "neither" >"$tmp/nodes/fn2/other.db"
worker fn2 902 "$request" || fail "a foreign file in node_dir stopped the worker: $(cat "$tmp/w.out")"
grep -q "is no journal" "$tmp/w.out" || fail "no word on the foreign file: $(cat "$tmp/w.out")"
[ -f "$tmp/nodes/fn2/notes.job-7.db" ] && [ -f "$tmp/nodes/fn2/other.db" ] || fail "foreign files removed"
# A node_dir others may write (they could plant a journal): refused.
chmod 0777 "$tmp/nodes"
worker fn2 903 "$request" && fail "a node_dir writable by all was used"
chmod 0700 "$tmp/nodes"
grep -q "others could write our journals" "$tmp/w.out" || fail "writable node_dir: $(cat "$tmp/w.out")"
# A node's directory open to others: refused too.
chmod 0755 "$tmp/nodes/fn2"
worker fn2 904 "$request" && fail "a node directory open to others was used"
chmod 0700 "$tmp/nodes/fn2"
grep -q "closed to others" "$tmp/w.out" || fail "open node directory: $(cat "$tmp/w.out")"
rm -f "$twork"/block-1.attempt-1.job-90*.db

# forge FILE BLOCK0 ATTEMPT JOBNAME JOBID [SQL]: a copy of the template
# claiming those, published as a worker does (a hidden name, then rename).
forge() {
	cp "$template" "$work/.forge"
	sqlite3 "$work/.forge" "PRAGMA ignore_check_constraints = ON; UPDATE block_attempts SET block = $2, attempt = $3, job_name = '$4', job_id = '$5';
		UPDATE runs SET repetition = $2; ${6:-}" || fail "forging $1"
	mv "$work/.forge" "$work/$1"
}

# ---- forged results: each fails only its attempt ---------------------------
# One node, held at its gate: block 1's attempts are each answered by a
# forged file named like that attempt's job before the worker ends.
fresh forged
sweep forged 2 0.05 0.05 1 ", max_attempts: 8"
touch "$GATES/fn1"
FAKE_SLURM_NODES=fn1 "$TOPOADVISOR" --db "$db" run --root "$ROOTS/%n" "$tmp/forged.yaml" \
	>/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/101/pid"
e=$(exp_of forged)
work=$(q "SELECT work_dir FROM distributed WHERE experiment_id = $e")
tag=$(q "SELECT tag FROM distributed WHERE experiment_id = $e")
# attempt N is job 100+N; FORGE BLOCK0 SQL: its result, then wait for it to fail.
n=0
try_forged() {
	n=$((n + 1))
	job=$((100 + n))
	wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/$job/pid"
	forge "block-1.attempt-$n.job-$job.fn1.db" "$1" "$n" "$tag-b1-a$n" "$job" "$2"
	wait_until 20 sh -c "[ \"\$(sqlite3 '$db' \"SELECT state FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = $n\")\" = failed ]"
	why=$(q "SELECT error FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = $n")
	case "$why" in *"$3"*) ;; *) fail "attempt $n: '$why', expected '$3'" ;; esac
	[ "$(q "SELECT result_file FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = $n")" = \
	  "$work/block-1.attempt-$n.job-$job.fn1.db" ] || fail "attempt $n: the file is not recorded"
	[ "$(cat "$FAKE_SLURM_DIR/jobs/$job/final" 2>/dev/null)" = CANCELLED ] || fail "attempt $n: job $job not cancelled"
}
try_forged -1 "" "holds block 0 attempt 1, its name says block 1"
try_forged 6 "" "holds block 7 attempt 2"
try_forged 1 "" "holds block 2 attempt 3"
try_forged 0 "UPDATE configurations SET key = 'no-such-' || key" "has no run of no-such-"
# attempt 5: too large to be a result (sparse: nothing is written)
n=5
wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/105/pid"
truncate -s 5G "$work/block-1.attempt-5.job-105.fn1.db"
wait_until 20 sh -c "[ \"\$(sqlite3 '$db' \"SELECT state FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = 5\")\" = failed ]"
q "SELECT error FROM block_attempts WHERE experiment_id = $e AND block = 0 AND attempt = 5" | grep -q "more than a result may" ||
	fail "oversized: $(q "SELECT error FROM block_attempts WHERE experiment_id = $e AND attempt = 5")"
rm -f "$work/block-1.attempt-5.job-105.fn1.db"
# attempt 6: a file of another job, and one of no attempt: both ignored.
wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/106/pid"
forge "block-1.attempt-6.job-999.fn1.db" 0 6 "$tag-b1-a6" 999
forge "block-9.attempt-1.job-106.fn1.db" 8 1 "$tag-b9-a1" 106
rm -f "$GATES/fn1"
wait "$pid" || run_failed "forged: run exited $?"
check_blocks "$e" 2 2
[ "$(q "SELECT attempt FROM block_attempts WHERE experiment_id = $e AND block = 0 AND outcome = 'ingested'")" = 6 ] ||
	fail "forged: $(q "SELECT block, attempt, state, outcome, error FROM block_attempts WHERE experiment_id = $e")"
grep -q "ignoring block-1.attempt-6.job-999.fn1.db: not the job of that attempt" "$tmp/err" || fail "another job's file: $(cat "$tmp/err")"
grep -q "ignoring block-9.attempt-1.job-106.fn1.db: no such attempt" "$tmp/err" || fail "block 9's file: $(cat "$tmp/err")"
check_active 1
# show says why each attempt failed.
ta show "$e" >"$tmp/show" 2>&1 || fail "show exited $?"
grep -q "has no run of no-such-" "$tmp/show" || fail "show lacks the reason: $(cat "$tmp/show")"
# resume reads none of them again: nothing to do, no failure.
ta -q resume --root "$ROOTS/%n" "$e" >/dev/null 2>"$tmp/err" || run_failed "resume after forged"

# ---- job output that is a FIFO, or /dev/zero --------------------------------
# The status line reads each running job's output; a FIFO put in its place
# must not block the controller, a link to /dev/zero not spin it.
fresh outputs
sweep outputs 2 0.05 0.05 2
touch "$GATES/fn1" "$GATES/fn2"
FAKE_SLURM_NODES="fn1 fn2" "$TOPOADVISOR" --db "$db" run --root "$ROOTS/%n" "$tmp/outputs.yaml" \
	>/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
wait_until 20 test -s "$FAKE_SLURM_DIR/jobs/102/pid"
e=$(exp_of outputs)
work=$(q "SELECT work_dir FROM distributed WHERE experiment_id = $e")
out1=$(ls "$work"/*-b1-a1.101.out) out2=$(ls "$work"/*-b2-a1.102.out)
rm -f "$out1" "$out2"
mkfifo "$out1"
ln -s /dev/zero "$out2"
rm -f "$GATES/fn1" "$GATES/fn2"
wait_until 60 sh -c "! kill -0 $pid"
wait "$pid" || run_failed "outputs: run exited $?"
check_blocks "$e" 2 2

# ---- permanent errors: refused at once ---------------------------------------
# No sbatch on PATH (everything else there): plan and run refuse, nothing stored.
fresh nosbatch
mkdir "$tmp/bin"
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
	b=${f##*/}
	case "$b" in sbatch|squeue|scancel|sinfo) continue ;; esac
	[ -e "$tmp/bin/$b" ] || ln -s "$f" "$tmp/bin/$b"
done
for b in squeue scancel sinfo; do ln -s "$TA_TOP/tests/helpers/fake-slurm/$b" "$tmp/bin/$b"; done
sweep nosbatch 2 0.05 0.05 2
PATH="$tmp/bin" ta plan "$tmp/nosbatch.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "sbatch is not on PATH" "$tmp/err" || fail "plan without sbatch: $(cat "$tmp/err")"
PATH="$tmp/bin" ta -q run --root "$ROOTS/%n" "$tmp/nosbatch.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "sbatch is not on PATH" "$tmp/err" || fail "run without sbatch: $(cat "$tmp/err")"
grep -q "still out" "$tmp/err" && fail "jobs said to be out: $(cat "$tmp/err")"
[ -z "$(exp_of nosbatch)" ] || fail "a sweep without sbatch left an experiment"
# Every node down: refused up front too.
fresh alldown
mkdir -p "$FAKE_SLURM_DIR/down"
touch "$FAKE_SLURM_DIR/down/fn1" "$FAKE_SLURM_DIR/down/fn2" "$FAKE_SLURM_DIR/down/fn3"
ta plan "$tmp/nosbatch.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "no node of the default partition can take a job (fn1 down\*" "$tmp/err" ||
	fail "plan, nodes down: $(cat "$tmp/err")"
# sbatch refusing for good (a node configuration no node has): one try, no
# "jobs still out", the experiment failed.
fresh permanent
echo 1 >"$FAKE_SLURM_DIR/faults/sbatch-permanent"
sweep permanent 2 0.05 0.05 1
ta run --root "$ROOTS/%n" "$tmp/permanent.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "a refused job should exit 2: $(cat "$tmp/err")"
grep -q "Slurm refused the job: .*Requested node configuration is not available" "$tmp/err" || fail "permanent: $(cat "$tmp/err")"
grep -q "still out\|may have made a job" "$tmp/err" && fail "permanent: jobs said to be out: $(cat "$tmp/err")"
[ "$(wc -l <"$FAKE_SLURM_DIR/sbatch.log")" = 1 ] || fail "permanent: sbatch tried $(wc -l <"$FAKE_SLURM_DIR/sbatch.log") times"
[ "$(q "SELECT status FROM experiments WHERE id = $(exp_of permanent)")" = failed ] || fail "permanent: not failed"

# ---- plan counts the nodes that exist; one failure of Slurm at the start ----
fresh onenode
sweep onenode 2 0.05 0.05 3
FAKE_SLURM_NODES=fn1 ta plan "$tmp/onenode.yaml" >"$tmp/out" 2>&1 || fail "plan: $(cat "$tmp/out")"
grep -q "at most 1 at once (executor.max_hosts 3, 1 node can take a job): about .* with 1 hosts" "$tmp/out" ||
	fail "plan with one node: $(cat "$tmp/out")"
echo 1 >"$FAKE_SLURM_DIR/faults/squeue-fail"
echo 1 >"$FAKE_SLURM_DIR/faults/sinfo-fail"
FAKE_SLURM_NODES=fn1 ta -q run --root "$ROOTS/%n" "$tmp/onenode.yaml" >/dev/null 2>"$tmp/err" ||
	run_failed "one squeue and one sinfo failure at the start failed the sweep"
check_blocks "$(exp_of onenode)" 2 2

# ---- a node that fails every block it gets ------------------------------------
# fn1 lacks the knob: its blocks fail at once.  A block that failed there
# goes elsewhere (--exclude), and after exclude_after (2) blocks failed
# there, fn1 gets no more of the sweep; every block is done on fn2/fn3.
fresh badnode
mv "$ROOTS/fn1/sys/module/kvm_hv/parameters/dynamic_mt_modes" "$tmp/fn1-knob"
sweep badnode 6 0.05 0.05 3 ", exclude_after: 2"
ta run --root "$ROOTS/%n" "$tmp/badnode.yaml" >/dev/null 2>"$tmp/err" || run_failed "badnode: run exited $?"
mv "$tmp/fn1-knob" "$ROOTS/fn1/sys/module/kvm_hv/parameters/dynamic_mt_modes"
e=$(exp_of badnode)
check_blocks "$e" 6 2
# (Blocks sent at once may all fail there before the first failure is seen:
# at most max_hosts; none of the blocks sent again goes back there.)
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND node = 'fn1'")" -le 3 ] &&
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND node = 'fn1' AND attempt > 1")" = 0 ] ||
	fail "fn1 got blocks after failing: $(q "SELECT block, attempt, node, state FROM block_attempts WHERE experiment_id = $e")"
[ "$(q "SELECT COUNT(*) FROM (SELECT block FROM block_attempts WHERE experiment_id = $e AND state = 'failed' GROUP BY block, node HAVING COUNT(*) > 1)")" = 0 ] ||
	fail "a block failed twice on one node"
grep -q "node fn1: excluded from this sweep: its last 2 blocks failed there" "$tmp/err" || fail "no word of the exclusion: $(cat "$tmp/err")"
grep -q "excluded: fn1" "$tmp/err" || fail "the status line does not say fn1 is excluded"
ta show "$e" >"$tmp/show" || fail "show exited $?"
grep -q "excluded from the sweep, their last 2 blocks having failed there (executor.exclude_after): fn1" "$tmp/show" ||
	fail "show: $(cat "$tmp/show")"
grep -q "ended FAILED without a result: .*dynamic_mt_modes" "$tmp/show" || fail "show lacks the job's own cause: $(cat "$tmp/show")"

# ---- a node stalls during a race: the race stays a race -----------------------
# Block 2 is held on fn2 (as by a node whose death Slurm has not noticed
# yet): at most max_hosts (2) blocks past the race's last look (block 1)
# go out meanwhile, not every later block with every configuration.
fresh stall
sweep stall 8 0.05 0.05 2 "" "strategy: race
race: {first_test: 3}"
sed -i 's/\[2, 6\]/[2, 4, 6]/' "$tmp/stall.yaml"
touch "$GATES/fn2"
FAKE_SLURM_NODES="fn1 fn2" "$TOPOADVISOR" --db "$db" run --root "$ROOTS/%n" "$tmp/stall.yaml" \
	>/dev/null 2>"$tmp/err" &
pid=$!; bg="$bg $pid"
e=
wait_until 20 sh -c "[ -n \"\$(sqlite3 '$db' \"SELECT MAX(id) FROM experiments WHERE name = 'stall'\")\" ]"
e=$(exp_of stall)
wait_until 30 outcome_is "$e" 2 1 ingested
# Four polls more: the controller had every chance to send block 4.
sleep 0.3
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE experiment_id = $e AND block >= 3")" = 0 ] ||
	fail "blocks past the bound went out while block 2 stalled: $(q "SELECT block, attempt, node, state FROM block_attempts WHERE experiment_id = $e")"
# The node dies: block 2 goes to fn1, and the race goes on.
"$TA_TOP/tests/helpers/fake-slurm/fake-node" fn2 die
rm -f "$GATES/fn2"
wait "$pid" || run_failed "stall: run exited $?"
check_race "$e"
pass
