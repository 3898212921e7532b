#!/bin/sh
# A damaged recording is never an empty or silently smaller result.  Every
# structural mutant (tests/helpers/mutants.py: truncations at every boundary,
# each header field, size, count, offset, option id and size, section
# header, BUFFER entry, zstd chunk header and ring-buffer page header set to
# 0, +-1, x2, /2, all ones or its top bit flipped, page commits cut by a
# word or flagged, every commit 0, options and records written twice or
# left out, each byte of our events' format name and ID lines flipped, 8
# bytes of such a name zeroed) of recordings of every format (trace.dat v6 big-endian with
# several pages per CPU, v6 x86, v7 plain, v7 zstd with several pages per
# CPU, perf.data file mode both byte orders and x86, pipe mode) must be
# refused with exit 2 and a message naming the file, or read with its
# counts flagged as lower bounds, or read with exactly the original counts
# (tests/helpers/mutjudge.py says what it allows).  Then a sparse file: a
# trace.dat whose last CPU claims 20 GiB of holes reads with flagged counts
# in bounded memory (peak RSS under 100 MB) without touching the holes.
set -u
. "$TA_TOP/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 not installed (scripts/deps.sh)"
CPUTIME=$TA_BUILD/tests/helpers/cputime
[ -x "$CPUTIME" ] || skip "$CPUTIME not built (make units)"
ta_tmpdir
export LSAN_OPTIONS="suppressions=$TA_TOP/tests/helpers/lsan.supp:print_suppressions=0"
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:exitcode=98
C=$TA_TOP/tests/fuzz/corpus
python3 "$TA_TOP/tests/helpers/mkpowertrace.py" "$tmp/v6-be-2pages.dat" --page 4096 --repeat 12 ||
	fail "mkpowertrace failed"
rc=0
for src in "$tmp/v6-be-2pages.dat" "$C/v6-x86.dat" "$C/v7-le.dat" "$C/v7z-le-2pages.dat" \
	   "$C/file-be.perf" "$C/file-x86.perf" "$C/pipe-le.perf"; do
	m=$tmp/m.$(basename "$src")
	python3 "$TA_TOP/tests/helpers/mutants.py" "$src" "$m" >/dev/null || fail "mutants.py $src"
	python3 "$TA_TOP/tests/helpers/mutjudge.py" "$TOPOADVISOR" "$src" "$m" || rc=1
	rm -rf "$m"
done
[ $rc -eq 0 ] || fail "some mutants gave fewer or other counts without a word, or crashed"

# 192 KB of data, 20 GiB apparent: CPU 1's size says 20 GiB, the rest is a hole.
python3 - "$C/v6-le.dat" "$tmp/sparse.dat" <<'PY' || fail "cannot make the sparse file"
import os, struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.index(b"flyrecord\0") + 10 + 16          # CPU 1's offset, size
off = struct.unpack_from("<Q", d, i)[0]
struct.pack_into("<Q", d, i + 8, 20 << 30)
with open(sys.argv[2], "wb") as f:
    f.write(d)
    f.truncate(off + (20 << 30))
PY
"$CPUTIME" "$tmp/out" "$TOPOADVISOR" --json exits "$tmp/sparse.dat" >"$tmp/res" ||
	fail "the sparse file: exit $? (want 0 with flagged counts)"
read -r cpu kib <"$tmp/res"
python3 - "$tmp/out" <<'PY' || fail "the sparse file's result"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["counts_are_lower_bounds"] and "hold no records" in j["damage"], j["damage"]
assert j["events"] == 108, j["events"]
PY
[ "$kib" -lt 102400 ] || fail "the sparse file (20 GiB apparent) took $((kib / 1024)) MB RSS"
echo "ok: a 20 GiB sparse trace.dat: flagged counts, $((kib / 1024)) MB peak RSS, $cpu CPU s"
