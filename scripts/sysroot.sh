#!/bin/sh
# Builds a ppc64el sysroot for cross-compiling topoadvisor: the ppc64el -dev
# packages of every library the Makefile links (scripts/deps.sh's build
# profile, libc6-dev included), with all
# their run-time dependencies, extracted with dpkg-deb -x into
# $TOPOADVISOR_CACHE/sysroot-ppc64el.  Packages come through
# scripts/debfetch.sh (a private apt state: the host's dpkg architectures
# stay as they are; libtracecmd-dev is not Multi-Arch: same, so it could not
# be installed beside the amd64 one anyway).  Tools that only the packages'
# maintainer scripts or build systems use (perl, python, pkg-config, dpkg
# ...) are left out.  A stamp of the package versions and this script's
# hash makes a second run instant (without even asking apt while the
# package lists are older than the stamp).
# Absolute symlinks in the packages (libfoo.so -> /lib/...) are made
# relative, so the cross linker resolves them inside the sysroot.
# Usage: scripts/sysroot.sh [--force]   Prints the sysroot directory.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
out=$cache/sysroot-ppc64el
fetch="$top/scripts/debfetch.sh ppc64el"
die() { echo "sysroot: $*" >&2; exit 1; }

# The build profile's -dev packages (the host tools gcc, make, pkg-config
# stay amd64).
dev=$("$top/scripts/deps.sh" --list build | grep -- '-dev$' | tr '\n' ' ')
skip_re='^(dpkg|tar|perl.*|libperl.*|python3.*|libpython3.*|install-info|mailcap|media-types|mime-support|pkg-config|pkgconf.*|libpkgconf.*|readline-common|libglib2\.0-bin|libglib2\.0-dev-bin|icu-devtools|rpcsvc-proto|libc-dev-bin)$'

# A stamp written after the package lists' last refresh, by this very
# script, is current: no need to ask apt (that costs seconds).
lists=$($fetch lists) || die "no ppc64el package lists"
self_hash="script $(sha256sum "$0" | cut -d' ' -f1)"
if [ "${1:-}" != --force ] && [ -f "$out/.stamp" ] && [ "$out/.stamp" -nt "$lists" ] &&
	[ "$(head -n 1 "$out/.stamp")" = "$self_hash" ]; then
	echo "$out"
	exit 0
fi
# shellcheck disable=SC2086
pkgs=$($fetch depends $dev | grep -Ev "$skip_re") || die "cannot resolve the -dev packages"
# shellcheck disable=SC2086
stamp_new=$(
	echo "$self_hash"
	$fetch version $pkgs
) || die "cannot resolve package versions"

if [ "${1:-}" != --force ] && [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp_new" ]; then
	touch "$out/.stamp"	# current as of these lists
	echo "$out"
	exit 0
fi

umask 022
work=$(mktemp -d "$cache/.sysroot.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# shellcheck disable=SC2086
$fetch extract "$work/root" $pkgs >/dev/null
find "$work/root" -type l | while read -r l; do
	t=$(readlink "$l")
	case "$t" in
	/*)
		rel=$(realpath -m --relative-to="$(dirname "$l")" "$work/root$t")
		ln -sfn "$rel" "$l"
		;;
	esac
done
printf '%s\n' "$stamp_new" >"$work/root/.stamp"
rm -rf "$out"
mv "$work/root" "$out"
echo "$out"
