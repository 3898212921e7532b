#!/bin/sh
# Runs every test suite: the cmocka unit binaries, then the integration and
# end-to-end scripts (tests/integration/*.sh, run in name order).
# A script exits 0 to pass, 77 to skip (after printing why), anything else
# fails.  Usage: scripts/run-tests.sh BUILD_DIR [PATTERN]
set -u
build=${1:-build}
pattern=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
export TOPOADVISOR="$top/$build/topoadvisor"
export TA_TOP="$top"
export TA_BUILD="$top/$build"
unset TOPOADVISOR_DB

passed=0 failed=0 skipped=0
failures=""
log_dir=$(mktemp -d /tmp/topoadvisor-tests.XXXXXX)
# Test names are "unit/NAME" and "integration/NAME": their log folders.
mkdir -p "$log_dir/unit" "$log_dir/integration"

run_one() { # name, command...
	name=$1; shift
	case "$name" in *"$pattern"*) ;; *) return ;; esac
	start=$(date +%s)
	"$@" >"$log_dir/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1)); echo "PASS  $name (${secs}s)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP  $name: $(grep -i 'skip' "$log_dir/$name.log" | tail -n 1)"
	else
		failed=$((failed + 1)); failures="$failures $name"
		echo "FAIL  $name (exit $rc, ${secs}s); its output:"
		sed 's/^/    /' "$log_dir/$name.log" | tail -n 60
	fi
}

for t in "$top/$build"/tests/test-*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$top"/tests/integration/*.sh; do
	[ -f "$t" ] || continue
	run_one "integration/$(basename "$t" .sh)" sh "$t"
done

[ -n "$failures" ] && echo "failed:$failures (logs in $log_dir)"
[ -z "$failures" ] && rm -rf "$log_dir"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
