#!/bin/sh
# restore-host after a crash: a journal as a killed controller leaves it
# (rows committed, knobs changed under a fake sysfs ROOT) is restored in
# the reverse of the safe order, rows are marked, a second run does
# nothing; --json; a stuck knob makes it exit 1 without stopping the rest;
# another ROOT's rows are left alone; a held host lock refuses to run.
set -u
: "${TOPOADVISOR:?}" "${TA_TOP:?}"
command -v sqlite3 >/dev/null || { echo "skip: the sqlite3 shell is not installed"; exit 77; }
command -v flock >/dev/null || { echo "skip: flock(1) is not installed"; exit 77; }

tmp=$(mktemp -d /tmp/ta-restore-host.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
export TOPOADVISOR_LOCK="$tmp/lock"
db=$tmp/t.db
root=$tmp/root
cpu=$root/sys/devices/system/cpu
kvm=$root/sys/module/kvm_hv/parameters
ta() { "$TOPOADVISOR" --db "$db" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 "$db" "$1"; }

mkdir -p "$cpu/smt" "$kvm" "$root/sys/kernel/mm/transparent_hugepage"
# The host as the crashed controller left it.
echo off >"$cpu/smt/control"
echo 4 >"$cpu/subcores_per_core"
echo 0 >"$kvm/dynamic_mt_modes"
echo Y >"$kvm/one_vm_per_core"
echo 'always [madvise] never' >"$root/sys/kernel/mm/transparent_hugepage/enabled"

# A database with the embedded schema, made the way db_open makes one.
nmig=$(grep -c '^-- @migration ' "$TA_TOP/schema/schema.sql")
sqlite3 "$db" <"$TA_TOP/schema/schema.sql" || fail "schema"
q "PRAGMA user_version = $nmig"
q "INSERT INTO experiments (name, config_yaml, config_sha256, tool_version, seed)
   VALUES ('crashed', 'x', 'y', 't', 1)"
# Rows in the order the controller wrote them (SMT, split-core, kvm_hv),
# the split-core row updated by a later change (original kept).
q "INSERT INTO host_journal (experiment_id, knob, path, original_value, applied_value) VALUES
   (1, 'smt', '$cpu/smt/control', 'on', 'off'),
   (1, 'subcores_per_core', '$cpu/subcores_per_core', '1', '4'),
   (1, 'kvm_hv.dynamic_mt_modes', '$kvm/dynamic_mt_modes', '6', '0'),
   (1, 'kvm_hv.one_vm_per_core', '$kvm/one_vm_per_core', 'off', 'on'),
   (1, 'thp', '$root/sys/kernel/mm/transparent_hugepage/enabled', 'madvise', 'never')"

# Another controller holds the lock: refuse, change nothing.
out=$(flock "$root" "$TOPOADVISOR" --db "$db" restore-host --root "$root" 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "with the lock held: exit $rc: $out"
echo "$out" | grep -q "another topoadvisor" || fail "lock message: $out"
[ "$(cat "$cpu/smt/control")" = off ] || fail "changed the host without the lock"

# Rows of another root are reported, not touched.
# (A root must exist: its lock is taken on the directory itself.)
out=$(ta restore-host --root "$tmp/missing" 2>&1) && fail "a missing root was locked: $out"
echo "$out" | grep -q "cannot lock the host under $tmp/missing" || fail "missing root: $out"
mkdir "$tmp/elsewhere"
out=$(ta restore-host --root "$tmp/elsewhere" 2>&1) || fail "other root: exit $?: $out"
echo "$out" | grep -q "5 under another root" || fail "other root summary: $out"
[ "$(q 'SELECT count(*) FROM host_journal WHERE restored_at IS NULL')" = 5 ] ||
	fail "other root marked rows"

out=$(ta restore-host --root "$root" 2>&1) || fail "restore: exit $?: $out"
echo "$out"
[ "$(cat "$cpu/smt/control")" = on ] || fail "smt not restored"
[ "$(cat "$cpu/subcores_per_core")" = 1 ] || fail "subcores not restored"
[ "$(cat "$kvm/dynamic_mt_modes")" = 6 ] || fail "dynamic_mt_modes not restored"
[ "$(cat "$kvm/one_vm_per_core")" = N ] || fail "one_vm_per_core not restored as N"
echo "$out" | grep -q "restored   kvm_hv.dynamic_mt_modes = 6 (was 0)" || fail "report"
echo "$out" | grep -q "unchanged  thp = madvise" || fail "thp should be unchanged"
echo "$out" | grep -q "4 restored, 1 already original, 0 failed" || fail "summary"
# Reverse of the safe order: kvm_hv first, split-core, SMT last.
order=$(echo "$out" | grep -E '^(restored|unchanged)' | awk '{print $2}' | tr '\n' ' ')
case "$order" in
"kvm_hv."*"kvm_hv."*"thp subcores_per_core smt ") ;;
*) fail "restore order: $order" ;;
esac
[ "$(q 'SELECT count(*) FROM host_journal WHERE restored_at IS NULL')" = 0 ] ||
	fail "rows not marked restored"

# Idempotent.
out=$(ta restore-host --root "$root" 2>&1) || fail "second run: exit $?"
echo "$out" | grep -q "nothing to restore" || fail "second run: $out"

# A stuck knob: exit 1, the others still restored, its row kept; a knob
# whose file has vanished is marked, not failed.
q "INSERT INTO host_journal (knob, path, original_value, applied_value) VALUES
   ('subcores_per_core', '$cpu/subcores_per_core', '1', '2'),
   ('kvm_hv.dynamic_mt_modes', '$kvm/dynamic_mt_modes', '6', '2'),
   ('kvm_hv.indep_threads_mode', '$kvm/indep_threads_mode', 'on', 'off')"
echo 2 >"$kvm/dynamic_mt_modes"
rm "$cpu/subcores_per_core" && mkdir "$cpu/subcores_per_core"
out=$(ta --json restore-host --root "$root" 2>"$tmp/err")
rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "stuck knob: exit $rc"
grep -q "1 host knob not restored" "$tmp/err" || fail "stuck knob error: $(cat "$tmp/err")"
echo "$out" | grep -q '"failed": 1' || fail "json failed count"
echo "$out" | grep -q '"restored": 1' || fail "json restored count"
echo "$out" | grep -q '"status": "failed"' || fail "json status"
# kvm_hv unloaded since (its parameter file is gone): nothing to put back.
echo "$out" | grep -q '"gone": 1' || fail "json gone count"
[ "$(cat "$kvm/dynamic_mt_modes")" = 6 ] || fail "the other knob was not restored"
[ "$(q "SELECT knob FROM host_journal WHERE restored_at IS NULL")" = subcores_per_core ] ||
	fail "stuck row should stay unrestored"

# A database that does not exist is bad input, not "nothing to do".
"$TOPOADVISOR" --db "$tmp/none.db" restore-host --root "$root" >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing database should exit 2"
echo "restore-host: ok"
