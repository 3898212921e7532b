#!/bin/sh
# The decision engine's rules through the real command line, on sweeps of
# known truth with the host runner and a fake sysfs root: the benchmark
# (written below) prints a throughput whose mean follows the value of
# subcores_per_core under that root, with a deterministic 2 % spread per
# run, and fails or carries a boot effect where a case asks for it.
#  - the quickstart's and the demo's shapes raced end to end (3 decisions x
#    2 noise levels, 4 x 3): the decision that ranks best at the end was
#    never eliminated, and it is the one truly better;
#  - an environment knob (advisor.environment: [ksm]) is never in the host
#    commands recommend prints;
#  - a configuration failing 1 run in 3, however fast its other runs, is
#    failing: never recommended, and the verdict says its runs failed;
#  - guest.reuse with the host runner: sessions of guest.reuse_runs blocks,
#    guest.prepare once per session, runs.boot shared, show reports the
#    boot-to-boot and run-to-run spread;
#  - compare: an experiment against itself is refused; a rerun of the same
#    truth never "changes the winner";
#  - a configuration failing every run is failing (no more runs asked for
#    it), also after extend;
#  - an undecided verdict names needed_repetitions, and extend runs them;
#    a rerun of an undecided experiment is inconclusive, never a changed
#    winner.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup
ksm=$root/sys/kernel/mm/ksm/run
mkdir -p "$(dirname "$ksm")"
echo 0 >"$ksm"

# bench.sh STATE MEANS CV [FAIL_KEY FAIL_EVERY]: MEANS "1=100,2=120" by the
# value of subcores_per_core (with KNOB2 set, "4-1=110": subcores-KNOB2);
# the n-th run of a key draws from (key, n).
cat >"$tmp/bench.sh" <<'SH'
#!/bin/sh
k=$(cat "$KNOB")
[ -n "${KNOB2:-}" ] && k="$k-$(cat "$KNOB2")"
n=$(cat "$1/count.$k" 2>/dev/null || echo 0)
echo $((n + 1)) >"$1/count.$k"
if [ "${4:-0}" = "$k" ] && [ $((n % $5)) -eq $(($5 - 1)) ]; then
	echo "bench: run $n of $k fails" >&2
	exit 3
fi
boot=$(cat "$1/boot" 2>/dev/null || echo 0)
awk -v k="$k" -v n="$n" -v means="$2" -v cv="$3" -v boot="$boot" 'BEGIN {
	m = 100
	split(means, pairs, ",")
	for (i in pairs) { split(pairs[i], kv, "="); if (kv[1] == k) m = kv[2] }
	h = 17
	for (i = 1; i <= length(k); i++) h = (h * 31 + index("0123456789-", substr(k, i, 1))) % 100003
	srand(n * 7919 + h)
	z = -6
	for (i = 0; i < 12; i++) z += rand()
	printf "throughput: %.4f ops/s\n", m * exp(cv * z + boot)
}'
SH
export KNOB="$knob"

# sweep NAME FILE BENCH_ARGS REPETITIONS EXTRA: writes a host-runner sweep.
sweep() {
	cat >"$2" <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1]
host: {subcores_per_core: [1, 2, 4]}
benchmark:
  kind: command
  argv: [sh, "$tmp/bench.sh", $3]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: $4
seed: 5
baseline: {subcores_per_core: 1, noise: none}
collect: {gang_exits: false, exit_reasons: false}
$5
YAML
}
jq_sql() { sqlite3 :memory: "WITH d(j) AS (SELECT readfile('$1')) SELECT $2 FROM d"; }

# --- the quickstart's and the demo's shapes, raced ------------------------
# decisions x levels: 3 x 2 (quickstart: subcores 1, 2, 4) and 4 x 3 (the
# demo: subcores 1, 4 x ksm 0, 1 standing for its four shapes).  One
# decision is +10 % at every level, the others equal.
noise2='noise: [none, {kind: command, name: idle, argv: [sleep, "600"]}]'
noise3='noise: [none, {kind: command, name: idle, argv: [sleep, "600"]}, {kind: command, name: idle2, argv: [sleep, "601"]}]'
mkdir "$tmp/s1" "$tmp/s2"
sweep quickstart-raced "$tmp/q.yaml" "\"$tmp/s1\", \"1=100,2=100,4=110\", \"0.02\"" 8 \
	"$noise2
strategy: race
race: {first_test: 3}"
sweep demo-raced "$tmp/d.yaml" "\"$tmp/s2\", \"1-0=100,1-1=100,4-0=100,4-1=110\", \"0.02\"" 8 \
	"$noise3
strategy: race
race: {first_test: 3}"
sed -i 's/subcores_per_core: \[1, 2, 4\]}/subcores_per_core: [1, 4], ksm: [0, 1]}/; s/baseline: {subcores_per_core: 1, noise: none}/baseline: {subcores_per_core: 1, ksm: 0, noise: none}/' "$tmp/d.yaml"
for s in q d; do
	[ $s = d ] && export KNOB2="$ksm"
	exp=$(ta -q run --root "$root" "$tmp/$s.yaml" 2>"$tmp/err") ||
		{ cat "$tmp/err"; fail "run $s.yaml exited $?"; }
	winner=1x1x1/pin=none/subcores_per_core=4
	[ $s = d ] && winner=1x1x1/pin=none/subcores_per_core=4/ksm=1
	ta --json rank "$exp" >"$tmp/rank.json" || fail "rank $exp"
	best=$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.decisions[0].key')")
	[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.decisions[0].eliminated_block')")" = 0 ] ||
		fail "$s: the best at the end ($best) was eliminated during the race"
	[ "$best" = "$winner" ] || fail "$s: $best ranks best, not $winner"
	ta --json recommend "$exp" >"$tmp/rec.json" || fail "recommend $exp"
	[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.verdict') || ' ' || json_extract(j, '\$.recommended_decision.key')")" = \
		"better $winner" ] || fail "$s: recommendation: $(cat "$tmp/rec.json")"
	# Eliminations are reported as such: against whom, with p.
	[ "$(q "SELECT COUNT(*) FROM eliminations e JOIN configurations c ON c.id = e.configuration_id
		WHERE c.experiment_id = $exp AND (e.p > 0.05 OR e.against_id IS NULL)")" = 0 ] ||
		fail "$s: an elimination without its test"
done
unset KNOB2
[ "$(cat "$knob")" = 1 ] || fail "knob not restored"

# --- an environment knob is never applied ---------------------------------
sweep environment "$tmp/e.yaml" "\"$tmp/s3\", \"1=100,2=100,4=130\", \"0.02\"" 5 \
	"advisor: {environment: [ksm]}"
sed -i 's/host: {subcores_per_core: \[1, 2, 4\]}/host: {subcores_per_core: [1, 2, 4], ksm: [0, 1]}/; s/baseline: {subcores_per_core: 1, noise: none}/baseline: {subcores_per_core: 1, ksm: 0, noise: none}/' "$tmp/e.yaml"
mkdir "$tmp/s3"
e=$(ta -q run --root "$root" "$tmp/e.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run e.yaml"; }
ta --json recommend "$e" >"$tmp/rec.json" || fail "recommend $e"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.verdict')")" = better ] || fail "environment: not better"
jq_sql "$tmp/rec.json" "json_extract(j, '\$.host_commands')" | grep -q 'subcores-per-core=4' ||
	fail "the decision knob is missing from the host commands"
jq_sql "$tmp/rec.json" "json_extract(j, '\$.host_commands')" | grep -q 'ksm' &&
	fail "an environment knob in the host commands: $(jq_sql "$tmp/rec.json" "json_extract(j, '\$.host_commands')")"
ta recommend "$e" | grep -q 'ksm/run' && fail "recommend's text applies ksm"
[ "$(cat "$ksm")" = 0 ] || fail "ksm not restored"

# --- failures are outcomes ---------------------------------------------------
mkdir "$tmp/s4"
sweep failures "$tmp/f.yaml" "\"$tmp/s4\", \"1=100,2=100,4=125\", \"0.02\", \"4\", \"3\"" 6 ""
f=$(ta -q run --root "$root" "$tmp/f.yaml" 2>/dev/null)
[ -n "$f" ] || fail "the failures sweep stored no experiment"
ta --json recommend "$f" >"$tmp/rec.json"; [ $? -eq 0 ] || fail "recommend $f"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.recommended_decision.key') LIKE '%=4'")" = 0 ] ||
	fail "a configuration failing 1 run in 3 was recommended: $(cat "$tmp/rec.json")"
jq_sql "$tmp/rec.json" "json_extract(j, '\$.reason')" | grep -q "subcores_per_core=4: 2 of 6 runs failed (failing" ||
	fail "the verdict does not state the failures: $(jq_sql "$tmp/rec.json" "json_extract(j, '\$.reason')")"
ta rank "$f" | grep 'subcores_per_core=4' | grep -q 'failing, 2 of 6 failed' || fail "rank's status"

# A configuration failing every run is failing, not "a few more runs"
# from testable: no contention, no needed_repetitions for it, also after
# extend (the run and extend exit 1: runs failed).
mkdir "$tmp/s7"
sweep allfail "$tmp/a.yaml" "\"$tmp/s7\", \"1=100,2=100,4=125\", \"0.02\", \"4\", \"1\"" 4 ""
a=$(ta -q run --root "$root" "$tmp/a.yaml" 2>/dev/null)
[ -n "$a" ] || fail "the all-failing sweep stored no experiment"
for n in 4 6; do
	[ $n = 6 ] && { ta extend --root "$root" "$a" --repetitions 2 >/dev/null 2>&1; [ $? -eq 1 ] || fail "extend $a"; }
	ta --json rank "$a" >"$tmp/rank.json" || fail "rank $a"
	[ "$(jq_sql "$tmp/rank.json" "(SELECT json_extract(value, '\$.verdict') || ' ' ||
		json_extract(value, '\$.needed_repetitions') FROM json_each(j, '\$.decisions')
		WHERE json_extract(value, '\$.key') LIKE '%=4')")" = "failing 0" ] ||
		fail "$n runs, all failed: $(cat "$tmp/rank.json")"
	ta --json recommend "$a" >"$tmp/rec.json" || fail "recommend $a"
	jq_sql "$tmp/rec.json" "json_extract(j, '\$.contention')" | grep -q '=4"' &&
		fail "$n runs, all failed: still in contention"
	jq_sql "$tmp/rec.json" "json_extract(j, '\$.reason')" |
		grep -q "subcores_per_core=4: $n of $n runs failed (failing: never recommended)" ||
		fail "$n runs, all failed: $(jq_sql "$tmp/rec.json" "json_extract(j, '\$.reason')")"
	ta rank "$a" | grep 'subcores_per_core=4' | grep -q "failing, $n of $n failed" ||
		fail "rank's status after $n failed runs"
done

# --- boots with the host runner: sessions --------------------------------------
# Two shapes (two reuse groups) x ksm 0, 1 (a knob that needs no fresh
# boot), 8 blocks, 2 blocks per session: 8 sessions of 4 runs (2 of each
# configuration); prepare draws the session's effect, the benchmark adds it.
mkdir "$tmp/s5"
sweep boots "$tmp/b.yaml" "\"$tmp/s5\", \"1=100\", \"0.01\"" 8 ""
sed -i "s|guest: {runner: host}|guest: {runner: host, reuse: true, reuse_runs: 2, prepare: [[sh, -c, 'c=\$(cat $tmp/s5/sessions 2>/dev/null \|\| echo 0); echo \$((c + 1)) >$tmp/s5/sessions; echo \$(( (c * 37) % 11 - 5 )) \| awk \"{ print \\\\\$1 / 50 }\" >$tmp/s5/boot']]}|; s|topology: \[1x1x1\]|topology: [1x1x1, 1x2x1]|; s|host: {subcores_per_core: \[1, 2, 4\]}|host: {ksm: [0, 1]}|; s|baseline: {subcores_per_core: 1, noise: none}|baseline: {topology: 1x1x1, ksm: 0, noise: none}|" "$tmp/b.yaml"
b=$(ta -q run --root "$root" "$tmp/b.yaml" 2>"$tmp/err") || { cat "$tmp/err" "$tmp/b.yaml"; fail "run b.yaml"; }
[ "$(cat "$tmp/s5/sessions")" = 8 ] || fail "prepare ran $(cat "$tmp/s5/sessions") times, not once per session"
[ "$(q "SELECT COUNT(DISTINCT boot) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $b")" = 8 ] || fail "boots: $(q "SELECT boot FROM runs")"
[ "$(q "SELECT MAX(n) || ' ' || MIN(n) FROM (SELECT COUNT(*) AS n FROM runs r
	JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $b
	GROUP BY r.configuration_id, r.boot)")" = "2 2" ] || fail "a session's runs per configuration"
ta show "$b" >"$tmp/show" || fail "show $b"
grep -q "^boots: 16 boots for 32 runs (2.0 runs per boot): boot-to-boot sd" "$tmp/show" ||
	fail "show lacks the variance components: $(cat "$tmp/show")"
ta --json show "$b" >"$tmp/show.json" || fail "show --json"
[ "$(jq_sql "$tmp/show.json" "json_extract(j, '\$.boots.estimable') || ' ' || json_extract(j, '\$.boots.shared')")" = "1 1" ] ||
	fail "show --json boots: $(cat "$tmp/show.json")"
ta --json rank "$b" >"$tmp/rank.json" || fail "rank $b"
[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[0].units') || ' ' || json_extract(j, '\$.configurations[0].pairs')")" = "4 8" ] ||
	[ "$(jq_sql "$tmp/rank.json" "json_extract(j, '\$.configurations[1].units') || ' ' || json_extract(j, '\$.configurations[1].pairs')")" = "4 8" ] ||
	fail "paired units: blocks sharing a session are not pooled"

# --- compare ------------------------------------------------------------------------
ta compare "$e" "$e" 2>"$tmp/err"; [ $? -eq 2 ] || fail "compare X X not refused with 2"
grep -q "both arguments name experiment $e" "$tmp/err" || fail "compare X X: $(cat "$tmp/err")"
rm -f "$tmp"/s3/count.*
e2=$(ta -q rerun --root "$root" "$e" 2>"$tmp/err") || { cat "$tmp/err"; fail "rerun $e"; }
ta --json compare "$e" "$e2" >"$tmp/cmp.json" || fail "compare exited $?"
[ "$(jq_sql "$tmp/cmp.json" "json_extract(j, '\$.recommendation.holds')")" = 1 ] ||
	fail "a rerun of the same truth changed the winner: $(cat "$tmp/cmp.json")"
[ "$(jq_sql "$tmp/cmp.json" "json_extract(j, '\$.recommendation.status')")" = consistent ] ||
	fail "compare status: $(jq_sql "$tmp/cmp.json" "json_extract(j, '\$.recommendation')")"
# The means beside the ratios are the ratio's own: ratio = mean_second / mean_first.
[ "$(jq_sql "$tmp/cmp.json" "(SELECT COUNT(*) FROM json_each(j, '\$.configurations') WHERE
	abs(value ->> 'mean_second' / (value ->> 'mean_first') - (value ->> 'ratio')) > 1e-9)")" = 0 ] ||
	fail "compare's means are not those of its ratios: $(cat "$tmp/cmp.json")"

# --- the host's load per run: show, export, and host_busy ----------------------------
ta --json show "$e2" >"$tmp/show.json" || fail "show --json $e2"
nruns=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $e2 AND r.host_state ->> '\$.loadavg[0]' IS NOT NULL")
[ "$nruns" -gt 0 ] || fail "no run stored its load average"
[ "$(jq_sql "$tmp/show.json" "(SELECT COUNT(*) FROM json_each(j, '\$.load') WHERE
	value ->> 'loadavg' >= 0 AND value ->> 'host_cpus' > 0)")" = "$nruns" ] ||
	fail "show --json load: $(jq_sql "$tmp/show.json" "json_extract(j, '\$.load')")"
ta export "$e2" --csv >"$tmp/load.csv" || fail "export --csv $e2"
head -1 "$tmp/load.csv" | grep -q ",lost_events,loadavg,host_cpus,metric," ||
	fail "export's header: $(head -1 "$tmp/load.csv")"
ta --json export "$e2" >"$tmp/load.json" || fail "export --json $e2"
grep -q '"loadavg":' "$tmp/load.json" && grep -q '"host_cpus":' "$tmp/load.json" ||
	fail "export --json lacks loadavg / host_cpus"
# host_busy follows the stored load against the stored CPUs, nothing else.
# (The real load here is whatever the machine's is: set it, on 2 CPUs.)
setload() {	# LOAD MAX-REPETITION: runs of repetition 0..MAX-REPETITION get LOAD
	q "UPDATE runs SET host_state = json_set(host_state, '\$.loadavg[0]', $1, '\$.online_cpus', 2)
		WHERE host_state ->> '\$.loadavg[0]' IS NOT NULL AND repetition <= $2 AND
		configuration_id IN (SELECT id FROM configurations WHERE experiment_id = $e2)" >/dev/null
}
busy() {
	ta --json "$1" "$e2" >"$tmp/busy.json" || fail "$1 --json $e2"
	jq_sql "$tmp/busy.json" "(SELECT COUNT(*) FROM json_each(j, '\$.warnings') WHERE
		value ->> 'kind' = 'host_busy')"
}
setload 0.5 1000
[ "$(busy rank)" = 0 ] || fail "host_busy with a load of 0.5 on 2 CPUs"
setload 7.5 0
nbusy=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $e2 AND r.repetition = 0 AND r.host_state ->> '\$.loadavg[0]' IS NOT NULL")
[ "$(busy rank)" = 1 ] && [ "$(busy recommend)" = 1 ] || fail "no host_busy with a load of 7.5 on 2 CPUs"
ta rank "$e2" | grep -q "the host was busy: its load average exceeded its CPUs during $nbusy of $nruns runs (up to 7.5 on 2 CPUs)" ||
	fail "rank's host_busy text: $(ta rank "$e2" | grep -i busy)"
ta show "$e2" | grep -q "^  run [0-9]*  .*repetition 1.*load 7.50 on 2 CPUs: busy$" ||
	fail "show lists no busy run: $(ta show "$e2")"

# --- undecided: needed_repetitions, then extend by it -----------------------------
mkdir "$tmp/s6"
sweep undecided "$tmp/u.yaml" "\"$tmp/s6\", \"1=100,2=100,4=106\", \"0.04\"" 3 ""
u=$(ta -q run --root "$root" "$tmp/u.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run u.yaml"; }
ta --json recommend "$u" >"$tmp/rec.json" || fail "recommend $u"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.verdict')")" = undecided ] ||
	fail "not undecided: $(jq_sql "$tmp/rec.json" "json_extract(j, '\$.reason')")"
need=$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.needed_repetitions')")
[ "$need" -gt 0 ] && [ "$need" -le 100 ] || fail "needed_repetitions $need"
[ "$(jq_sql "$tmp/rec.json" "json_extract(j, '\$.leader')")" != "" ] || fail "no leader named"
ta recommend "$u" | grep -q "needed_repetitions: $need (.* against the baseline)" ||
	fail "recommend's text lacks needed_repetitions"
# A rerun of an undecided experiment: neither decides, so compare cannot
# speak of a changed winner (an undecided verdict recommends nothing).
u2=$(ta -q rerun --root "$root" "$u" 2>"$tmp/err") || { cat "$tmp/err"; fail "rerun $u"; }
ta --json compare "$u" "$u2" >"$tmp/cmp.json" || fail "compare $u $u2 exited $?"
# Nor does it hold: holds is null, and the text does not say so.
[ "$(jq_sql "$tmp/cmp.json" "json_type(j, '\$.recommendation.holds') || ' ' ||
	json_extract(j, '\$.recommendation.status')")" = "null inconclusive" ] ||
	fail "compare of two undecided experiments: $(jq_sql "$tmp/cmp.json" "json_extract(j, '\$.recommendation')")"
ta compare "$u" "$u2" >"$tmp/cmp.txt" || fail "compare $u $u2 text"
grep -qi changed "$tmp/cmp.txt" && fail "compare's text cries CHANGED on an undecided rerun"
grep -q "winner holds" "$tmp/cmp.txt" && fail "compare's text says the winner holds on an undecided rerun"
grep -q "does not decide: it neither confirms nor changes" "$tmp/cmp.txt" ||
	fail "compare's text does not say the rerun is undecided: $(cat "$tmp/cmp.txt")"
before=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $u")
ta extend --root "$root" "$u" --repetitions "$need" >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "extend exited $?"; }
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $u")" = $((before + 3 * need)) ] || fail "extend did not add $need blocks"
pass
