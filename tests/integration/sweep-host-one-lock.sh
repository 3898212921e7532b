#!/bin/sh
# One lock per host, not per path (issue 35): two sweeps on one fake root
# with different TOPOADVISOR_LOCK directories never interleave.  Sweep A
# sets a host knob per configuration and its benchmark reports the knob it
# ran under and then waits at a gate; while it waits, sweep B on the same
# root (another lock directory, another database, another spelling of the
# root) and restore-host there are refused, naming A's process, and nothing
# of A changes; once A is let go, every run of A measured its own knob, and
# B then runs.  As another user, the message for the real host says root is
# needed and no longer advises a lock path of one's own.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup
unset TOPOADVISOR_LOCK
mkdir "$tmp/locks-a" "$tmp/locks-b" || fail "mkdir"
ln -s root "$tmp/alias"
cat >"$tmp/bench" <<EOF2
#!/bin/sh
# Reports the knob it runs under, then waits until the test opens the gate.
v=\$(cat "$knob")
echo "\$v" >>"$tmp/seen"
: >"$tmp/started"
while [ ! -e "$tmp/go" ]; do sleep 0.05; done
echo "throughput: \$v ops/s"
EOF2
chmod 755 "$tmp/bench"
cat >"$tmp/a.yaml" <<YAML
name: one-lock
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x1x1]
host:
  subcores_per_core: [2, 4]
benchmark:
  kind: command
  argv: ["$tmp/bench"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
YAML

TOPOADVISOR_LOCK=$tmp/locks-a "$TOPOADVISOR" --db "$db" -q run --root "$root" "$tmp/a.yaml" \
	>"$tmp/a.out" 2>"$tmp/a.err" &
pa=$!
i=0
until [ -e "$tmp/started" ]; do
	i=$((i + 1))
	[ $i -lt 400 ] || { kill $pa; fail "sweep A's benchmark never started: $(cat "$tmp/a.err")"; }
	kill -0 $pa 2>/dev/null || fail "sweep A ended early: $(cat "$tmp/a.err")"
	sleep 0.05
done
during=$(cat "$knob")

# B: another lock directory, another database; the root spelled three ways.
for r in "$root" "$tmp/alias" "$tmp/root/."; do
	TOPOADVISOR_LOCK=$tmp/locks-b timeout -s KILL 120 "$TOPOADVISOR" --db "$tmp/b.db" -q \
		run --root "$r" "$tmp/a.yaml" >/dev/null 2>"$tmp/b.err"
	rc=$?
	[ $rc -ne 0 ] || { kill $pa; fail "sweep B ran on $r while sweep A drove it"; }
	[ $rc -ne 137 ] || { kill $pa; fail "sweep B on $r hung (it interleaved with A)"; }
	grep -q "is being driven by another topoadvisor (process $pa holds its lock" "$tmp/b.err" ||
		{ kill $pa; fail "B on $r: message does not name A ($pa): $(cat "$tmp/b.err")"; }
done
# The same database too, and restore-host (which writes the knobs back).
TOPOADVISOR_LOCK=$tmp/locks-b timeout -s KILL 120 "$TOPOADVISOR" --db "$db" -q \
	run --root "$root" "$tmp/a.yaml" >/dev/null 2>"$tmp/b.err" &&
	{ kill $pa; fail "sweep B on A's database ran"; }
grep -q "being driven by another topoadvisor" "$tmp/b.err" || { kill $pa; fail "B on A's db: $(cat "$tmp/b.err")"; }
TOPOADVISOR_LOCK=$tmp/locks-b timeout -s KILL 120 "$TOPOADVISOR" --db "$tmp/b.db" \
	restore-host --root "$root" >/dev/null 2>"$tmp/b.err" &&
	{ kill $pa; fail "restore-host ran while sweep A drove the root"; }
grep -q "being driven by another topoadvisor" "$tmp/b.err" || { kill $pa; fail "restore-host: $(cat "$tmp/b.err")"; }
[ "$(cat "$knob")" = "$during" ] || { kill $pa; fail "the knob changed under A: $during -> $(cat "$knob")"; }
[ ! -e "$tmp/b.db" ] || [ "$(sqlite3 "$tmp/b.db" "SELECT COUNT(*) FROM runs")" = 0 ] ||
	{ kill $pa; fail "a refused sweep stored runs"; }

: >"$tmp/go"
wait $pa || fail "sweep A failed: $(cat "$tmp/a.err")"
# Every run of A measured under its own knob, once.
[ "$(sqlite3 "$db" "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 4 ] ||
	fail "A: $(sqlite3 "$db" "SELECT status, COUNT(*) FROM runs GROUP BY status")"
bad=$(sqlite3 "$db" "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	JOIN metrics m ON m.run_id = r.id WHERE m.name = 'ops' AND m.value <> c.subcores_per_core")
[ "$bad" = 0 ] || fail "$bad runs of A measured under another knob"
[ "$(wc -l <"$tmp/seen")" = 4 ] || fail "the benchmark ran $(wc -l <"$tmp/seen") times, expected 4"
[ "$(cat "$knob")" = 1 ] || fail "the knob was not put back: $(cat "$knob")"

# Now B runs, with its own lock directory.
rm -f "$tmp/seen"
TOPOADVISOR_LOCK=$tmp/locks-b "$TOPOADVISOR" --db "$tmp/b.db" -q run --root "$tmp/alias" \
	"$tmp/a.yaml" >/dev/null 2>"$tmp/b.err" || fail "B after A: $(cat "$tmp/b.err")"
[ "$(wc -l <"$tmp/seen")" = 4 ] || fail "B ran $(wc -l <"$tmp/seen") runs"

# As another user: the real host needs root; no lock path of one's own advised.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$TOPOADVISOR-core"; then
	chmod 711 "$tmp"
	mkdir -m 777 "$tmp/nb"
	env -u TOPOADVISOR_LOCK setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TOPOADVISOR" --db "$tmp/nb/n.db" run "$tmp/a.yaml" >/dev/null 2>"$tmp/nb.err"
	[ $? -eq 2 ] || fail "nobody on the real host: $(cat "$tmp/nb.err")"
	grep -q "needs root" "$tmp/nb.err" || fail "nobody: $(cat "$tmp/nb.err")"
	grep -q "path of its own" "$tmp/nb.err" && fail "nobody is still told to pick a lock path: $(cat "$tmp/nb.err")"
else
	echo "not checked: the message as another user (needs root, setpriv, user nobody, a reachable checkout)"
fi
pass
