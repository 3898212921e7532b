#!/bin/sh
# The small real study of docs/power-host.md: a host-runner sweep inside the
# emulated POWER8 host whose vcores' secondary threads run (the patched
# kernel of scripts/power8-host.sh, QEMU 10, two threads per core), with
# kvmppc-guest as the benchmark: vCPU 0 spins, its sibling vCPU 1 is idle,
# spins or makes hypercalls (tests/power8/study-inside.sh).  Every run stores
# its ganged exits (the sweep's own trace of the real kvm_hv events) and
# vCPU 0's progress; then `rank` and `report` on x86 show both.  Not part of
# `make check` (about 2-3 minutes with 5 repetitions on a quiet box).
# Usage: tests/power8/study.sh [REPS [OUT_DIR]]   (default 5, study-out)
#   OUT_DIR receives study.db, rank.txt, rank.json and report.html.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-5}
dest=${2:-study-out}
die() { echo "study: $*" >&2; exit 1; }
make -s -C "$top" topoadvisor cross-ppc64el
img=$("$top/scripts/power8-host.sh" image "$top/build-ppc64el/topoadvisor" | tail -n 1)
[ -f "$img/vmlinux-smt" ] || die "no patched kernel: $(cat "$img/smt-refused.txt")"
q10=$("$top/scripts/qemu10.sh")
tmp=$(mktemp -d /tmp/ta-study.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir "$tmp/in"
cp "$top/tests/power8/study-inside.sh" "$tmp/in/run.sh"
cp "$top/build-ppc64el/topoadvisor" "$top/build-ppc64el/tests/kvmppc-guest" "$tmp/in/"
echo "$reps" >"$tmp/in/reps"
echo 3 >"$tmp/in/seconds"
t0=$(date +%s)
"$top/scripts/power8-host.sh" boot --machine powernv8 --qemu "$q10" --smp 2,cores=1,threads=2 \
	--kernel smt --timeout $((120 + reps * 60)) "$tmp/in" "$tmp/out"
sed 's/^/    p8| /' "$tmp/out/run.log"
[ "$(cat "$tmp/out/rc")" = 0 ] || die "study-inside.sh exited $(cat "$tmp/out/rc")"
echo "boot and sweep: $(( $(date +%s) - t0 )) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$dest"
cp "$tmp/out/study.db" "$dest/"
ta="$top/topoadvisor --db $dest/study.db"
$ta rank 1 | tee "$dest/rank.txt"
$ta --json rank 1 >"$dest/rank.json"
$ta report 1 -o "$dest/report.html"
# Per run: the sibling's behaviour, ganged exits and vCPU 0's progress.
sqlite3 -header -column "$dest/study.db" "
	SELECT c.noise AS sibling, r.id AS run,
	       MAX(CASE m.name WHEN 'gang_exits' THEN m.value END) AS gang_exits,
	       MAX(CASE m.name WHEN 'core_runs' THEN m.value END) AS core_runs,
	       ROUND(MAX(CASE m.name WHEN 'progress' THEN m.value END) / 1e6, 2) AS progress_M_per_s
	FROM runs r JOIN configurations c ON c.id = r.configuration_id
	JOIN metrics m ON m.run_id = r.id
	WHERE r.status = 'ok' GROUP BY r.id ORDER BY c.noise, r.id"
