#!/bin/sh
# Hardening, fourth round (issue 34): data that is not ours, output that
# cannot be turned against its reader.
#  1 --db never writes into a file we did not make or that is not ours: a
#    symbolic link of another user, another application's SQLite file, a file
#    with other hard links, a planted -wal/-shm/-journal (each named with why);
#    an empty file, a new path, our own link and an older schema keep working
#  2 export --csv: formulas and control bytes neutralised, negative numbers
#    stay numbers; the HTML report and JSON are valid UTF-8 (invalid bytes
#    replaced and counted)
#  3 damage in a recording is never read silently: 8 zeroed bytes in the real
#    SVM v7 zstd recording's formats, one bit of a perf.data format name, a
#    trace.dat ID line changed, a perf.data sample of record type 0
# (every structural and format mutant: exits-mutants.sh)
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
command -v sqlite3 >/dev/null || skip "sqlite3 (the CLI) is not installed"
# The planted names are in a sticky, world-writable directory, as in /tmp.
chmod 1777 "$tmp"
export TOPOADVISOR_LOCK="$tmp/lock"

cat >"$tmp/quick.yaml" <<YAML
name: quick
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 1
YAML
run_into() { timeout -s KILL 60 "$TOPOADVISOR" --db "$1" -q run "$tmp/quick.yaml" >/dev/null 2>"$tmp/err"; }

# --- 1: databases that are not ours --------------------------------------
# A symbolic link another user planted, to an empty file we did not make.
: >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/planted.db"
if [ "$(id -u)" = 0 ]; then
	chown -h nobody "$tmp/planted.db" || fail "1: chown -h"
	run_into "$tmp/planted.db"
	rc=$?
	[ $rc -eq 2 ] || { cat "$tmp/err"; fail "1: --db at a planted link exited $rc, expected 2"; }
	grep -q "symbolic link of another user" "$tmp/err" || { cat "$tmp/err"; fail "1: link message"; }
	[ ! -s "$tmp/victim" ] || fail "1: the file behind a planted link became a database"
	ls "$tmp"/victim-* >/dev/null 2>&1 && fail "1: sidecars made beside the link's target"
else
	echo "note: not root: the planted-link case needs a link of another user (skipped)"
fi

# Our own link is followed: the database lands in its target.
rm -f "$tmp/planted.db"
ln -s "$tmp/victim" "$tmp/mine.db"
run_into "$tmp/mine.db" || { cat "$tmp/err"; fail "1: --db at our own link"; }
[ "$(sqlite3 "$tmp/victim" "SELECT COUNT(*) FROM experiments")" = 1 ] ||
	fail "1: our own link's target holds no experiment"

# Another application's database: refused, named, untouched.
sqlite3 "$tmp/other.db" "CREATE TABLE notes (a); CREATE TABLE tags (b); INSERT INTO notes VALUES (1);"
sum=$(cksum <"$tmp/other.db")
for c in "run $tmp/quick.yaml" list; do
	timeout -s KILL 60 "$TOPOADVISOR" --db "$tmp/other.db" -q $c >/dev/null 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || { cat "$tmp/err"; fail "1: $c on another application's database exited $rc"; }
	grep -q "is an SQLite database of another application (tables: notes, tags), not a topoadvisor database" \
		"$tmp/err" || { cat "$tmp/err"; fail "1: $c: other-database message"; }
done
[ "$(cksum <"$tmp/other.db")" = "$sum" ] || fail "1: another application's database was changed"
[ ! -e "$tmp/other.db-wal" ] || fail "1: another application's database got a -wal"
# Empty, but with another application's schema version.
sqlite3 "$tmp/versioned.db" "PRAGMA user_version = 7"
run_into "$tmp/versioned.db" && fail "1: a database with user_version 7 and no tables was used"
grep -q "no tables, user_version 7" "$tmp/err" || { cat "$tmp/err"; fail "1: user_version message"; }

# A file with another hard link (another name whose content would change).
: >"$tmp/linked"
ln "$tmp/linked" "$tmp/hard.db"
run_into "$tmp/hard.db" && fail "1: a file with two names became a database"
grep -q "1 more hard link" "$tmp/err" || { cat "$tmp/err"; fail "1: hard link message"; }
[ ! -s "$tmp/linked" ] || fail "1: the other name of a hard link was written"

# Planted sidecars: each refused with what it is, the victim untouched.
run_into "$tmp/ours.db" || { cat "$tmp/err"; fail "1: a new database"; }
for s in -wal -shm -journal; do
	: >"$tmp/victim$s"
	ln -s "$tmp/victim$s" "$tmp/ours.db$s"
	for c in "run $tmp/quick.yaml" list; do
		timeout -s KILL 60 "$TOPOADVISOR" --db "$tmp/ours.db" -q $c >/dev/null 2>"$tmp/err"
		rc=$?
		[ $rc -eq 2 ] || { cat "$tmp/err"; fail "1: $c with a planted $s link exited $rc"; }
		grep -q "ours.db$s is a symbolic link (to $tmp/victim$s)" "$tmp/err" ||
			{ cat "$tmp/err"; fail "1: $c: $s message does not say why"; }
	done
	[ ! -s "$tmp/victim$s" ] || fail "1: written through a planted $s link"
	rm -f "$tmp/ours.db$s"
done
mkfifo "$tmp/ours.db-wal"
run_into "$tmp/ours.db" && fail "1: a FIFO as -wal was used"
grep -q "ours.db-wal is a FIFO (named pipe), not a file" "$tmp/err" || { cat "$tmp/err"; fail "1: FIFO -wal message"; }
rm -f "$tmp/ours.db-wal"
if [ "$(id -u)" = 0 ]; then
	: >"$tmp/ours.db-journal"
	chown nobody "$tmp/ours.db-journal"
	run_into "$tmp/ours.db" && fail "1: a -journal of another user was used"
	grep -q "ours.db-journal belongs to uid $(id -u nobody)" "$tmp/err" ||
		{ cat "$tmp/err"; fail "1: foreign -journal message"; }
	rm -f "$tmp/ours.db-journal"
fi
# What is ours keeps working: the database again, an empty file, an older schema.
run_into "$tmp/ours.db" || { cat "$tmp/err"; fail "1: our database after the sidecars went"; }
[ "$(sqlite3 "$tmp/ours.db" "SELECT COUNT(*) FROM experiments")" = 2 ] || fail "1: runs into our database"
: >"$tmp/empty.db"
run_into "$tmp/empty.db" || { cat "$tmp/err"; fail "1: an empty file we named"; }
sqlite3 "$tmp/old.db" <"$TA_TOP/schema/schema.sql" >/dev/null 2>&1
mig2=$(grep -n '^-- @migration 2$' "$TA_TOP/schema/schema.sql" | cut -d: -f1)
head -n $((mig2 - 1)) "$TA_TOP/schema/schema.sql" >"$tmp/v1.sql"
echo "PRAGMA user_version = 1;" >>"$tmp/v1.sql"
rm -f "$tmp/old.db"
sqlite3 "$tmp/old.db" <"$tmp/v1.sql" || fail "1: making a version-1 database"
run_into "$tmp/old.db" || { cat "$tmp/err"; fail "1: a version-1 database did not migrate"; }
[ "$(sqlite3 "$tmp/old.db" "PRAGMA user_version")" -gt 1 ] || fail "1: version 1 not migrated"

# --- 2: output that cannot be turned against its reader -------------------
# A benchmark whose unit is a formula and whose stderr carries ESC, BEL and
# bytes that are not UTF-8; its first run measures a negative number.
cat >"$tmp/evil-bench" <<'SH'
#!/bin/sh
printf '\033[31mred\007 \377\376 bad\n' >&2
[ -e "$1/ran" ] && exit 1
: >"$1/ran"
echo "throughput: -5.5 ops/s"
SH
chmod +x "$tmp/evil-bench"
cat >"$tmp/evil.yaml" <<YAML
name: evil
guest: {runner: host}
topology: [1x1x1]
benchmark:
  kind: command
  argv: ["$tmp/evil-bench", "$tmp"]
  parse: 'throughput: (?<ops>-?[0-9.]+) ops/s'
  metric: {name: ops, direction: higher, unit: '=HYPERLINK("http://x","y")'}
repetitions: 2
YAML
db=$tmp/evil.db
timeout -s KILL 60 "$TOPOADVISOR" --db "$db" -q run "$tmp/evil.yaml" >/dev/null 2>"$tmp/err"
[ "$(sqlite3 "$db" "SELECT COUNT(*) FROM runs WHERE status = 'failed'")" = 1 ] ||
	{ cat "$tmp/err"; fail "2: the evil sweep did not store its failed run"; }
"$TOPOADVISOR" --db "$db" export 1 --csv >"$tmp/out.csv" 2>"$tmp/err" || { cat "$tmp/err"; fail "2: export --csv"; }
grep -q ',ops,-5.5,"'"'"'=HYPERLINK(""http://x"",""y"")",1$' "$tmp/out.csv" ||
	{ cat "$tmp/out.csv"; fail "2: the formula unit is not neutralised, or -5.5 is no longer a number"; }
grep -q 'status 1: \\x1b\[31mred\\x07 \\xff\\xfe bad,' "$tmp/out.csv" ||
	{ cat -A "$tmp/out.csv"; fail "2: control bytes not escaped in the CSV"; }
LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037\177\200-\377]')" "$tmp/out.csv" &&
	{ cat -A "$tmp/out.csv"; fail "2: raw control or non-ASCII bytes in the CSV"; }
"$TOPOADVISOR" --db "$db" export 1 --json >"$tmp/out.json" 2>"$tmp/err" || fail "2: export --json"
python3 -c 'import json,sys; json.loads(open(sys.argv[1], encoding="utf-8", errors="strict").read())' \
	"$tmp/out.json" || fail "2: export --json is not valid UTF-8 JSON"
# Each row of the failed run carries its error: 2 bytes replaced in each.
n=$(grep -o '\\ufffd' "$tmp/out.json" | wc -l)
[ "$n" -ge 2 ] || fail "2: export --json replaced $n bytes, expected 2 per row of the failed run"
grep -q "note: $n bytes of stored text (benchmark output, names) were not valid UTF-8 and are written as U+FFFD" \
	"$tmp/err" || { cat "$tmp/err"; fail "2: export --json does not say it replaced $n bytes"; }
"$TOPOADVISOR" --db "$db" -q report 1 -o "$tmp/r.html" 2>"$tmp/err" || { cat "$tmp/err"; fail "2: report"; }
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8", errors="strict").read()' "$tmp/r.html" ||
	fail "2: the HTML report, declared UTF-8, is not valid UTF-8"
grep -q "<p class='warn' id='not-utf8'>2 bytes of stored text (benchmark output, names) were not valid UTF-8" \
	"$tmp/r.html" || fail "2: the report does not say how many bytes it replaced"
grep -q 'red\\x07' "$tmp/r.html" || fail "2: BEL not shown escaped in the report"
LC_ALL=C grep -q "$(printf '[\001-\010\013\014\016-\037\177]')" "$tmp/r.html" && fail "2: raw control bytes in the report"

# --- 3: damage in a recording is never read silently ----------------------
# The cases of issue 34 on the real SVM v7 zstd recording (1290 KVM events):
# 8 bytes zeroed inside its compressed formats.  At 3120 they hide the name
# and ID of kvm_userspace_exit (all 604 user-space exits were lost without a
# word); at 2424 those of kvm_exit too (nothing is left: refused).
svm=$TA_TOP/tests/fixtures/real/svm/trace.dat
zero8() { python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); o = int(sys.argv[3]); d[o:o + 8] = bytes(8); open(sys.argv[2], "wb").write(d)' "$@"; }
"$TOPOADVISOR" --json exits "$svm" >"$tmp/whole.json" || fail "3: the real SVM recording does not read"
zero8 "$svm" "$tmp/z3120.dat" 3120
"$TOPOADVISOR" --json exits "$tmp/z3120.dat" >"$tmp/z.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "3: 8 zeroed bytes at 3120: exit $?"; }
python3 "$TA_TOP/tests/helpers/damagecheck.py" "$tmp/whole.json" "$tmp/z.json" "3: 8 zeroed bytes at 3120" \
	"1 damaged KVM event format: a format of system kvm has no valid name line" 604 || exit 1
"$TOPOADVISOR" exits "$tmp/z3120.dat" >"$tmp/out" 2>&1
grep -q "WARNING: the recording is damaged: 604 records are of an event no format in the file describes (type 1413); 1 damaged KVM event format" "$tmp/out" ||
	{ cat "$tmp/out"; fail "3: the text output does not warn"; }
zero8 "$svm" "$tmp/z2424.dat" 2424
"$TOPOADVISOR" exits "$tmp/z2424.dat" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "z2424.dat: no KVM event could be read from this damaged recording: 2 damaged KVM event formats" \
	"$tmp/err" || { cat "$tmp/err"; fail "3: 8 zeroed bytes at 2424: exit $rc"; }

# One bit in a perf.data format name (kvm_exit -> kvm_exiu); a trace.dat
# ID line changed to another number; a perf.data sample's record type 0.
C=$TA_TOP/tests/fuzz/corpus
python3 - "$C" "$tmp" <<'PY' || fail "3: cannot write the damaged copies"
import struct, sys
C, tmp = sys.argv[1:3]
d = bytearray(open(C + "/file-x86.perf", "rb").read())
d[d.index(b"name: kvm_exit\n") + 13] ^= 1
open(tmp + "/name-bit.perf", "wb").write(d)
d = bytearray(open(C + "/v6-x86.dat", "rb").read())
i = d.index(b"name: kvm_exit\nID: ") + 19
d[i] ^= 1 if d[i] != ord("9") else 8
open(tmp + "/id-bit.dat", "wb").write(d)
d = bytearray(open(C + "/file-le-lost.perf", "rb").read())
data_off = struct.unpack_from("<Q", d, 40)[0]
pos = data_off
while struct.unpack_from("<I", d, pos)[0] != 9:
    pos += struct.unpack_from("<H", d, pos + 6)[0]
struct.pack_into("<I", d, pos, 0)
open(tmp + "/type0.perf", "wb").write(d)
PY
for c in "file-x86.perf name-bit.perf the format of ID" "v6-x86.dat id-bit.dat no format in the file describes" \
	 "file-le-lost.perf type0.perf records have an impossible type"; do
	set -- $c
	whole=$1 damaged=$2; shift 2
	"$TOPOADVISOR" --json exits "$C/$whole" >"$tmp/w.json" || fail "3: $whole does not read"
	"$TOPOADVISOR" --json exits "$tmp/$damaged" >"$tmp/d.json" 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "3: $damaged: exit $?"; }
	python3 - "$tmp/w.json" "$tmp/d.json" "$damaged" "$*" <<'PY' || exit 1
import json, sys
w, d = (json.load(open(f)) for f in sys.argv[1:3])
name, what = sys.argv[3:5]
if d["events"] < w["events"] and not (d["counts_are_lower_bounds"] and what in (d["damage"] or "")):
    sys.exit("FAIL: 3: %s: %d of %d events, damage %r (want it flagged, naming %r)" % (
        name, d["events"], w["events"], d["damage"], what))
PY
done

pass
