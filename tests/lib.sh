# Shared helpers for the integration scripts (sourced).  Each script exits 0
# to pass, 77 to skip (after saying why), anything else to fail.

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skip: $*"; exit 77; }
pass() { echo "ok"; exit 0; }

# expect_exit STATUS CMD ARGS...: runs the command, fails unless it exits STATUS.
expect_exit() {
	want=$1; shift
	"$@" >/dev/null 2>&1
	got=$?
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}

# Sets $tmp to a private scratch directory removed when the script exits,
# however it exits.  Call it in the script itself, not in $(...).
ta_tmpdir() {
	tmp=$(mktemp -d /tmp/ta-it.XXXXXX) || fail "mktemp"
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 130' INT TERM
}

# format_is_recorded TRACE.dat EVENT FORMAT_FILE: the fields of EVENT in the
# formats the recording carries (trace-cmd dump --events) are FORMAT_FILE's.
# Needs trace-cmd and $tmp (ta_tmpdir).
format_is_recorded() {
	trace-cmd dump --events "$1" 2>/dev/null |
		awk -v e="$2" '/^name: / { on = ($2 == e) } on && /field:/' >"$tmp/format.got" &&
		grep 'field:' "$3" | diff - "$tmp/format.got" >/dev/null
}

# The libvirt domains tests/helpers/guest-e2e runs for the given helper
# pids (it names them topoadvisor-e2e-PID-...): only those are a test's own,
# another checkout's test may be running guests right now.
ta_e2e_domains() { # pid...
	for p in "$@"; do
		virsh -q -c qemu:///system list --all --name 2>/dev/null | grep "^topoadvisor-e2e-$p-"
	done
}

: "${TOPOADVISOR:?run through scripts/run-tests.sh}"
: "${TA_TOP:?run through scripts/run-tests.sh}"

# guest_sweep_setup PREFIX: for the scripts that run sweeps in real TCG
# guests.  Skips (77) without root, x86_64, libvirt, QEMU or the guest
# image; sets $tmp, TOPOADVISOR_LOCK, $db and $prefix (the domain name
# prefix the script's configs use); starts libvirtd registered to this
# script; on exit destroys the domains with that prefix, stops libvirtd if
# no other user needs it and removes $tmp.  Then: ta (topoadvisor on $db),
# q (sqlite3 on $db), ours (how many of our domains exist).
guest_sweep_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for qemu:///system"
	[ "$(uname -m)" = x86_64 ] || skip "the test image is x86_64 only"
	for b in /usr/sbin/libvirtd /usr/sbin/virtlogd /usr/bin/qemu-system-x86_64 /usr/bin/virsh; do
		[ -x "$b" ] || skip "$b not installed (scripts/deps.sh check)"
	done
	"$TA_TOP/scripts/guest-image.sh" >/dev/null || skip "cannot build the guest image"
	ta_tmpdir
	export TOPOADVISOR_LOCK="$tmp/lock"
	db=$tmp/t.db
	prefix=$1
	trap guest_sweep_cleanup EXIT
	out=$("$TA_TOP/scripts/libvirtd-start.sh" --user $$) || fail "libvirtd did not start: $out"
}

# host_sweep_setup: for the scripts that run sweeps with the host runner on
# a fake sysfs root.  Sets $tmp (removed on exit), TOPOADVISOR_LOCK, $db,
# $root and $knob (subcores_per_core under $root, holding 1).  Then: ta, q.
host_sweep_setup() {
	ta_tmpdir
	export TOPOADVISOR_LOCK="$tmp/lock"
	db=$tmp/t.db
	root=$tmp/root
	knob=$root/sys/devices/system/cpu/subcores_per_core
	mkdir -p "$(dirname "$knob")"
	echo 1 >"$knob"
}

# wait_started PID PATTERN: waits (up to 10 s) until a process whose command
# line matches PATTERN runs — what the sweep PID started; else kills PID and
# fails.
wait_started() {
	_i=0
	until pgrep -f "$2" >/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || { kill -KILL "$1"; fail "'$2' never started"; }
		sleep 0.1
	done
}

guest_sweep_cleanup() {
	for d in $(virsh -q -c qemu:///system list --all --name 2>/dev/null | grep "^$prefix"); do
		virsh -q -c qemu:///system destroy "$d" >/dev/null 2>&1
	done
	"$TA_TOP/scripts/libvirtd-stop.sh" --user $$ >/dev/null 2>&1
	rm -rf "$tmp"
}

ta() { "$TOPOADVISOR" --db "$db" "$@"; }
q() { sqlite3 "$db" "$1"; }
ours() { virsh -q -c qemu:///system list --all --name | grep -c "^$prefix"; }
