#!/bin/sh
# The progress of a sweep spread over Slurm hosts (fake sbatch/squeue on
# PATH, nodes fn1 and fn2): the dispatcher's status line names, per host,
# the block it runs and the run its worker is at ("fn1 0 done, running block
# 1 at [2/2] KEY repetition 1"), read from the worker's job output, and a
# new line appears when a worker moves to its next run.
. "$TA_TOP/tests/lib.sh"
command -v flock >/dev/null || skip "flock missing"
ta_tmpdir
. "$TA_TOP/tests/slurm-lib.sh"
export PATH="$TA_TOP/tests/helpers/fake-slurm:$PATH"
export FAKE_SLURM_NODES="fn1 fn2"
export FAKE_SLURM_DIR="$tmp/slurm"
mkdir -p "$FAKE_SLURM_DIR/faults"
slurm_nodes fn1 fn2
cleanup() {
	for f in "$tmp"/slurm*/jobs/*/pid; do
		[ -s "$f" ] && kill -KILL "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# 2 blocks of 2 runs, each run 2 s: a poll every 0.05 s sees every run.
sweep prog 2 2 0.05 2
ta run --root "$ROOTS/%n" "$tmp/prog.yaml" >"$tmp/out" 2>"$tmp/err" || run_failed "run exited $?"
key='1x1x1/pin=none/kvm_hv.dynamic_mt_modes=[26]/noise=none'
for run in 1 2; do
	grep -q "^blocks: .* | .*fn[12] [01] done, running block [12] at \[$run/2\] $key repetition [12]\($\|;\| |\)" "$tmp/err" ||
		fail "no status line with a host at run $run of its block: $(cat "$tmp/err")"
done
# Nothing but the status line changes between two of them (the ETA alone is no news).
[ "$(grep -c '^blocks: ' "$tmp/err")" = "$(grep '^blocks: ' "$tmp/err" | sed 's/ | ETA .*//' | uniq | wc -l)" ] ||
	fail "a status line repeated with only its ETA changed: $(cat "$tmp/err")"
pass
