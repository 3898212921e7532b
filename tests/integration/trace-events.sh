#!/bin/sh
# A live session enables only the events it was asked for (issue 15, item
# 10): a sweep with `gang_exits: false` collects exit reasons only, so it
# must neither enable kvm_hv:kvmppc_run_core nor depend on it — the event may
# vanish (kvm_hv reloaded, here: its uprobe removed) while the session runs,
# and the session still stops cleanly.  A session asked for ganged exits
# does enable it (the check below would catch a session that never does).
set -u
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
DRV=${TA_BUILD:-$TA_TOP/build}/tests/helpers/live-events
[ -x "$DRV" ] || ta_skip "$DRV not built (make units)"

# session EVENTS: starts the driver on a fifo; sets $inst and $drv_pid.
session() {
	rm -f "$WORK/in" "$WORK/out"
	mkfifo "$WORK/in"
	"$DRV" "$1" <"$WORK/in" >"$WORK/out" 2>"$WORK/err" &
	drv_pid=$!
	exec 7>"$WORK/in"
	i=0
	until [ -s "$WORK/out" ]; do
		i=$((i + 1)); [ $i -lt 300 ] || { cat "$WORK/err"; ta_fail "$1: no session"; }
		kill -0 $drv_pid 2>/dev/null || { cat "$WORK/err"; ta_fail "$1: the driver died"; }
		sleep 0.1
	done
	inst=$(head -n 1 "$WORK/out")
	ta_track_instance "$inst"
}
finish() {
	echo stop >&7
	exec 7>&-
	wait $drv_pid || { cat "$WORK/err"; ta_fail "$1: the session did not stop cleanly"; }
}
enabled() { cat "$TRACEFS/instances/$inst/events/$1/enable"; }

session gang
[ "$(enabled kvm_hv/kvmppc_run_core)" = 1 ] || ta_fail "gang: kvmppc_run_core not enabled"
finish gang

session reasons
[ "$(enabled kvm_hv/kvmppc_run_core)" = 0 ] ||
	ta_fail "reasons only: kvmppc_run_core enabled though ganged exits were not asked for"
[ "$(enabled kvm_hv/kvm_guest_exit)" = 1 ] || ta_fail "reasons only: kvm_guest_exit not enabled"
# The unused event vanishes mid-session (an enabled one could not be removed).
echo "-:kvm_hv/kvmppc_run_core" >>"$TRACEFS/uprobe_events" 2>"$WORK/rmerr" ||
	{ cat "$WORK/rmerr"; ta_fail "kvmppc_run_core is busy: the session holds an event it does not use"; }
"$FAKEHV" run reasons 5 >/dev/null 2>&1 || true
finish reasons
grep -q "^records [1-9]" "$WORK/out" || { cat "$WORK/out"; ta_fail "reasons only: nothing recorded"; }
echo ok
