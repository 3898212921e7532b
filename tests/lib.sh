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
