#!/bin/sh
# The quickstart (configs/quickstart.yaml) raced in real TCG guests, kept
# short (2 s benchmarks, first test after block 2, at most 3 blocks):
# interrupted with SIGINT during the first block, then resumed to the end
# of the race; the race's state, eliminations and runs are checked, and
# rank/recommend/show read it: the decision that ranks best at the end was
# never eliminated.
. "$TA_TOP/tests/lib.sh"
guest_sweep_setup taracetest-

sed -e "s/^libvirt:$/libvirt:\n  name_prefix: $prefix/" \
    -e 's/"5s"/"2s"/; s/^  duration: 5/  duration: 2/' \
    -e 's/^repetitions: 3$/repetitions: 3\nstrategy: race\nrace: {first_test: 2}/' \
    "$TA_TOP/configs/quickstart.yaml" >"$tmp/quick.yaml"
grep -q "^strategy: race" "$tmp/quick.yaml" && grep -q "name_prefix: $prefix" "$tmp/quick.yaml" ||
	fail "could not derive the raced quickstart from configs/quickstart.yaml"
ta plan "$tmp/quick.yaml" 2>&1 | grep -q "race: at most 18 runs" || fail "plan's race estimate"

# SIGINT after the first two runs: the race has not tested yet.
"$TOPOADVISOR" --db "$db" -q run "$tmp/quick.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
i=0
while [ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'" 2>/dev/null)" != 2 ]; do
	i=$((i + 1)); [ $i -lt 1800 ] || { kill $pid; fail "no run finished: $(cat "$tmp/err")"; }
	sleep 0.1
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || { cat "$tmp/err"; fail "SIGINT: exit $rc"; }
[ "$(q "SELECT blocks_evaluated, stop_reason IS NULL FROM races")" = "0|1" ] ||
	fail "race state after SIGINT: $(q "SELECT * FROM races")"
[ "$(ours)" = 0 ] || fail "the interrupted race left a guest"

# A TCG guest that fails to boot on a loaded host fails its run (exit 1);
# resume runs failed runs again, so give it two more tries.
tries=0
until ta -q resume 1 2>"$tmp/err"; do
	rc=$?
	[ $rc -eq 1 ] && [ $tries -lt 2 ] || { cat "$tmp/err"; fail "resume exited $rc"; }
	tries=$((tries + 1))
done
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = done ] || fail "experiment not done"
[ "$(q "SELECT blocks_evaluated >= 2 AND stop_reason IS NOT NULL FROM races")" = 1 ] ||
	fail "race did not end: $(q "SELECT * FROM races")"
[ "$(q "SELECT COUNT(*) FROM runs r WHERE status <> 'ok' AND configuration_id NOT IN
	(SELECT configuration_id FROM eliminations)")" = 0 ] ||
	fail "runs left: $(q "SELECT status, error FROM runs WHERE status <> 'ok'")"
[ "$(q "SELECT COUNT(*) FROM runs WHERE repetition < 2 AND status = 'ok'")" -ge 10 ] ||
	fail "the first two blocks: $(q "SELECT repetition, status, COUNT(*) FROM runs GROUP BY 1, 2")"
# An eliminated shape falls at both noise levels, never the baseline, and
# runs no more after its block.
[ "$(q "SELECT COUNT(*) FROM eliminations e JOIN configurations c ON c.id = e.configuration_id
	WHERE c.key LIKE '2x1x1/%'")" = 0 ] || fail "the baseline (2x1x1, both noise levels) was eliminated"
[ "$(( $(q "SELECT COUNT(*) FROM eliminations") % 2 ))" = 0 ] || fail "a shape fell at one noise level only"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN eliminations e ON e.configuration_id = r.configuration_id
	WHERE r.repetition >= e.after_block")" = 0 ] || fail "an eliminated configuration ran on"
[ "$(ours)" = 0 ] || fail "domains left after the race"

ta show 1 | grep -q "strategy   race: stopped after block" || fail "show lacks the race"
ta rank 1 >/dev/null || fail "rank of the raced quickstart"
# The decision that ranks best at the end was never eliminated during the race.
ta --json rank 1 >"$tmp/rank.json" || fail "rank --json of the raced quickstart"
[ "$(sqlite3 :memory: "SELECT json_extract(readfile('$tmp/rank.json'), '\$.decisions[0].eliminated_block')")" = 0 ] ||
	fail "the best decision at the end was eliminated: $(cat "$tmp/rank.json")"
ta recommend 1 >"$tmp/rec" || fail "recommend of the raced quickstart"
cat "$tmp/rec"
q "SELECT c.key, e.after_block, e.p FROM eliminations e JOIN configurations c ON c.id = e.configuration_id"
echo "race: $(q "SELECT stop_reason, stopped_after FROM races"), $(q "SELECT COUNT(*) FROM runs") runs"
pass
