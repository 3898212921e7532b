# Shared by the x86 suites that boot the emulated POWER8 host
# (tests/integration/power8-*.sh), sourced after tests/lib.sh and
# ta_tmpdir.

# power8_setup: skips (77, with the reason) where the emulated host cannot
# be had - not root (the image cache), not x86_64, no qemu-system-ppc64 or
# skiboot, no cross compiler or python3 or sqlite3, no access to Debian's
# archive for the ppc64el packages - then cross-builds (make cross-ppc64el)
# and builds or reuses the image.  Sets xb (the cross build directory) and
# img (the image directory); defines stamp (a `time:` line) and boot
# (power8-host.sh boot in the background, so that a test stopped half-way
# stops the emulated host too: the script kills its QEMU when it exits).
power8_setup() {
	[ "$(id -u)" -eq 0 ] || skip "needs root for the image cache"
	[ "$(uname -m)" = x86_64 ] || skip "builds its ppc64el tools on x86_64 only"
	command -v qemu-system-ppc64 >/dev/null || skip "qemu-system-ppc64 not installed (scripts/deps.sh)"
	[ -f /usr/share/qemu/skiboot.lid ] || skip "no skiboot.lid (qemu-system-data)"
	command -v powerpc64le-linux-gnu-gcc >/dev/null ||
		skip "powerpc64le-linux-gnu-gcc not installed (scripts/deps.sh)"
	command -v python3 >/dev/null || skip "python3 not installed"
	command -v sqlite3 >/dev/null || skip "sqlite3 not installed"
	t0=$(date +%s)
	bootpid=""
	trap '[ -n "$bootpid" ] && kill "$bootpid" 2>/dev/null && wait "$bootpid"; rm -rf "$tmp"' EXIT
	"$TA_TOP/scripts/sysroot.sh" >"$tmp/sysroot.log" 2>&1 ||
		skip "no ppc64el sysroot (Debian's archive unreachable?): $(tail -n 1 "$tmp/sysroot.log")"
	make -s -C "$TA_TOP" cross-ppc64el >"$tmp/make.log" 2>&1 ||
		{ cat "$tmp/make.log"; fail "make cross-ppc64el"; }
	xb=$TA_TOP/build-ppc64el
	"$TA_TOP/scripts/power8-host.sh" image "$xb/topoadvisor" >"$tmp/image.log" 2>&1 ||
		skip "cannot build the POWER8 host image: $(tail -n 1 "$tmp/image.log")"
	img=$(tail -n 1 "$tmp/image.log")
	stamp "cross build and image"
}

stamp() { echo "time: $1 at $(( $(date +%s) - t0 ))s"; }

boot() { # power8-host.sh boot arguments
	"$TA_TOP/scripts/power8-host.sh" boot "$@" &
	bootpid=$!
	wait $bootpid
	rc=$?
	bootpid=""
	return $rc
}
