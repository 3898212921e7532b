#!/bin/sh
# Interrupting a sweep: SIGINT during a run restores the host, marks the run
# interrupted and exits 130; resume finishes it.  SIGKILL of the controller
# leaves the knob changed and a run 'running'; resume restores the host from
# the journal, marks the stale run and finishes the sweep.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup

cat >"$tmp/sweep.yaml" <<YAML
name: slow
guest: {runner: host}
topology: [1x1x1]
host: {subcores_per_core: [2]}
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "4242", "2"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 3
order: sequential
YAML

# Waits until experiment $1 has a run in status running (at most 20 s).
wait_running() {
	i=0
	while [ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'running'" 2>/dev/null)" != 1 ]; do
		i=$((i + 1)); [ $i -lt 200 ] || fail "no run started"; sleep 0.1
	done
	sleep 0.5
}

# --- SIGINT ---
"$TOPOADVISOR" --db "$db" -q run --root "$root" "$tmp/sweep.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
wait_running
[ "$(cat "$knob")" = 2 ] || fail "knob not applied during the run"
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || { cat "$tmp/err"; fail "SIGINT: exit $rc, expected 130"; }
[ "$(cat "$knob")" = 1 ] || fail "SIGINT: knob not restored"
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = interrupted ] || fail "experiment status"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'interrupted'")" = 1 ] ||
	fail "runs: $(q "SELECT status FROM runs")"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'planned'")" -ge 1 ] || fail "later runs should still be planned"
[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] || fail "journal"
pgrep -f "fake-bench 4242" >/dev/null && fail "benchmark left running after SIGINT"

ta -q resume --root "$root" 1 2>"$tmp/err" || { cat "$tmp/err"; fail "resume exited $?"; }
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 3 ] || fail "resume did not finish"
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = done ] || fail "resumed experiment status"
[ "$(cat "$knob")" = 1 ] || fail "knob not restored after resume"
ta resume 1 2>&1 | grep -q "nothing to resume" || fail "second resume"

# --- SIGKILL ---
"$TOPOADVISOR" --db "$db" -q run --root "$root" "$tmp/sweep.yaml" >/dev/null 2>&1 &
pid=$!
wait_running
kill -KILL $pid
wait $pid 2>/dev/null
[ "$(cat "$knob")" = 2 ] || fail "the killed controller could not have restored the knob"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 2 AND r.status = 'running'")" = 1 ] ||
	fail "the killed run should still say running"
sleep 2.5	# the orphaned benchmark (killed with its parent) is gone
pgrep -f "fake-bench 4242" >/dev/null && fail "benchmark outlived its killed controller"
ta -q resume --root "$root" 2 2>"$tmp/err" || { cat "$tmp/err"; fail "resume after SIGKILL exited $?"; }
[ "$(cat "$knob")" = 1 ] || fail "knob not restored after resume"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 2 AND r.status = 'ok'")" = 3 ] ||
	fail "resume after SIGKILL did not finish: $(q "SELECT status, error FROM runs")"
[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] || fail "journal after resume"
pass
