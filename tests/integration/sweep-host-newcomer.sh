#!/bin/sh
# A new user's first studies with the host runner on a fake sysfs root,
# through the command line only (issue 23): what recommend, rank and report
# give for a sweep that never had a guest; export's knob and pinning
# columns and one repetition numbering across export, show, rank and
# report; wrong pinnings; misspelt metrics; the resume hint; a guest sweep
# by a user libvirt refuses; what exits says about recordings.
# Every sweep here sets collect off: no tracefs, so no need for the suite lock.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup
mkdir -p "$root/sys/kernel/mm/transparent_hugepage" "$root/sys/kernel/mm/ksm"
echo '[always] madvise never' >"$root/sys/kernel/mm/transparent_hugepage/enabled"
echo 0 >"$root/sys/kernel/mm/ksm/run"

# --- a host-runner study: pinning x thp x ksm; the 3rd run of the sweep fails ---
cat >"$tmp/study.yaml" <<YAML
name: host-study
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x2x1]
pinning: [none, {name: pair, vcpus: ["0", "1"]}]
host:
  thp: [never, always]
  ksm: [0, 1]
benchmark:
  kind: command
  argv: [sh, -c, 'n=\$(cat $tmp/count 2>/dev/null || echo 0); echo \$((n + 1)) >$tmp/count;
         [ \$n = 2 ] && exit 3; exec $TA_TOP/tests/helpers/fake-bench 100']
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
seed: 7
YAML
ta -q run --root "$root" "$tmp/study.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "one failed run should make run exit 1: $(cat "$tmp/err")"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 15 ] || fail "runs: $(q "SELECT status, error FROM runs")"

# No guest ever ran: no domain XML anywhere, and each says why.
ta recommend 1 >"$tmp/rec" || fail "recommend: $(cat "$tmp/rec")"
grep -q "none: the benchmark ran on the host (guest.runner: host)" "$tmp/rec" || fail "recommend: $(cat "$tmp/rec")"
grep -q "<vcpu\|<topology\|<cputune" "$tmp/rec" && fail "recommend prints XML for a guest that never existed"
ta --json recommend 1 >"$tmp/rec.json" || fail "recommend --json"
[ "$(sqlite3 :memory: "SELECT json_type(readfile('$tmp/rec.json'), '\$.libvirt_xml')")" = null ] ||
	fail "recommend --json libvirt_xml: $(grep libvirt_xml "$tmp/rec.json")"
ta --json rank 1 >"$tmp/rank.json" || fail "rank --json"
grep -q "<vcpu" "$tmp/rank.json" && fail "rank --json carries XML"
ta report 1 -o "$tmp/r.html" >/dev/null 2>&1 || fail "report"
grep -q "none: the benchmark ran on the host" "$tmp/r.html" || fail "report's XML section"
grep -q "&lt;vcpu" "$tmp/r.html" && fail "report shows XML for a guest that never existed"

# export: a column per knob and the pinned CPUs.
ta export 1 --csv >"$tmp/x.csv" || fail "export --csv"
head -n 1 "$tmp/x.csv" | tr ',' '\n' >"$tmp/cols"
for c in pinning pinning_cpus thp ksm repetition; do
	grep -qx "$c" "$tmp/cols" || fail "export has no '$c' column: $(head -n 1 "$tmp/x.csv")"
done
col() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "$tmp/x.csv"; }
[ "$(col thp | sort -u | tr '\n' ' ')" = "always never " ] || fail "thp column: $(col thp | sort -u)"
[ "$(col ksm | sort -u | tr '\n' ' ')" = "0 1 " ] || fail "ksm column: $(col ksm | sort -u)"
[ "$(col pinning_cpus | sort -u | tr '\n' '|')" = "|0 1|" ] || fail "pinning_cpus column: $(col pinning_cpus | sort -u)"
[ "$(col repetition | sort -u | tr '\n' ' ')" = "1 2 " ] || fail "export repetitions: $(col repetition | sort -u)"
ta --json export 1 >"$tmp/x.json" || fail "export --json"
[ "$(sqlite3 :memory: "SELECT MIN(value ->> 'repetition') || '-' || MAX(value ->> 'repetition') ||
	'|' || COUNT(DISTINCT value ->> 'thp') || '|' || (SUM(value ->> 'pinning' = 'pair') > 0) ||
	(SUM(value ->> 'pinning' = 'pair') = SUM(value ->> 'pinning_cpus' = '[\"0\",\"1\"]'))
	FROM json_each(readfile('$tmp/x.json'))")" = "1-2|2|11" ] ||
	fail "export --json: $(head -c 600 "$tmp/x.json")"

# One numbering: the failed run's repetition in show (text and JSON) and
# every run's repetition in rank --json are export's, 1-based.
exp_rep() { # run id -> export's repetition
	awk -F, -v id="$1" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "run_id") r = i; if ($i == "repetition") k = i }; next }
		$r == id { print $k; exit }' "$tmp/x.csv"
}
bad=$(q "SELECT id, repetition + 1 FROM runs WHERE status = 'failed'")
[ -n "$bad" ] || fail "no failed run"
bad_id=${bad%|*} bad_rep=${bad#*|}
[ "$(exp_rep "$bad_id")" = "$bad_rep" ] || fail "export says repetition $(exp_rep "$bad_id") for run $bad_id"
ta show 1 >"$tmp/show" || fail "show"
grep -q "run $bad_id .* repetition $bad_rep .*failed" "$tmp/show" || fail "show: $(grep "run $bad_id" "$tmp/show")"
ta --json show 1 >"$tmp/show.json" || fail "show --json"
[ "$(sqlite3 :memory: "SELECT value ->> 'repetition' FROM json_each(readfile('$tmp/show.json'), '\$.failures')")" = "$bad_rep" ] ||
	fail "show --json failures: $(grep -A3 failures "$tmp/show.json")"
sqlite3 :memory: "SELECT v.value ->> 'run_id', v.value ->> 'repetition'
	FROM json_each(readfile('$tmp/rank.json'), '\$.configurations') c, json_each(c.value, '\$.values') v" |
	tr '|' ' ' >"$tmp/rank.reps"
[ "$(wc -l <"$tmp/rank.reps")" -ge 10 ] || fail "rank --json values: $(head -c 400 "$tmp/rank.json")"
while read -r id rep; do
	[ "$(exp_rep "$id")" = "$rep" ] || fail "run $id: rank --json says repetition $rep, export $(exp_rep "$id")"
done <"$tmp/rank.reps"
grep -q "repetition 0" "$tmp/r.html" "$tmp/show" "$tmp/rank.json" && fail "a 0-based repetition shown"
grep -q "<title>repetition 2:" "$tmp/r.html" || fail "report's points name no repetition"

# --- wrong pinnings ---
cat >"$tmp/pin.yaml" <<YAML
name: pins
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x1x1, 1x2x1]
pinning: [none, {name: pair, vcpus: ["0", "1"]}, {name: far, vcpus: ["1023"]}]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "7"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 1
YAML
n=$(q "SELECT COUNT(*) FROM experiments")
for cmd in plan run; do
	ta -q $cmd "$tmp/pin.yaml" >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] || fail "$cmd with a pinning that fits nothing should exit 2: $(cat "$tmp/err")"
	grep -q "pin.yaml:5:.*pinning 'far' fits no configuration" "$tmp/err" || fail "$cmd: $(cat "$tmp/err")"
	grep -q "uses host CPU 1023" "$tmp/err" || fail "$cmd: the reason: $(cat "$tmp/err")"
	grep -q "pinning 'pair' fits" "$tmp/err" && fail "$cmd: pair fits 1x2x1"
done
[ "$(q "SELECT COUNT(*) FROM experiments")" = "$n" ] || fail "a refused sweep stored an experiment"
# Nothing left: every reason, each on its line.
sed -i 's/pinning: \[none, /pinning: [/; s/topology: \[1x1x1, 1x2x1\]/topology: [1x1x1]/' "$tmp/pin.yaml"
ta -q run "$tmp/pin.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "all dropped: exit"
grep -q "all 2 combinations were dropped:" "$tmp/err" || fail "all dropped: $(cat "$tmp/err")"
grep -q "^  1x1x1/pin=pair: explicit pinning 'pair' lists 2 CPU sets for 1 vCPUs" "$tmp/err" &&
	grep -q "^  pin=far: pinning 'far' uses host CPU 1023" "$tmp/err" || fail "all dropped, every reason: $(cat "$tmp/err")"
# A pinning some shapes cannot take: run goes on, warning once per combination left out.
sed -i 's/, {name: far[^]]*\]}//; s/topology: \[1x1x1\]/topology: [1x1x1, 1x2x1]/' "$tmp/pin.yaml"
ta -q run "$tmp/pin.yaml" >/dev/null 2>"$tmp/err" || fail "partial drop: exit $?: $(cat "$tmp/err")"
[ "$(grep -c "warning: 1x1x1/pin=pair: not run: explicit pinning 'pair' lists 2 CPU sets for 1 vCPUs" "$tmp/err")" = 1 ] ||
	fail "partial drop warning: $(cat "$tmp/err")"

# --- metric names are checked against what the kind's parser reports ---
for case in "sysbench event_per_s events_per_s" "ebizzy record_per_s records_per_s" "redis redis.GETT redis.GET"; do
	set -- $case
	printf 'name: m\ntopology: [1x1x1]\nbenchmark: {kind: %s, metric: %s}\n' "$1" "$2" >"$tmp/m.yaml"
	ta plan "$tmp/m.yaml" >/dev/null 2>"$tmp/err"
	[ $? -eq 2 ] || fail "plan accepts $1 metric $2"
	grep -q "m.yaml:3:.*$1 reports no metric '$2' (did you mean '$3'?)" "$tmp/err" || fail "$1/$2: $(cat "$tmp/err")"
done

# --- the resume hint names the experiment, the database and the root ---
mkdir "$tmp/a dir"
cat >"$tmp/slow.yaml" <<YAML
name: slow
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x1x1]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "4246", "20"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
YAML
"$TOPOADVISOR" --db "$tmp/a dir/s.db" -q run --root "$root" "$tmp/slow.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
wait_started $pid "fake-bench 4246"
kill -INT $pid
wait $pid
[ $? -eq 130 ] || fail "SIGINT: $(cat "$tmp/err")"
grep -qF "finish it with 'topoadvisor --db \"$tmp/a dir/s.db\" resume --root $root 1'" "$tmp/err" ||
	fail "resume hint: $(cat "$tmp/err")"

# --- exits: what a wrong file gets told ---
head -c 100 /dev/zero >"$tmp/junk.dat"
ta exits "$tmp/junk.dat" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "exits of junk"
grep -q "trace-cmd record" "$tmp/err" && grep -q "perf record" "$tmp/err" || fail "exits hint: $(cat "$tmp/err")"
ta exits "$TA_TOP/tests/fixtures/real/svm/trace.dat" >"$tmp/out" || fail "exits of the SVM recording"
grep -q "not applicable.*trace-cmd record -e kvm_hv, or perf record" "$tmp/out" || fail "not applicable: $(head -n 3 "$tmp/out")"

# --- a guest sweep by a user libvirt does not let in: refused up front ---
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$TOPOADVISOR-core"; then
	chmod 711 "$tmp"
	mkdir "$tmp/nobody" && chmod 777 "$tmp/nobody"
	printf 'name: g\ntopology: [1x1x1]\ncollect: {gang_exits: false, exit_reasons: false}\nbenchmark: {kind: command, argv: [echo, "x 1"], parse: "x (?<x>[0-9]+)", metric: x}\n' \
		>"$tmp/nobody/g.yaml"
	chmod 644 "$tmp/nobody/g.yaml"
	TOPOADVISOR_LOCK="$tmp/nobody/lock" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TOPOADVISOR" --db "$tmp/nobody/t.db" -q run "$tmp/nobody/g.yaml" >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || fail "a guest sweep libvirt refuses: exit $rc: $(cat "$tmp/err")"
	grep -q "Run it as root.*guest: {runner: host}" "$tmp/err" || fail "non-root message: $(cat "$tmp/err")"
	[ "$(sqlite3 "$tmp/nobody/t.db" "SELECT COUNT(*) FROM experiments" 2>/dev/null || echo 0)" = 0 ] ||
		fail "a refused guest sweep stored an experiment"
else
	echo "not checked: a guest sweep as another user (needs root, setpriv, user nobody, and a checkout nobody can reach)"
fi
pass
