#!/bin/sh
# Open-ended fuzzing of the offline readers (tests/fuzz/fuzz-exits.c), for
# `make fuzz`: never part of `make check`, whose readers suite replays the
# committed regression corpus instead (tests/integration/fuzz-readers.sh).
#
# usage: scripts/fuzz.sh FUZZER SECONDS WORKDIR [trace|perf|all]
#
# Starts from the committed corpus (tests/fuzz/corpus) plus bigger generated
# recordings (64 KiB pages, both byte orders, v6, v7 plain and zstd if
# trace-cmd is installed, perf.data in file and pipe mode); `trace` or
# `perf` keeps one reader's inputs.  WORKDIR/corpus grows between runs.
# Runs the whole SECONDS whatever it finds (libFuzzer's fork mode, crashes,
# leaks, timeouts and out-of-memory inputs ignored and kept): each finding
# is kept in WORKDIR/findings/ and listed in WORKDIR/findings.txt as
# "FILE: one-line summary" (the sanitizer's SUMMARY, or the kind), and the
# end of the run counts them by summary, one example each.  Exits 1
# when this run found anything (add each input to tests/fuzz/corpus with
# its expected answer once fixed), 0 when it found nothing.
set -u
fuzzer=$1 seconds=$2 work=$3 which=${4:-all}
top=$(cd "$(dirname "$0")/.." && pwd)
gen="$top/tests/helpers/mkpowertrace.py"
mkdir -p "$work/corpus" "$work/findings" || exit 1
seeds=$(mktemp -d /tmp/ta-fuzzseed.XXXXXX) || exit 1
trap 'rm -rf "$seeds"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
kind_of() { # FILE: perf or trace, by its magic
	case $(head -c 8 "$1" | tr -dc 'A-Z0-9') in PERFILE2|2ELIFREP) echo perf ;; *) echo trace ;; esac
}
for f in "$top"/tests/fuzz/corpus/*; do
	{ [ "$which" = all ] || [ "$(kind_of "$f")" = "$which" ]; } && cp "$f" "$seeds/"
done
if [ "$which" != perf ]; then
	python3 "$gen" "$seeds/big-be6.dat"
	python3 "$gen" "$seeds/big-le6.dat" --little --repeat 40
	if command -v trace-cmd >/dev/null; then
		trace-cmd convert -i "$seeds/big-le6.dat" --file-version 7 --compression zstd \
			-o "$seeds/big-le7z.dat" >/dev/null 2>&1 || true
	fi
fi
if [ "$which" != trace ]; then
	python3 "$gen" "$seeds/big-be.perf" --perf --repeat 40
	python3 "$gen" "$seeds/big-lep.perf" --perf-pipe --little --repeat 40
fi
before=$(ls "$work/findings" | wc -l)
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$top/tests/helpers/lsan.supp:print_suppressions=0"
"$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
	-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
	-artifact_prefix="$work/findings/" "$work/corpus" "$seeds" >"$work/fuzz.log" 2>&1
echo "fuzz: $(grep -c '^#' "$work/fuzz.log") progress lines in $work/fuzz.log;" \
	"$(tail -n 1 "$work/fuzz.log")"

# One line per finding: what the input does when replayed on its own (with
# the same limits, so a timeout or an out-of-memory input says so too).
: >"$work/findings.txt"
for f in "$work"/findings/*; do
	[ -f "$f" ] || continue
	out=$(timeout 120 "$fuzzer" -timeout=10 -rss_limit_mb=2048 "$f" 2>&1)
	what=$(printf '%s\n' "$out" | grep -m 1 '^SUMMARY:') ||
		what=$(printf '%s\n' "$out" | grep -m 1 'ERROR: libFuzzer' | sed 's/^==[0-9]*== //') ||
		what="does not reproduce on its own (flaky, or slower than 120 s)"
	echo "${f##*/}: $what" >>"$work/findings.txt"
done
after=$(ls "$work/findings" | wc -l)
new=$((after - before))
if [ "$after" -eq 0 ]; then
	echo "fuzz: no finding in $seconds s"
	exit 0
fi
# Grouped by what they do: how many inputs each, and one of them.
echo "fuzz: $new new finding(s) in $seconds s, $after in $work/findings in all," \
	"$(sed 's/^[^:]*: //' "$work/findings.txt" | sort -u | wc -l) distinct:"
awk '{ f = $1; sub(/:$/, "", f); $1 = ""; sub(/^ /, ""); n[$0]++; if (!($0 in ex)) ex[$0] = f }
     END { for (w in n) printf "%6d x %s (e.g. %s)\n", n[w], w, ex[w] }' "$work/findings.txt" | sort -rn
echo "fuzz: every finding: $work/findings.txt"
[ "$new" -eq 0 ]
