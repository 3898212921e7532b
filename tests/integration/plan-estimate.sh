#!/bin/sh
# plan's estimate learns from this host's stored sweeps: with no database
# it uses the built-in figures and says so (and creates no database); after
# a tiny host-runner sweep of a fast benchmark, the plan of a bigger sweep
# of the same benchmark says it learned from that sweep and estimates the
# bigger sweep's measured wall time within a generous factor (no timing
# assertion: the built-in figures are 80x off for this benchmark, a learned
# estimate lands within 4x even on a loaded host).  A guest sweep planned
# against the same database learns nothing it cannot use: its boot and
# reuse figures stay built in.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup

sweep() { # NAME REPETITIONS
	cat <<YAML
name: $1
guest: {runner: host}
topology: [1x1x1, 1x2x1]
noise: [none]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "250"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 2
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: false}
repetitions: $2
YAML
}
sweep small 10 >"$tmp/small.yaml"
sweep big 40 >"$tmp/big.yaml"
estimate() { # CONFIG: the estimate in seconds (plan --json)
	ta plan --json "$1" >"$tmp/plan.json" || fail "plan $1"
	sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimated_seconds'"
}
within() { # ESTIMATE MEASURED FACTOR
	awk -v e="$1" -v m="$2" -v f="$3" 'BEGIN { exit !(e >= m / f && e <= m * f) }'
}
now() { date +%s.%N; }

# No database: the built-in figures (2 s duration + 0.1 s per run), and no file made.
ta plan "$tmp/big.yaml" >"$tmp/out" || fail "plan without a database"
grep -q "from built-in figures (no finished sweep of this host in $db)" "$tmp/out" ||
	{ cat "$tmp/out"; fail "the estimate does not say it used the built-in figures"; }
[ ! -e "$db" ] || fail "plan created $db"
builtin=$(estimate "$tmp/big.yaml")
awk -v e="$builtin" 'BEGIN { exit !(e > 80 * 2 && e < 80 * 2.2) }' ||
	fail "built-in estimate of 80 runs of 2 s: $builtin s"

t0=$(now)
ta -q run --root "$root" "$tmp/small.yaml" >/dev/null || fail "the small sweep failed"
t1=$(now)
small=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')

# Learned: the window of this benchmark, the host-run overhead, the sweep's rest.
ta plan "$tmp/big.yaml" >"$tmp/out" || fail "plan with the database"
grep -q "from this host's 1 stored sweep in $db" "$tmp/out" ||
	{ cat "$tmp/out"; fail "the estimate does not say what it learned from"; }
grep -q "per run, its benchmark window: .*(mean of 20 stored runs of this benchmark)" \
	"$tmp/out" || { cat "$tmp/out"; fail "the window was not learned"; }
learned=$(estimate "$tmp/big.yaml")
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimate.window.samples'")" = 20 ] ||
	fail "estimate.window.samples"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimate.experiments'")" = 1 ] ||
	fail "estimate.experiments"

t0=$(now)
ta -q run --root "$root" "$tmp/big.yaml" >/dev/null || fail "the big sweep failed"
t1=$(now)
big=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
echo "small sweep $small s; big sweep: built-in estimate $builtin s, learned $learned s," \
	"measured $big s"
within "$learned" "$big" 4 || fail "learned estimate $learned s, the sweep took $big s"
within "$builtin" "$big" 4 && fail "the built-in estimate ($builtin s) was already close to $big s"

# A guest sweep learns no boot or reuse figure from host runs.
cat >"$tmp/guest.yaml" <<'YAML'
name: guest
guest: {reuse: true}
topology: [1x2x1, 1x1x2]
benchmark: {kind: ebizzy, argv: [ebizzy, -S, "3"], duration: 3}
repetitions: 3
YAML
ta plan --json "$tmp/guest.yaml" >"$tmp/plan.json" || fail "plan guest.yaml"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimate.boot_run.samples'")" = 0 ] ||
	fail "a boot figure learned from host runs"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/plan.json') ->> '\$.estimate.reused_run.seconds' = 2")" = 1 ] ||
	fail "the reuse figure is not the built-in one"
pass
