#!/bin/sh
# The fuzzing regression corpus (tests/fuzz/corpus: small recordings of
# every format, every input fuzzing ever found a problem with, the damaged
# recordings of issue 18), replayed the same way every time:
#  1. through the libFuzzer harness (ASan + UBSan + LeakSanitizer), once per
#     input, no exploration (open-ended fuzzing is `make fuzz`);
#  2. through the real `topoadvisor exits` (text and --json, both rules),
#     whose answer to each input must be the one tests/fuzz/expected.txt
#     records: the exit status, and for a reading the KVM event count and
#     whether the counts are flagged as lower bounds.
# A crash, sanitizer report, leak, hang or changed answer fails.
set -u
. "$TA_TOP/tests/lib.sh"
CORPUS=$TA_TOP/tests/fuzz/corpus
EXPECTED=$TA_TOP/tests/fuzz/expected.txt
FUZZER=$TA_TOP/build-fuzz/fuzz-exits
command -v python3 >/dev/null || skip "python3 not installed (scripts/deps.sh)"
ta_tmpdir
export LSAN_OPTIONS="suppressions=$TA_TOP/tests/helpers/lsan.supp:print_suppressions=0"

# Every input has its answer, every answer its input.
ls "$CORPUS" | sort >"$tmp/files"
grep -v '^#' "$EXPECTED" | awk 'NF { print $1 }' | sort >"$tmp/listed"
diff "$tmp/files" "$tmp/listed" >"$tmp/diff" ||
	fail "tests/fuzz/corpus and expected.txt disagree (< only in the corpus, > only listed): $(cat "$tmp/diff")"
n=$(wc -l <"$tmp/files")

if [ -x "$FUZZER" ]; then
	ASAN_OPTIONS=detect_leaks=1 "$FUZZER" "$CORPUS"/* >"$tmp/harness.log" 2>&1 || {
		grep -E "ERROR|SUMMARY|Running: |#[0-3] " "$tmp/harness.log" | head -30
		fail "the fuzz harness does not survive the regression corpus"
	}
	echo "ok: the fuzz harness replayed $n inputs"
else
	echo "note: $FUZZER not built (make fuzzer; needs clang): harness replay left out"
fi

# Sanitizer reports must not look like our own exit codes (make SAN=1 check).
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:exitcode=98
export LSAN_OPTIONS="$LSAN_OPTIONS:exitcode=97"
grep -v '^#' "$EXPECTED" | awk 'NF' | while read -r name want events bound; do
	f=$CORPUS/$name
	timeout 60 "$TOPOADVISOR" --json exits "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit $rc, expected $want: $(head -c 600 "$tmp/err")"
	if [ "$rc" = 2 ]; then
		grep -q "$name" "$tmp/err" || fail "$name: the message does not name the file: $(cat "$tmp/err")"
	else
		got=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["events"], "yes" if j["counts_are_lower_bounds"] else "no")' "$tmp/out") ||
			fail "$name: no JSON result"
		[ "$got" = "$events $bound" ] ||
			fail "$name: $got (events, lower bound), expected $events $bound"
	fi
	for args in "exits" "exits --algorithm seed" "-v exits"; do
		# shellcheck disable=SC2086
		timeout 60 "$TOPOADVISOR" $args "$f" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		[ "$rc" = "$want" ] || fail "$name: '$args' exit $rc, expected $want: $(head -c 600 "$tmp/err")"
		if [ "$bound" = yes ]; then
			grep -q "lower bound" "$tmp/out" || fail "$name: '$args' does not say the counts are lower bounds"
		fi
	done
done || exit 1
echo "ok: topoadvisor exits gave the recorded answer to each of $n inputs"
