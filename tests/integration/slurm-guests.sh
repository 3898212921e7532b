#!/bin/sh
# A sweep in real TCG guests through Slurm: the test cluster of 2 nodes
# (scripts/slurm-cluster.sh), 2 shapes, 2 repetitions (2 blocks, one per
# node, at once), stress-ng in the guests, exits traced, sharing this
# machine's libvirtd.  Each block's guests saw their shape, every run
# stored once with its node, no domain left, and the advisor ranks it as
# it ranks a local sweep.  Run it under flock /tmp/ta-suite.lock.
. "$TA_TOP/tests/lib.sh"
for b in slurmctld slurmd munged sbatch squeue ip nsenter unshare; do
	command -v "$b" >/dev/null || skip "$b not installed (scripts/deps.sh check)"
done
guest_sweep_setup taslurmguest-
cluster=$tmp/cluster
mkdir -p "$cluster" "$tmp/shared"
cleanup() {
	"$TA_TOP/scripts/slurm-cluster.sh" stop "$cluster" >/dev/null 2>&1
	guest_sweep_cleanup
}
trap cleanup EXIT
SLURM_CONF=$("$TA_TOP/scripts/slurm-cluster.sh" start "$cluster" 2) || fail "the cluster did not start"
export SLURM_CONF

cat >"$tmp/sweep.yaml" <<YAML
name: slurm-guests
libvirt: {name_prefix: $prefix}
guest: {runner: agent, boot_timeout: 90}
topology: [1x2x1, 1x1x2]
benchmark:
  kind: stress-ng
  argv: [stress-ng, --cpu, "2", --cpu-method, int64, --timeout, "2s", --metrics-brief]
  duration: 2
collect: {gang_exits: false, exit_reasons: true, vcpu_stats: true}
repetitions: 2
seed: 3
executor: {kind: slurm, max_hosts: 2, shared_dir: "$tmp/shared", node_dir: "$tmp/nodes",
           poll_interval: 0.5}
YAML
exp=$(ta run "$tmp/sweep.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run exited $?"; }
grep -q "block [12]: done on tasl-n[12]" "$tmp/err" || fail "no per-host progress: $(cat "$tmp/err")"
[ "$(q "SELECT COUNT(*), SUM(status = 'ok') FROM runs")" = "4|4" ] ||
	fail "runs: $(q "SELECT repetition, status, host, error FROM runs")"
[ "$(q "SELECT COUNT(*) FROM block_attempts WHERE outcome = 'ingested'")" = 2 ] || fail "blocks"
[ "$(q "SELECT COUNT(*) FROM (SELECT repetition FROM runs GROUP BY repetition HAVING COUNT(DISTINCT host) = 1)")" = 2 ] ||
	fail "a block's runs on two hosts"
# The guests saw their shapes; their vCPU times were read.
for shape in 1x2x1:1:2:1 1x1x2:1:1:2; do
	key=${shape%%:*}; rest=${shape#*:}
	s=${rest%%:*}; rest=${rest#*:}; c=${rest%%:*}; t=${rest#*:}
	[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
		WHERE c.key LIKE '$key/%' AND r.topology_ok = 1 AND r.guest_topology ->> '\$.sockets' = $s
		AND r.guest_topology ->> '\$.cores' = $c AND r.guest_topology ->> '\$.threads' = $t")" = 2 ] ||
		fail "$key: the guests did not see their shape"
done
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'vcpu_run_s' AND value > 0")" = 4 ] || fail "vCPU times"
[ "$(ours)" = 0 ] || fail "domains left after the sweep"
ta rank "$exp" >"$tmp/rank" || fail "rank exited $?"
grep -q "1x2x1/pin=none/noise=none" "$tmp/rank" || fail "rank: $(cat "$tmp/rank")"
ta show "$exp" | grep -q "^  tasl-n[12] " || fail "show lists no hosts"
"$TA_TOP/scripts/slurm-cluster.sh" stop "$cluster" || fail "the cluster did not stop"
pass
