#!/bin/sh
# scripts/deps.sh's profiles, listed (never installed): build is part of
# demo, demo a strict part of check, bench the same as check; the demo
# installs what the test guest image is built from and what runs it, and none
# of the test-only toolchain (clang, chromium, the ppc64el cross compiler,
# Slurm).
. "$TA_TOP/tests/lib.sh"
ta_tmpdir
deps=$TA_TOP/scripts/deps.sh

for p in build demo check bench; do
	sh "$deps" --list $p | sort >"$tmp/$p" || fail "deps.sh --list $p failed"
	[ -s "$tmp/$p" ] || fail "deps.sh --list $p is empty"
	[ "$(uniq -d "$tmp/$p")" = "" ] || fail "$p lists a package twice: $(uniq -d "$tmp/$p")"
done
expect_exit 2 sh "$deps" --list nosuch

# subset A B: every package of A is in B; strict: B has more.
subset() {
	extra=$(comm -23 "$tmp/$1" "$tmp/$2")
	[ -z "$extra" ] || fail "$1 lists packages $2 lacks: $extra"
}
subset build demo
subset demo check
cmp -s "$tmp/check" "$tmp/bench" || fail "bench differs from check"
[ "$(comm -13 "$tmp/build" "$tmp/demo" | wc -l)" -gt 0 ] || fail "demo adds nothing to build"
[ "$(comm -13 "$tmp/demo" "$tmp/check" | wc -l)" -gt 0 ] || fail "check adds nothing to demo"

has() { grep -qx "$2" "$tmp/$1"; }
# What the demo runs: libvirt's daemons and client, QEMU for x86, and the
# packages scripts/guest-image.sh copies the x86_64 image's programs from.
for p in libvirt-daemon-system libvirt-daemon-system-sysv libvirt-clients qemu-system-x86 \
	gcc libc6-dev cpio; do
	has demo $p || fail "the demo needs $p"
done
image=$(sed -n '/^x86_64)/,/;;/s/^[[:space:]]*tools="\(.*\)"$/\1/p' "$TA_TOP/scripts/guest-image.sh")
[ -n "$image" ] || fail "cannot read the x86_64 image's packages from scripts/guest-image.sh"
for p in $image; do
	has demo "$p" || fail "the guest image is made from $p, which the demo does not install"
done
# The test-only toolchain stays out of the demo.
for p in clang libclang-rt-14-dev chromium gcc-powerpc64le-linux-gnu qemu-system-ppc \
	libcmocka-dev linux-perf trace-cmd slurmctld slurmd munge; do
	has check $p || fail "check should install $p"
	has demo $p && fail "the demo installs the test-only $p"
done
pass
