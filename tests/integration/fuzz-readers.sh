#!/bin/sh
# Coverage-guided fuzzing (libFuzzer, ASan + UBSan + LeakSanitizer) of both
# offline readers for a short fixed time: 10 s from trace.dat seeds, 10 s
# from perf.data seeds.  Any crash, sanitizer report, leak or 10-s input
# fails; `make fuzz` runs the same harness for longer.  Built by `make check`
# (make fuzzer).
set -u
FUZZER=$TA_TOP/build-fuzz/fuzz-exits
[ -x "$FUZZER" ] || { echo "skip: $FUZZER not built (make fuzzer; needs clang)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not installed"; exit 77; }
WORK=$(mktemp -d /tmp/ta-fuzz.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for reader in trace perf; do
	mkdir "$WORK/$reader"
	"$TA_TOP/scripts/fuzz.sh" "$FUZZER" 10 "$WORK/$reader/corpus" $reader >"$WORK/log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		grep -E "ERROR|SUMMARY|Test unit written|#0 |#1 |#2 |#3 " "$WORK/log" | head -30
		for a in "$WORK/$reader"/crash-* "$WORK/$reader"/leak-* "$WORK/$reader"/timeout-*; do
			[ -f "$a" ] && cp "$a" /tmp/ && echo "kept /tmp/$(basename "$a")"
		done
		echo "FAIL: fuzzing the $reader reader found a problem (exit $rc)"
		exit 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/log")
	[ "${runs:-0}" -gt 100 ] || { tail -5 "$WORK/log"; echo "FAIL: only ${runs:-0} runs"; exit 1; }
	echo "ok: $reader reader: $runs inputs, no finding"
done
