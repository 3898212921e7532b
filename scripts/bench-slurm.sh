#!/bin/sh
# make bench, the many-hosts part: the same sweep run through Slurm on 1 and
# on 3 hosts of the test cluster (scripts/slurm-cluster.sh, three slurmd in
# network namespaces on this machine), and the wall-time speed-up.
#
# The sweep is host-runner blocks whose benchmark sleeps a fixed time (6
# blocks of 2 configurations, 2 s each), so that what is measured is how
# the blocks are spread and what a job costs, not this 2-core machine's CPU:
# 3 hosts could at most be 3x faster.  Target (DESIGN §6): the same sweep on
# H hosts about H x faster: >= 0.8 H here.  Also printed: the same sweep run
# locally, for the cost of going through Slurm.  Root; run it under
# flock /tmp/ta-suite.lock (namespaces and daemons are global).
set -u
TA_TOP=$(cd "$(dirname "$0")/.." && pwd)
TA_BUILD=${TA_BUILD:-$TA_TOP/build}
TOPOADVISOR=${TOPOADVISOR:-$TA_BUILD/topoadvisor}
export TA_TOP TA_BUILD TOPOADVISOR
. "$TA_TOP/tests/lib.sh"
skip() { echo "bench-slurm: skipped: $*"; exit 0; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, Slurm daemons)"
for b in slurmctld slurmd munged sbatch squeue ip nsenter unshare; do
	command -v "$b" >/dev/null || skip "$b not installed (scripts/deps.sh check)"
done
ta_tmpdir
. "$TA_TOP/tests/slurm-lib.sh"
cluster=$tmp/cluster
mkdir -p "$cluster"
trap '"$TA_TOP/scripts/slurm-cluster.sh" stop "$cluster" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
SLURM_CONF=$("$TA_TOP/scripts/slurm-cluster.sh" start "$cluster" 3) || fail "the cluster did not start"
export SLURM_CONF
slurm_nodes tasl-n1 tasl-n2 tasl-n3 "$(hostname)"

BLOCKS=${BENCH_SLURM_BLOCKS:-6}
SLEEP=${BENCH_SLURM_SLEEP:-2}
now() { date +%s.%N; }

# timed NAME HOSTS [--executor local]: the sweep's wall time in seconds.
timed() {
	sweep "$1" "$BLOCKS" "$SLEEP" 0.5 "$2"
	t0=$(now)
	ta -q run --root "$ROOTS/%n" ${3:-} "$tmp/$1.yaml" >/dev/null 2>"$tmp/err" ||
		run_failed "$1: run failed"
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# A local run has no SLURMD_NODENAME: the benchmark reads the root of this host's name.
local_s=$(SLURMD_NODENAME=$(hostname) timed local 1 "--executor local --root $ROOTS/$(hostname)")
one=$(timed one 1)
three=$(timed three 3)
e=$(exp_of three)
check_blocks "$e" "$BLOCKS" 2
speedup=$(awk -v a="$one" -v b="$three" 'BEGIN { printf "%.2f", a / b }')
echo "same sweep ($BLOCKS blocks x 2 runs of ${SLEEP} s): local ${local_s} s;" \
     "Slurm, 1 host ${one} s; 3 hosts ${three} s ($(hosts_of "$e") hosts used)"
echo "speed-up on 3 hosts: ${speedup}x (target >= 2.4x: about 3x)"
if awk -v s="$speedup" 'BEGIN { exit !(s >= 2.4) }'; then
	echo "bench-slurm: target met"
else
	echo "bench-slurm: target missed"
	exit 1
fi
