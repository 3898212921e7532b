# Sourced by the collector integration tests: skips when tracing is not
# possible, serialises tests that share the kvm_hv uprobe event names, creates
# the emulated kvm_hv events on fakehv and removes them (plus any tracefs
# instance a test made) on every exit path.
#
# Provides: $FAKEHV, $TA (the tool), $WORK (a private temp dir),
#           ta_skip MSG, ta_fail MSG, ta_json_check FILE PYTHON-ASSERTIONS,
#           ta_track_instance NAME (removed at exit).

TA=${TOPOADVISOR:-$TA_TOP/topoadvisor}
FAKEHV=${TA_BUILD:-$TA_TOP/build}/tests/fakehv
TRACEFS=/sys/kernel/tracing
ta_instances=""

ta_skip() { echo "skip: $*"; exit 77; }
ta_fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || ta_skip "needs root for kernel tracing"
[ -x "$FAKEHV" ] || ta_skip "$FAKEHV not built (make units)"
command -v python3 >/dev/null || ta_skip "python3 not installed (scripts/deps.sh)"
if [ ! -d $TRACEFS/instances ]; then
	mount -t tracefs nodev $TRACEFS 2>/dev/null || ta_skip "tracefs not available"
fi
[ -e $TRACEFS/uprobe_events ] || ta_skip "kernel without uprobe events"

WORK=$(mktemp -d /tmp/ta-kvmhv.XXXXXX)
# make SAN=1: library-internal leaks are not ours (see the file).
export LSAN_OPTIONS="suppressions=$TA_TOP/tests/helpers/lsan.supp:print_suppressions=0"


ta_cleanup() {
	"$FAKEHV" probes-remove || true
	for i in $ta_instances; do
		[ -d "$TRACEFS/instances/$i" ] && rmdir "$TRACEFS/instances/$i" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap 'ta_cleanup' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Only one test at a time may own kvm_hv/* (names are global to the kernel).
exec 9>/tmp/topoadvisor-kvm_hv.lock
flock -w 600 9 || ta_skip "could not get the kvm_hv probe lock within 10 minutes"

"$FAKEHV" probes-create || ta_fail "cannot create the kvm_hv uprobe events"

ta_track_instance() { ta_instances="$ta_instances $1"; }

# ta_json_check FILE 'python statements using j (the parsed JSON)'
ta_json_check() {
	python3 - "$1" "$2" <<'PYEOF' || ta_fail "JSON check failed on $1"
import json, sys
j = json.load(open(sys.argv[1]))
def proc(pred=lambda p: True):
    ps = [p for p in j["processes"] if pred(p)]
    assert len(ps) == 1, "expected one matching process, got %r" % j["processes"]
    return ps[0]
def reasons():
    return {r["name"]: r["count"] for r in j["exit_reasons"]}
try:
    exec(sys.argv[2])
except AssertionError as e:
    print("assertion failed:", e, file=sys.stderr)
    print(json.dumps(j, indent=1)[:3000], file=sys.stderr)
    sys.exit(1)
PYEOF
}
