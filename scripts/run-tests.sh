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

# What a suite may not leave behind in the host's tracing: tracefs
# instances and uprobe events.  Suites run one at a time, so what is new
# after a suite is its own — except on a machine others test on too, so
# only what can be ours counts: a topoadvisor-PID-N instance whose PID is
# gone (a live one is a running program's, maybe another tree's), any
# other instance, and uprobes on this tree's programs.  Empty where tracefs
# is not mounted.
tracing_state() {
	t=/sys/kernel/tracing
	[ -d "$t/instances" ] || return 0
	for i in $(ls "$t/instances" 2>/dev/null); do
		p=${i#topoadvisor-}
		p=${p%%-*}
		case "$i" in topoadvisor-*-*) kill -0 "$p" 2>/dev/null && continue ;; esac
		echo "instance $i"
	done
	grep -F " $top/" "$t/uprobe_events" 2>/dev/null | sed 's/^/uprobe /'
}

run_one() { # name, command...
	name=$1; shift
	case "$name" in *"$pattern"*) ;; *) return ;; esac
	start=$(date +%s)
	tracing_state | sort >"$log_dir/before"
	"$@" >"$log_dir/$name.log" 2>&1
	rc=$?
	tracing_state | sort >"$log_dir/after"
	left=$(comm -13 "$log_dir/before" "$log_dir/after")
	if [ -n "$left" ] && [ $rc -eq 0 -o $rc -eq 77 ]; then
		printf 'left behind in tracefs:\n%s\n' "$left" >>"$log_dir/$name.log"
		rc=1
	fi
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
