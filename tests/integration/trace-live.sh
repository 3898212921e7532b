#!/bin/sh
# Live: `topoadvisor trace -- fakehv run SCENARIO` gives exactly the counts the
# scripted emulated kvm_hv sequences imply, with both gang rules, and removes
# its tracefs instance.
set -u
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
R=50

# run NAME ALGO ASSERTIONS
run() {
	"$TA" --json trace --algorithm "$2" -- "$FAKEHV" run "$1" $R >"$WORK/$1-$2.json" \
		2>"$WORK/err" || { cat "$WORK/err"; ta_fail "trace $1 $2 exited $?"; }
	ta_json_check "$WORK/$1-$2.json" "
assert j['lost_events'] == 0 and j['lost_events_exact'], 'losses'
assert j['applicable'] is True
assert j['algorithm'] == '$2'
$3"
	echo "ok: $1 ($2)"
}

run one-vcore vcore "p = proc(); assert (p['gang_exits'], p['core_runs'], p['guest_exits'], p['cedes'], p['bailouts']) == ($R, 2*$R, 4*$R, $R, 0), p
r = reasons(); assert r == {'HV_DECREMENTER': 2*$R, 'SYSCALL': $R, 'EXTERNAL': $R}, r"
run one-vcore seed "p = proc(); assert p['gang_exits'] == $R, p"
# Several vcores of one VM at once: the rules differ, both ways.
run overlap-reset vcore "p = proc(); assert (p['gang_exits'], p['core_runs']) == ($R, 2*$R), p"
run overlap-reset seed "p = proc(); assert p['gang_exits'] == 2*$R, p"
run overlap-share vcore "p = proc(); assert (p['gang_exits'], p['cedes']) == ($R, $R), p"
run overlap-share seed "p = proc(); assert p['gang_exits'] == 0, p"
run two-vms vcore "assert len(j['processes']) == 2
a, b = sorted(j['processes'], key=lambda p: p['tgid'])
assert b['tgid'] == a['tgid'] + 1000000
assert (a['gang_exits'], a['core_runs'], a['guest_exits'], a['cedes']) == ($R, $R, 4*$R, 2*$R), a
assert (b['gang_exits'], b['core_runs'], b['guest_exits']) == (0, $R, $R), b"
run bailout vcore "p = proc(); assert (p['bailouts'], p['core_runs'], p['gang_exits']) == ($R, $R, $R), p"
run bailout seed "p = proc(); assert (p['bailouts'], p['gang_exits']) == ($R, 2*$R - 1), p"
run negative vcore "p = proc(); assert (p['tgid'], p['gang_exits'], p['core_runs']) == (-5, 0, $R), p
r = reasons(); assert r == {'-0x1': $R, '0x7fffffff': $R}, r
v = [x for x in j['exit_reasons_by_vcpu'] if x['vcpu'] == -1]; assert v and v[0]['reason'] == -1, v"
run reasons vcore "p = proc(); assert (p['gang_exits'], p['guest_exits']) == (0, 33*$R), p
r = reasons(); assert len(r) == 33, r
assert all(c == $R for c in r.values()), r
for n in ('HANDLED_IN_KERNEL', 'HV_DECREMENTER', 'H_DOORBELL', 'HV_SOFTPATCH', 'NESTED_HV_DECREMENTER', 'HV_RM_HARD', '0x1234'):
    assert n in r, n"

# The text report and the instance clean-up (-v names the instance; other
# topoadvisor processes on this host may have their own).
"$TA" -v trace -- "$FAKEHV" run one-vcore 5 >"$WORK/text" 2>"$WORK/v.err" || ta_fail "text trace failed"
grep -q "Ganged exits (per-vcore rule)" "$WORK/text" || ta_fail "no gang table: $(cat "$WORK/text")"
grep -q "HV_DECREMENTER" "$WORK/text" || ta_fail "no exit reasons in text"
inst=$(sed -n 's/.*tracing in instance \(topoadvisor-[0-9-]*\).*/\1/p' "$WORK/v.err")
[ -n "$inst" ] || ta_fail "-v did not name the instance: $(cat "$WORK/v.err")"
ta_track_instance "$inst"
[ -d "$TRACEFS/instances/$inst" ] && ta_fail "instance $inst was left behind"

# -p keeps only the given process (the controller's guest).
"$TA" --json trace -p 1 -- "$FAKEHV" run one-vcore 5 >"$WORK/p.json" || ta_fail "trace -p failed"
ta_json_check "$WORK/p.json" "assert j['processes'] == [] and j['events'] == 40, j['processes']"

# A failing command: the report is still printed, the exit status says so.
"$TA" trace -- sh -c "'$FAKEHV' run one-vcore 5; exit 3" >"$WORK/f.txt" 2>"$WORK/f.err"
[ $? -eq 1 ] || ta_fail "a failing command should make trace exit 1"
grep -q "exited with status 3" "$WORK/f.err" && grep -q "HV_DECREMENTER" "$WORK/f.txt" \
	|| ta_fail "failing command: $(cat "$WORK/f.err")"

# Not applicable: no kvm_hv events fire during a plain sleep.
"$TA" --json trace -d 0.3 >"$WORK/idle.json" || ta_fail "trace -d failed"
ta_json_check "$WORK/idle.json" "assert j['applicable'] is False and 'never fired' in j['why'], j.get('why')"
echo "all live scenarios passed"
