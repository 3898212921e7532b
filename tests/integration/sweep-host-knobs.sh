#!/bin/sh
# Every built-in host knob round-trips through a host-runner sweep on a fake
# sysfs root, as a new user would try it: the sweep sets each of two values,
# reads each back (a test root's file holds the one word written: thp used
# to be refused there, the run failed and its journal entry stayed open),
# runs every run ok, and puts the file back.  The table below has one row
# per knob of model/knob-table.c, and a knob without a row fails.
# Then the journal: a sweep killed with its knob changed, under a root named
# relatively, is restored by the next sweep naming that root absolutely or
# through a symlink (journal paths are canonical).
# Every sweep here sets collect off: no tracefs, so no need for the suite lock.
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
export TOPOADVISOR_LOCK="$tmp/lock"

# knob | file's text before | two values to sweep | the file's text after
cat >"$tmp/table" <<'EOF'
smt|on|off 2|on
subcores_per_core|1|2 4|1
thp|[always] madvise never|never madvise|always
ksm|0|1 0|0
numa_balancing|1|0 1|1
sched_autogroup|1|0 1|1
kvm_hv.dynamic_mt_modes|6|0 2|6
kvm_hv.target_smt_mode|0|1 4|0
kvm_hv.indep_threads_mode|Y|N Y|Y
kvm_hv.one_vm_per_core|N|Y N|N
EOF

"$TA_BUILD/tests/helpers/knob-list" >"$tmp/knobs" || fail "knob-list"
[ -s "$tmp/knobs" ] || fail "knob-list printed nothing"
while IFS="$(printf '\t')" read -r name rel; do
	grep -q "^$name|" "$tmp/table" || fail "knob $name has no round-trip row in this test"
done <"$tmp/knobs"

cd "$tmp" || fail "cd"
n=0
while IFS='|' read -r name before values after; do
	n=$((n + 1))
	rel=$(awk -F '\t' -v k="$name" '$1 == k { print $2 }' "$tmp/knobs")
	[ -n "$rel" ] || fail "$name is not in the knob table"
	db=$tmp/k$n.db
	rm -rf root && mkdir -p "root/$(dirname "$rel")" || fail "mkdir"
	printf '%s\n' "$before" >"root/$rel"
	set -- $values
	cat >k.yaml <<YAML
name: knob-$name
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x1x1]
host:
  $name: [$1, $2]
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 2
YAML
	# The root named relatively, as typed at a prompt.
	"$TOPOADVISOR" --db "$db" -q run --root root k.yaml >/dev/null 2>err ||
		fail "$name: run exited $?: $(cat err)"
	q() { sqlite3 "$db" "$1"; }
	[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok' AND error IS NULL")" = 4 ] ||
		fail "$name: runs: $(q "SELECT status, error FROM runs")"
	# Each run read back its own configuration's value.
	[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
		WHERE r.host_state ->> '\$.knobs.\"$name\"' = c.factors ->> '\$.\"$name\"'")" = 4 ] ||
		fail "$name: read back: $(q "SELECT host_state FROM runs")"
	[ "$(cat "root/$rel")" = "$after" ] || fail "$name: the file holds '$(cat "root/$rel")', not '$after'"
	[ "$(q "SELECT COUNT(*) FROM host_journal")" -ge 1 ] || fail "$name: nothing journalled"
	[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] ||
		fail "$name: journal left open: $(q "SELECT * FROM host_journal")"
	# Stored canonical: the absolute path of the file, whatever was typed.
	[ "$(q "SELECT DISTINCT path FROM host_journal")" = "$(realpath root)/$rel" ] ||
		fail "$name: journal path $(q "SELECT DISTINCT path FROM host_journal")"
done <"$tmp/table"
[ "$n" = "$(wc -l <"$tmp/knobs")" ] || fail "$n rows for $(wc -l <"$tmp/knobs") knobs"

# --- the journal across roots named differently ---
db=$tmp/j.db
q() { sqlite3 "$db" "$1"; }
rm -rf root && mkdir -p root/sys/devices/system/cpu || fail "mkdir"
knob=root/sys/devices/system/cpu/subcores_per_core
echo 1 >"$knob"
ln -s root link
cat >slow.yaml <<YAML
name: slow
guest: {runner: host}
collect: {gang_exits: false, exit_reasons: false}
topology: [1x1x1]
host: {subcores_per_core: [2]}
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "4243", "30"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
repetitions: 1
YAML
sed -e 's/name: slow/name: quick/' -e 's/"4243", "30"/"5"/' -e 's/\[2\]/[4]/' slow.yaml >quick.yaml

# Kills a sweep of slow.yaml under root $1 once its knob is set (the next
# sweep ends the benchmark it leaves, by the host lock's record).
killed_sweep() {
	"$TOPOADVISOR" --db "$db" -q run --root "$1" slow.yaml >/dev/null 2>&1 &
	pid=$!
	wait_started $pid "fake-bench 4243"
	kill -KILL $pid
	wait $pid 2>/dev/null
	[ "$(cat "$knob")" = 2 ] || fail "the killed sweep did not leave its knob set"
	[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 1 ] ||
		fail "the killed sweep left no open journal entry"
}

for later in "$tmp/root" link "$tmp/./link/"; do
	killed_sweep root
	# A later sweep naming the root another way restores the entry first.
	"$TOPOADVISOR" --db "$db" -q run --root "$later" quick.yaml >/dev/null 2>err ||
		fail "sweep under --root $later exited $?: $(cat err)"
	[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] ||
		fail "--root $later did not restore the entry journalled under 'root': $(q "SELECT * FROM host_journal")"
	[ "$(cat "$knob")" = 1 ] || fail "--root $later: knob holds $(cat "$knob")"
done
# And the other way round: killed under an absolute root, restored by restore-host naming it relatively.
killed_sweep "$tmp/link"
"$TOPOADVISOR" --db "$db" restore-host --root root >out 2>&1 || fail "restore-host: $(cat out)"
[ "$(cat "$knob")" = 1 ] || fail "restore-host --root root: knob holds $(cat "$knob")"
[ "$(q "SELECT COUNT(*) FROM host_journal WHERE restored_at IS NULL")" = 0 ] || fail "restore-host left the entry"
"$TOPOADVISOR" --db "$db" -q run --root root quick.yaml >/dev/null 2>&1 || fail "the last sweep"
pgrep -f "fake-bench 4243" >/dev/null && fail "a killed sweep's benchmark is still running"
[ "$(q "SELECT COUNT(DISTINCT path) FROM host_journal")" = 1 ] ||
	fail "one file journalled under several paths: $(q "SELECT DISTINCT path FROM host_journal")"
pass
