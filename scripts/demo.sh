#!/bin/sh
# make demo: bring up libvirtd, build the test guest image, run the seed's
# ebizzy study (configs/ebizzy-tcg.yaml: a 4-vCPU guest running ebizzy on
# vCPUs 0-1 while vCPUs 2-3 idle, spin or run ping -f, with all four vCPUs
# on host CPU 0 or the noisy pair on host CPU 1; raced, 3-6 blocks of a 3 s
# ebizzy in real TCG guests, one reused guest per pinning: a few minutes),
# then print the recommendation (the verdict; per noise load the geometric
# mean and the gain over the baseline with its interval; the gain over the
# loads; the libvirt XML to apply) and the one command that shows more (the
# report: every run, the race, the ranking tables, on one page).
# `scripts/demo.sh CONFIG` runs another study.  The results stay in demo.db
# (override with TOPOADVISOR_DB) for `topoadvisor report`, `show`, ….
# libvirtd is stopped again unless another registered user still needs it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
ta=$top/topoadvisor
db=${TOPOADVISOR_DB:-$top/demo.db}
config=${1:-$top/configs/ebizzy-tcg.yaml}
start=$(date +%s)

cleanup() {
	"$top/scripts/libvirtd-stop.sh" --user $$ >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$top/scripts/libvirtd-start.sh" --user $$
"$top/scripts/guest-image.sh" >/dev/null

echo "demo: running $config into $db"
"$ta" --db "$db" plan "$config"
echo
exp=$("$ta" --db "$db" run "$config") || {
	rc=$?
	echo "demo: the sweep ended with status $rc (see 'topoadvisor --db $db show')" >&2
	[ -n "${exp:-}" ] || exit $rc
}
echo
"$ta" --db "$db" recommend "$exp"
echo
secs=$(( $(date +%s) - start ))
echo "demo: experiment $exp done in $((secs / 60))m$(printf '%02d' $((secs % 60)))s; it stays in $db."
echo "demo: to look deeper (every run, the race, the advice on one page), next:"
echo "  $ta --db $db report $exp -o report.html"
