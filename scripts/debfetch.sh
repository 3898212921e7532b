#!/bin/sh
# Downloads Debian packages of any architecture, from bookworm and
# bookworm-backports, through a private apt state: its own sources list,
# lists, cache and an empty dpkg status, all under
# $TOPOADVISOR_CACHE/apt-private-ARCH.  The host's dpkg architectures, sources and
# package state are never touched (no `dpkg --add-architecture`).  The
# mirrors are the host's own (read from `apt-cache policy`).
#
# usage:
#   scripts/debfetch.sh ARCH download PKG[/SUITE]...
#       prints the path of each package's .deb (one a line), downloading
#       what is not in $TOPOADVISOR_CACHE/debs-ARCH yet; PKG/bookworm-backports
#       takes the backports version.
#   scripts/debfetch.sh ARCH extract DIR PKG[/SUITE]...
#       the same, then `dpkg-deb -x` of each into DIR.
#   scripts/debfetch.sh ARCH version PKG[/SUITE]...
#       "PKG VERSION" a line (the version download would fetch).
#   scripts/debfetch.sh ARCH lists
#       refreshes the package lists if due and prints the file whose mtime
#       is their last refresh: a stamp newer than it cannot be out of date
#       (callers skip the slower version look-ups then).
#   scripts/debfetch.sh ARCH depends PKG...
#       the packages PKG needs at run time (Depends and Pre-Depends,
#       recursively, PKG included), one a line.
# The package lists are refreshed when older than a day (or with
# TOPOADVISOR_APT_UPDATE=1).  Exit 1 with a message when a package cannot be
# had (offline, or not in the archive).
set -eu

die() { echo "debfetch: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 ARCH download|extract|version|depends ..."
arch=$1
cmd=$2
shift 2
case "$arch" in *[!a-z0-9]*|"") die "bad architecture '$arch'" ;; esac

cache=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}
state=$cache/apt-private-$arch
debs=$cache/debs-$arch
umask 022
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/etc" "$debs"
: >"$state/status.empty" 2>/dev/null || [ -f "$state/status.empty" ]

sources=$state/etc/sources.list
apt_opts="-o Dir::Etc::SourceList=$sources -o Dir::Etc::SourceParts=/nonexistent
-o Dir::State::Lists=$state/lists -o Dir::Cache=$state/cache
-o Dir::State::status=$state/status.empty
-o APT::Architecture=$arch -o APT::Architectures::=$arch
-o Debug::NoLocking=true -o APT::Get::List-Cleanup=false"

update_due() {
	[ "${TOPOADVISOR_APT_UPDATE:-0}" = 1 ] || [ ! -f "$state/updated" ] ||
		[ ! -f "$sources" ] || [ -n "$(find "$state/updated" -mmin +1440 2>/dev/null)" ]
}

# The host's Debian mirrors for bookworm and bookworm-security, as apt
# itself resolved them; backports lives beside the main archive.  Looked
# up again whenever the lists are refreshed.
mirror_of() { # suite
	m=$(apt-cache policy 2>/dev/null | awk -v s="$1/main" '$3 == s { print $2; exit }')
	# Before the host's first apt-get update apt knows no lists: read the
	# sources themselves (one-line and deb822 forms).
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk -v s="$1" '$1 == "deb" { for (i = 2; i < NF; i++) if ($(i + 1) == s && $i !~ /^\[/) { print $i; exit } }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v s="$1" '
		/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } }')
	echo "$m"
}
sources_write() {
	main=$(mirror_of bookworm)
	[ -n "$main" ] || die "the host's apt knows no bookworm mirror (apt-get update first)"
	sec=$(mirror_of bookworm-security)
	{
		echo "deb [arch=$arch] $main bookworm main"
		echo "deb [arch=$arch] $main bookworm-updates main"
		echo "deb [arch=$arch] $main bookworm-backports main"
		[ -n "$sec" ] && echo "deb [arch=$arch] $sec bookworm-security main"
	} >"$sources.new"
	mv -f "$sources.new" "$sources"
}

# One update at a time per state directory; a day-old list is fresh enough.
lists_update() {
	if update_due; then
		sources_write
		# shellcheck disable=SC2086
		# One failing index (a mirror mid-sync) is tolerated while the
		# main archive's list is there: a package that is then really
		# missing fails loudly in download.
		if flock "$state/lock" apt-get $apt_opts -q update >"$state/update.log" 2>&1 ||
			ls "$state/lists/"*_dists_bookworm_main_binary-"${arch}"_Packages* >/dev/null 2>&1; then
			touch "$state/updated"
		else
			tail -n 5 "$state/update.log" >&2
			die "apt-get update for $arch failed (offline?); log: $state/update.log"
		fi
	fi
}
lists_update

# shellcheck disable=SC2086
apt_cache() { apt-cache $apt_opts "$@"; }

# "PKG VERSION" a line for every PKG[/SUITE] argument, in one apt-cache
# call for the plain names (a call costs about half a second); the version
# is empty when there is none.
versions() { # pkg[/suite]...
	plain=""
	for a in "$@"; do
		case "$a" in
		*/*)
			# The newest version that suite offers.
			v=$(apt_cache madison "${a%/*}" 2>/dev/null | awk -F'|' -v s="${a#*/}" \
				'{ gsub(/ /, "", $2); if (index($3, " " s "/")) { print $2; exit } }')
			echo "$a $v"
			;;
		*) plain="$plain $a" ;;
		esac
	done
	[ -n "$plain" ] || return 0
	# shellcheck disable=SC2086
	apt_cache policy $plain 2>/dev/null | awk '
		/^[^ ].*:$/ { name = substr($0, 1, length($0) - 1) }
		/^  Candidate:/ { print name, ($2 == "(none)" ? "" : $2) }'
}

deb_path() { # pkg[/suite] version -> the cached .deb, downloading it if needed
	p=${1%/*}
	v=$2
	[ -n "$v" ] || die "no $arch package '$1' in bookworm or bookworm-backports"
	fv=$(printf '%s' "$v" | sed 's/:/%3a/')
	f=$debs/${p}_${fv}_$arch.deb
	[ -f "$f" ] || f=$debs/${p}_${fv}_all.deb
	if [ ! -f "$f" ]; then
		tmpd=$(mktemp -d "$debs/.dl.XXXXXX")
		# shellcheck disable=SC2086
		if ! (cd "$tmpd" && apt-get $apt_opts -q download "$p=$v" >"$tmpd/log" 2>&1); then
			tail -n 3 "$tmpd/log" >&2
			rm -rf "$tmpd"
			die "apt-get download $p=$v ($arch) failed"
		fi
		for d in "$tmpd"/*.deb; do mv -f "$d" "$debs/"; done
		rm -rf "$tmpd"
		f=$debs/${p}_${fv}_$arch.deb
		[ -f "$f" ] || f=$debs/${p}_${fv}_all.deb
		[ -f "$f" ] || die "downloaded $p=$v but found no $f"
	fi
	echo "$f"
}

# Every argument's version, checked: each must have one.  Sets $vs.
versions_checked() { # pkg[/suite]...
	vs=$(versions "$@")
	for a in "$@"; do
		v=$(printf '%s\n' "$vs" | awk -v a="$a" '$1 == a { print $2; exit }')
		[ -n "$v" ] || die "no $arch package '$a' in bookworm or bookworm-backports"
	done
}

# Downloads, in one apt-get call (each costs a second or two of loading),
# every package of $vs whose .deb is not cached yet.
fetch_missing() {
	want=$(printf '%s\n' "$vs" | while read -r p v; do
		fv=$(printf '%s' "$v" | sed 's/:/%3a/')
		[ -f "$debs/${p%/*}_${fv}_$arch.deb" ] || [ -f "$debs/${p%/*}_${fv}_all.deb" ] ||
			echo "${p%/*}=$v"
	done)
	[ -n "$want" ] || return 0
	tmpd=$(mktemp -d "$debs/.dl.XXXXXX")
	# shellcheck disable=SC2086
	if ! (cd "$tmpd" && apt-get $apt_opts -q download $want >"$tmpd/log" 2>&1); then
		tail -n 3 "$tmpd/log" >&2
		rm -rf "$tmpd"
		die "apt-get download ($arch) failed for some of:" $want
	fi
	for d in "$tmpd"/*.deb; do mv -f "$d" "$debs/"; done
	rm -rf "$tmpd"
}

case "$cmd" in
lists)
	echo "$state/updated"
	;;
download)
	versions_checked "$@"
	fetch_missing
	printf '%s\n' "$vs" | while read -r p v; do deb_path "$p" "$v"; done
	;;
extract)
	[ $# -ge 1 ] || die "extract needs a directory"
	dir=$1
	shift
	mkdir -p "$dir"
	versions_checked "$@"
	fetch_missing
	printf '%s\n' "$vs" | while read -r p v; do
		f=$(deb_path "$p" "$v")
		dpkg-deb -x "$f" "$dir"
	done
	;;
version)
	versions_checked "$@"
	printf '%s\n' "$vs" | sed 's|^\([^ /]*\)/[^ ]*|\1|'
	;;
depends)
	# Virtual packages (<...>) and alternatives' second choices are left
	# out: the first alternative is the one apt would take.
	apt_cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "$@" 2>/dev/null |
		awk '/^[^ ]/ && !/^</ { print $1 }' | sort -u
	;;
*) die "unknown command '$cmd'" ;;
esac
