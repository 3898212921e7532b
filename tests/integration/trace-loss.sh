#!/bin/sh
# Live with a deliberately tiny buffer: events are lost, the loss is reported
# exactly (events counted + events lost = events fired) and the report says
# the counts are lower bounds.  Also: signals and bad usage clean up.
set -u
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
N=200000	# fakehv bench iterations, 4 events each

"$TA" --json trace --buffer-kib 4 -- "$FAKEHV" bench $N >"$WORK/loss.json" \
	|| ta_fail "trace with a tiny buffer failed"
ta_json_check "$WORK/loss.json" "
assert j['lost_events'] > 0, 'a 4 KiB buffer should overflow at this rate'
assert j['lost_events_exact'] is True and j['counts_are_lower_bounds'] is True
assert j['events'] + j['lost_events'] == 4 * $N, (j['events'], j['lost_events'])
"
"$TA" trace --buffer-kib 4 -- "$FAKEHV" bench 50000 >"$WORK/loss.txt" || ta_fail "text trace failed"
grep -q "lower bound" "$WORK/loss.txt" || ta_fail "text report does not warn: $(head -3 "$WORK/loss.txt")"
echo "ok: losses exact"

# SIGINT and SIGTERM while tracing: exit 128+sig, instance removed.
for sig in INT TERM; do
	"$TA" trace -d 60 >"$WORK/sig.out" 2>&1 &
	pid=$!
	# Its instance: topoadvisor-PID-0-PIDNS-START (live.h: the owner's token).
	i=0 inst=
	while [ -z "$inst" ] && [ $i -lt 100 ]; do
		inst=$(ls "$TRACEFS/instances" 2>/dev/null | grep "^topoadvisor-$pid-0-" | head -n 1)
		[ -n "$inst" ] || sleep 0.1
		i=$((i + 1))
	done
	[ -n "$inst" ] || ta_fail "instance never appeared"
	ta_track_instance "$inst"
	kill -$sig $pid
	wait $pid
	rc=$?
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	[ $rc -eq $want ] || ta_fail "SIG$sig: exit $rc, want $want: $(cat "$WORK/sig.out")"
	[ -d "$TRACEFS/instances/$inst" ] && ta_fail "SIG$sig left the instance"
	echo "ok: SIG$sig cleans up"
done

# Usage errors exit 2 without touching tracefs.
"$TA" trace >/dev/null 2>&1; [ $? -eq 2 ] || ta_fail "trace without -d or command should exit 2"
"$TA" trace -d abc >/dev/null 2>&1; [ $? -eq 2 ] || ta_fail "bad -d should exit 2"
"$TA" trace --algorithm foo -d 1 >/dev/null 2>&1; [ $? -eq 2 ] || ta_fail "bad --algorithm should exit 2"
"$TA" trace -- /nonexistent/cmd >"$WORK/nx" 2>&1; [ $? -eq 2 ] || ta_fail "missing command should exit 2"
grep -q "cannot run" "$WORK/nx" || ta_fail "no message for a missing command"

# Not root: a clear error (where user 65534 can reach the tool: not under a
# 0700 directory such as mktemp -d makes).
if command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TA-core" 2>/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TA" trace -d 1 >"$WORK/nr" 2>&1
	rc=$?
	[ $rc -eq 1 ] || ta_fail "non-root trace exit $rc"
	grep -q "needs root" "$WORK/nr" || ta_fail "non-root message: $(cat "$WORK/nr")"
	echo "ok: non-root refused clearly"
else
	echo "not checked: trace as another user (needs setpriv and a checkout user 65534 can reach)"
fi
echo "all loss/signal/usage checks passed"
