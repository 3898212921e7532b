#!/bin/sh
# CLI contract: exit status 2 for bad usage, true --help, list/show on a database.
. "$TA_TOP/tests/lib.sh"

ta_tmpdir
export TOPOADVISOR_DB="$tmp/t.db"

expect_exit 2 "$TOPOADVISOR"
expect_exit 2 "$TOPOADVISOR" frobnicate
expect_exit 2 "$TOPOADVISOR" --bogus list
expect_exit 2 "$TOPOADVISOR" list --bogus
expect_exit 2 "$TOPOADVISOR" list extra-arg
expect_exit 2 "$TOPOADVISOR" show
expect_exit 2 "$TOPOADVISOR" show 1 2
expect_exit 2 "$TOPOADVISOR" plan
expect_exit 2 "$TOPOADVISOR" plan "$tmp/does-not-exist.yaml"
expect_exit 2 "$TOPOADVISOR" --db
# A database that does not exist is bad input, and is not created by a reader.
expect_exit 2 "$TOPOADVISOR" list
[ ! -e "$TOPOADVISOR_DB" ] || fail "list created $TOPOADVISOR_DB"

out=$("$TOPOADVISOR" --help) || fail "--help exited $?"
for c in plan list show; do
	echo "$out" | grep -q "^  $c " || fail "--help does not list $c"
done
"$TOPOADVISOR" --version | grep -Eq '^topoadvisor [0-9]+\.[0-9]+' || fail "--version"
for c in plan list show; do
	h=$("$TOPOADVISOR" "$c" --help) || fail "$c --help exited $?"
	echo "$h" | grep -q "usage: topoadvisor $c" || fail "$c --help has no usage line"
	echo "$h" | grep -q -- "--json" || fail "$c --help lacks the global options"
	# plan reads the database for its estimate (hardening.sh checks the rest).
	echo "$h" | grep -q -- "--db PATH" || fail "$c --help lacks --db"
done
# The option value after the command and before it mean the same.
"$TOPOADVISOR" list --db "$tmp/none.db" 2>"$tmp/err"; [ $? -eq 2 ] || fail "list --db"
grep -q "none.db" "$tmp/err" || fail "error does not name the database"

# An empty database lists nothing (as text and JSON) and shows no experiment 7.
sqlite3 "$TOPOADVISOR_DB" 'PRAGMA user_version' >/dev/null
"$TOPOADVISOR" list >/dev/null 2>&1 # the file exists now but has no schema: list migrates it
[ "$("$TOPOADVISOR" list --json)" = "[]" ] || fail "list --json on an empty database"
expect_exit 2 "$TOPOADVISOR" show 7
"$TOPOADVISOR" show 7 2>&1 | grep -q "no experiment '7'" || fail "show 7 message"

# list and show on stored data (written with the sqlite3 shell, as a later
# version of the tool or a user might).
sqlite3 "$TOPOADVISOR_DB" <<'SQL' || fail "fixture"
INSERT INTO experiments (id, name, config_yaml, config_sha256, tool_version, seed, status,
			 primary_metric, higher_is_better)
VALUES (1, 'first', 'name: first', 'abc', '0.1.0', 5, 'done', 'ops', 1),
       (2, 'second', 'name: second', 'def', '0.1.0', 6, 'interrupted', 'ops', 1);
INSERT INTO configurations (id, experiment_id, idx, key, vcpus, sockets, cores, threads, factors, is_baseline)
VALUES (10, 2, 0, '1x2x1/pin=none/noise=none', 2, 1, 2, 1, '{"topology":"1x2x1"}', 1),
       (11, 2, 1, '2x1x1/pin=none/noise=none', 2, 2, 1, 1, '{"topology":"2x1x1"}', 0);
INSERT INTO runs (configuration_id, repetition, order_index, status, error) VALUES
       (10, 0, 0, 'ok', NULL), (11, 0, 1, 'failed', 'guest did not boot within 60 s'),
       (10, 1, 2, 'interrupted', 'interrupted by SIGINT'), (11, 1, 3, 'planned', NULL);
SQL
"$TOPOADVISOR" list >"$tmp/out" || fail "list"
head -n 2 "$tmp/out" | tail -n 1 | grep -q '^ *2  second' || fail "list: newest first"
grep -q 'first .*done' "$tmp/out" || fail "list: first done"
"$TOPOADVISOR" list --json >"$tmp/json" || fail "list --json"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'))")" = 2 ] ||
	fail "list --json length"
"$TOPOADVISOR" show second >"$tmp/out" || fail "show by name"
grep -q "guest did not boot within 60 s" "$tmp/out" || fail "show lists the failure"
grep -q "interrupted by SIGINT" "$tmp/out" || fail "show lists the interruption"
grep -q '1x2x1/pin=none/noise=none .*\[baseline\]' "$tmp/out" || fail "show marks the baseline"
grep -q 'runs *4: 1 ok, 1 failed, 1 interrupted, 1 pending' "$tmp/out" || fail "show counts"
"$TOPOADVISOR" --json show 2 >"$tmp/json" || fail "show --json"
[ "$(sqlite3 :memory: "SELECT json_array_length(readfile('$tmp/json'), '\$.failures')")" = 2 ] ||
	fail "show --json failures"
[ "$(sqlite3 :memory: "SELECT readfile('$tmp/json') ->> '\$.configurations[0].factors.topology'")" = 1x2x1 ] ||
	fail "show --json factors"

# The front program (Makefile, FRONT_LIBC): a static PIE unless built with
# the sanitizers (their runtimes are shared libraries), and never one that
# needs musl's loader, which a musl-gcc -static-pie link makes.
command -v readelf >/dev/null || skip "readelf missing: the front's ELF checks need binutils"
interp=$(readelf -l "$TOPOADVISOR" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
case $interp in
*ld-musl*) fail "the front needs musl's dynamic loader ($interp): not a static program" ;;
esac
case $TA_BUILD in
*-san) ;;
*)	[ -z "$interp" ] || fail "the front is not static: it asks for $interp"
	readelf -h "$TOPOADVISOR" | grep -q 'Type: *DYN' ||
		fail "the front is not position-independent (its address would not be randomized)" ;;
esac
# It runs with an empty environment, and hands every other command to the core.
env -i "$TOPOADVISOR" --version | grep -Eq '^topoadvisor [0-9]' || fail "--version with no environment"
env -i "$TOPOADVISOR" list --help | grep -q "usage: topoadvisor list" ||
	fail "the front does not hand list to the core with no environment"
pass
