#!/bin/sh
# make demo: bring up libvirtd, build the test guest image, run the seed's
# ebizzy study (configs/ebizzy-tcg.yaml: a 4-vCPU guest in 4 shapes, ebizzy
# on vCPUs 0-1 with the other two idle, spinning or running ping -f inside
# the same guest, 2 repetitions of a 3 s ebizzy in real TCG guests, one
# reused guest per shape: a few minutes), then print the ranking and the
# recommendation.  `scripts/demo.sh CONFIG` runs another study.  The
# results stay in demo.db (override with TOPOADVISOR_DB) for
# `topoadvisor report`, `show`, ….
# libvirtd is stopped again unless another registered user still needs it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
ta=$top/topoadvisor
db=${TOPOADVISOR_DB:-$top/demo.db}
config=${1:-$top/configs/ebizzy-tcg.yaml}

cleanup() {
	"$top/scripts/libvirtd-stop.sh" --user $$ >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$top/scripts/libvirtd-start.sh" --user $$
"$top/scripts/guest-image.sh" >/dev/null

echo "demo: running $config into $db"
"$ta" --db "$db" plan "$config" | tail -n 3
exp=$("$ta" --db "$db" run "$config") || {
	rc=$?
	echo "demo: the sweep ended with status $rc (see 'topoadvisor --db $db show')" >&2
	[ -n "${exp:-}" ] || exit $rc
}
echo
"$ta" --db "$db" rank "$exp"
echo
"$ta" --db "$db" recommend "$exp"
echo
echo "demo: experiment $exp is in $db; an HTML report: $ta --db $db report $exp -o report.html"
