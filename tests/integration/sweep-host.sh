#!/bin/sh
# A full small sweep with the host runner: host knobs under a fake sysfs
# root (journalled, applied per configuration, restored at the end), a spin
# noise load, a failing and an unparsable benchmark, the database checked
# run by run, then rank/show on the result.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
export TOPOADVISOR_LOCK="$tmp/lock"
db=$tmp/t.db
root=$tmp/root
ta() { "$TOPOADVISOR" --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }

mkdir -p "$root/sys/devices/system/cpu" "$root/sys/module/kvm_hv/parameters"
echo 1 >"$root/sys/devices/system/cpu/subcores_per_core"
echo 6 >"$root/sys/module/kvm_hv/parameters/dynamic_mt_modes"

cat >"$tmp/sweep.yaml" <<YAML
name: host-sweep
guest: {runner: host}
topology: [1x1x1, 1x2x1]
host:
  subcores_per_core: [1, 2]
  kvm_hv.dynamic_mt_modes: [0, 6]
noise: [none, {kind: spin, cpus: "1"}]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "250"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  duration: 1
repetitions: 2
seed: 5
baseline: {topology: 1x1x1, subcores_per_core: 1, kvm_hv.dynamic_mt_modes: 6, noise: none}
YAML

exp=$(ta -q run --root "$root" "$tmp/sweep.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run exited $?"; }
[ "$exp" = 1 ] || fail "run printed '$exp', expected the experiment id 1"
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = done ] || fail "experiment not done"
[ "$(q "SELECT COUNT(*) FROM runs")" = 32 ] || fail "expected 32 runs"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 32 ] ||
	fail "not all ok: $(q "SELECT status, error FROM runs WHERE status <> 'ok' LIMIT 3")"
# Every run has its metric, its output and timestamps.
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'ops' AND value = 250")" = 32 ] || fail "ops metric"
# A command's group gets the config's direction (higher, the default) when it is the metric.
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'ops' AND direction = 'higher'")" = 32 ] ||
	fail "ops direction: $(q "SELECT DISTINCT direction FROM metrics WHERE name = 'ops'")"
[ "$(q "SELECT COUNT(*) FROM artifacts WHERE name = 'benchmark.stdout'")" = 32 ] || fail "stdout artifact"
[ "$(q "SELECT COUNT(*) FROM runs WHERE started_at IS NULL OR finished_at < started_at")" = 0 ] ||
	fail "run timestamps"
# Each run saw the knob values of its own configuration while it ran.
bad=$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	 WHERE r.host_state ->> '\$.knobs.subcores_per_core' <> CAST(c.subcores_per_core AS TEXT)
	    OR r.host_state ->> '\$.knobs.\"kvm_hv.dynamic_mt_modes\"' <> CAST(c.dynamic_mt_modes AS TEXT)
	    OR r.host_state ->> '\$.noise' <> c.noise")
[ "$bad" = 0 ] || fail "$bad runs ran with other knob values than their configuration's"
# Runs went in the stored order, one block of 16 configurations per repetition.
[ "$(q "SELECT COUNT(DISTINCT c.id) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE r.order_index < 16")" = 16 ] ||
	fail "first block does not hold every configuration"
# The host is back as it was, and the journal says so.
[ "$(cat "$root/sys/devices/system/cpu/subcores_per_core")" = 1 ] || fail "subcores not restored"
[ "$(cat "$root/sys/module/kvm_hv/parameters/dynamic_mt_modes")" = 6 ] || fail "dynamic_mt_modes not restored"
[ "$(q "SELECT COUNT(*) FROM host_journal")" -gt 0 ] || fail "nothing journalled"
[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] || fail "journal not restored"
[ "$(q "SELECT COUNT(*) FROM host_journal WHERE original_value IS NULL")" = 0 ] || fail "journal original"
# No spinning noise left behind.
pgrep -f "$tmp/sweep.yaml" >/dev/null && fail "processes of the sweep left behind"

ta show 1 >"$tmp/out" || fail "show"
grep -q "32: 32 ok, 0 failed" "$tmp/out" || fail "show counts: $(cat "$tmp/out")"
ta rank 1 >"$tmp/out" || fail "rank exited $?"
grep -q "1x1x1/pin=none/subcores_per_core=1/kvm_hv.dynamic_mt_modes=6/noise=none" "$tmp/out" ||
	fail "rank lacks the baseline"

# rerun: a new experiment from the stored text (the file on disk is gone),
# linked to the original.
mv "$tmp/sweep.yaml" "$tmp/moved.yaml"
exp2=$(ta -q rerun --root "$root" 1 2>"$tmp/err") || { cat "$tmp/err"; fail "rerun exited $?"; }
[ "$exp2" = 2 ] || fail "rerun printed '$exp2'"
[ "$(q "SELECT parent_id, status, config_yaml = (SELECT config_yaml FROM experiments WHERE id = 1)
	FROM experiments WHERE id = 2")" = "1|done|1" ] || fail "rerun experiment row"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 2 AND r.status = 'ok'")" = 32 ] || fail "rerun runs"
ta list | grep -q "(rerun of 1)" || fail "list does not show the rerun's parent"

# --json: the summary as one object instead of the bare id.
ta --json -q resume --root "$root" 2 >"$tmp/json" 2>&1 || true
grep -q "nothing to resume" "$tmp/json" || fail "resume of a finished experiment"

# Another controller holds the host lock (its anchor: the root itself, hostlock.h):
# run refuses and stores nothing.
n=$(q "SELECT COUNT(*) FROM experiments")
flock "$root" "$TOPOADVISOR" --db "$db" -q run --root "$root" "$tmp/moved.yaml" \
	>/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "run with the host lock held should exit 1"
grep -q "another topoadvisor" "$tmp/err" || fail "lock message: $(cat "$tmp/err")"
[ "$(q "SELECT COUNT(*) FROM experiments")" = "$n" ] || fail "a refused run left an experiment"

# A failing benchmark and an unparsable one: stored as failed with the cause,
# the sweep goes on, run exits 1.
cat >"$tmp/bad.yaml" <<YAML
name: bad-bench
guest: {runner: host}
topology: [1x1x1]
noise: [none]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "5", "0", "fail"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
YAML
ta -q --json run "$tmp/bad.yaml" >"$tmp/json" 2>"$tmp/err"
[ $? -eq 1 ] || fail "a sweep with failed runs should exit 1"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/json') ->> '\$.failed'")" = 2 ] ||
	fail "run --json summary: $(cat "$tmp/json")"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 3 AND r.status = 'failed'
	AND r.error LIKE '%exited with status 3%simulated failure%'")" = 2 ] ||
	fail "failed runs: $(q "SELECT error FROM runs WHERE status = 'failed'")"
sed -i 's/"fail"/"garbage"/' "$tmp/bad.yaml"
ta -q run "$tmp/bad.yaml" >/dev/null 2>&1
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 4 AND r.status = 'failed' AND r.error LIKE '%output%'")" = 2 ] ||
	fail "unparsable runs: $(q "SELECT error FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 4")"
[ "$(q "SELECT COUNT(*) FROM artifacts a JOIN runs r ON r.id = a.run_id JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 4 AND a.name = 'benchmark.stdout'")" = 2 ] ||
	fail "the unparsable output was not kept"

# A host-run benchmark learns its configuration from the environment
# (TOPOADVISOR_CONFIG, TOPOADVISOR_NOISE): each run saw its own, so a
# program that drives its own VM can place the noise load itself.
cat >"$tmp/env.yaml" <<'YAML'
name: env
guest: {runner: host}
topology: [1x1x1]
noise: [{kind: none, name: idle}, {kind: none, name: busy}]
benchmark:
  kind: command
  argv: [sh, -c, 'echo "config=$TOPOADVISOR_CONFIG noise=$TOPOADVISOR_NOISE x 1"']
  parse: 'x (?<x>[0-9]+)'
  metric: x
repetitions: 2
YAML
ta -q run "$tmp/env.yaml" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "env sweep exited $?"; }
[ "$(q "SELECT COUNT(*) FROM artifacts a JOIN runs r ON r.id = a.run_id
	JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 5 AND a.name = 'benchmark.stdout'
	AND CAST(a.content AS TEXT) = 'config=' || c.key || ' noise=' || c.noise || ' x 1' || char(10)")" = 4 ] ||
	fail "the benchmark's environment: $(q "SELECT CAST(content AS TEXT) FROM artifacts WHERE name = 'benchmark.stdout' ORDER BY id DESC LIMIT 4")"
# A parsing kind that reports everything but the primary metric (one of the
# user's own, given with its direction): the run fails naming what it found,
# and keeps those metrics.
cat >"$tmp/other.yaml" <<YAML
name: other-metric
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: kernel-build
  argv: ["sh", "-c", "printf 'real 1.50\\nuser 0.20\\nsys 0.10\\n' >&2"]
  metric: {name: wall_s, direction: lower}
repetitions: 1
YAML
ta -q run "$tmp/other.yaml" >/dev/null 2>&1
[ "$(q "SELECT r.error FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 6")" = "the benchmark output has no 'wall_s' (the primary metric); it has real_s, user_s, sys_s" ] ||
	fail "missing primary metric: $(q "SELECT status, error FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 6")"
[ "$(q "SELECT group_concat(name || '=' || value, ' ') FROM (SELECT m.name, m.value FROM metrics m
	JOIN runs r ON r.id = m.run_id JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 6 AND m.name LIKE '%\_s' ESCAPE '\' AND m.name <> 'benchmark_seconds'
	ORDER BY m.id)")" = "real_s=1.5 user_s=0.2 sys_s=0.1" ] ||
	fail "the metrics it did parse were not stored: $(q "SELECT name, value FROM metrics")"
pass
