#!/bin/sh
# Runs the libFuzzer harness of the offline readers (tests/fuzz/fuzz-exits.c).
# usage: scripts/fuzz.sh FUZZER SECONDS CORPUS [trace|perf|all]
# Seeds CORPUS (kept between runs) with generated recordings: trace.dat v6
# in both byte orders, v7 plain and zstd (trace-cmd convert, if installed),
# perf.data in file and pipe mode in both byte orders; `trace` or `perf`
# restricts the run to one reader's seeds.  A crash, sanitizer report, leak
# or input slower than 10 s fails the run; the input is kept as
# CORPUS/../crash-* (libFuzzer's artifact).
set -eu
fuzzer=$1 seconds=$2 corpus=$3 which=${4:-all}
top=$(cd "$(dirname "$0")/.." && pwd)
gen="$top/tests/helpers/mkpowertrace.py"
mkdir -p "$corpus"
seeds=$(mktemp -d /tmp/ta-fuzzseed.XXXXXX)
trap 'rm -rf "$seeds"' EXIT
if [ "$which" != perf ]; then
	python3 "$gen" "$seeds/be6.dat"
	python3 "$gen" "$seeds/le6.dat" --little
	python3 "$gen" "$seeds/x86.dat" --x86
	python3 "$gen" "$seeds/lost6.dat" --lost 3
	if command -v trace-cmd >/dev/null; then
		trace-cmd convert -i "$seeds/le6.dat" --file-version 7 --compression none \
			-o "$seeds/le7.dat" >/dev/null 2>&1 || true
		trace-cmd convert -i "$seeds/le6.dat" --file-version 7 --compression zstd \
			-o "$seeds/le7z.dat" >/dev/null 2>&1 || true
	fi
fi
if [ "$which" != trace ]; then
	python3 "$gen" "$seeds/be.perf" --perf
	python3 "$gen" "$seeds/le.perf" --perf --little --lost 2
	python3 "$gen" "$seeds/bep.perf" --perf-pipe
	python3 "$gen" "$seeds/lep.perf" --perf-pipe --little
	python3 "$gen" "$seeds/x86.perf" --perf --x86
fi
# Seeds are big (64 KiB pages); libFuzzer mutates within -max_len.
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$top/tests/helpers/lsan.supp:print_suppressions=0"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
	-print_final_stats=1 -artifact_prefix="$(dirname "$corpus")/" "$corpus" "$seeds"
