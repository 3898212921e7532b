#!/bin/sh
# Truncated and corrupted trace files (v6, v7 uncompressed, v7 zstd) never
# crash, hang or trip the sanitizers: each either reads (exit 0) or fails with
# exit 2 and a message naming the file.  The hostile cases found by an audit
# (a self-pointing options section, BUFFER option id 0xffff, a CPU count of
# 0, options pointers of 0) and special files (a FIFO, a device, a
# directory) are each refused at once with exit 2.
set -u
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
command -v trace-cmd >/dev/null || ta_skip "trace-cmd not installed (scripts/deps.sh)"
mkdir "$WORK/bad"
for v in "6:--file-version 6" "7:--compression none" "7z:"; do
	name=${v%%:*}; args=${v#*:}
	# Retried: trace-cmd fails when /proc/kallsyms changes while it copies it.
	for try in 1 2 3; do
		# shellcheck disable=SC2086
		trace-cmd record -d --no-filter -C mono $args -e kvm_hv -o "$WORK/ok$name.dat" \
			sh -c "sleep 0.2; '$FAKEHV' run overlap-share 20" >"$WORK/rec.log" 2>&1
		[ -s "$WORK/ok$name.dat" ] && break
	done
	[ -s "$WORK/ok$name.dat" ] || { cat "$WORK/rec.log"; ta_fail "no recording"; }
	"$TA" exits "$WORK/ok$name.dat" >/dev/null || ta_fail "the intact v$name file must read"
	python3 "$TA_TOP/tests/helpers/corrupt.py" "$WORK/ok$name.dat" "$WORK/bad" 30
done
refuse() { # FILE MESSAGE-PATTERN
	timeout 20 "$TA" exits "$1" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	[ $rc -eq 2 ] || ta_fail "$1: exit $rc, want 2 ($(cat "$WORK/err" "$WORK/out" | head -3))"
	grep -q -- "$2" "$WORK/err" || ta_fail "$1: message '$(cat "$WORK/err")' lacks '$2'"
}
for z in 7 7z; do
	for case in selfloop:"points back" buffer-id:"0xffff" cpucount0:"CPU count of 0" \
		    header-ptr0:"pointer is 0" next-ptr0:"no BUFFER option"; do
		python3 "$TA_TOP/tests/helpers/v7patch.py" "$WORK/ok$z.dat" "$WORK/h.dat" "${case%%:*}" \
			|| ta_fail "v7patch ${case%%:*}"
		refuse "$WORK/h.dat" "${case#*:}"
	done
done
mkfifo "$WORK/fifo"
refuse "$WORK/fifo" "not a regular file"
refuse /dev/null "not a regular file"
refuse "$WORK" "not a regular file"
echo "ok: hostile v7 files and special files refused"

# Sanitizer reports must not look like our own exit codes.
export ASAN_OPTIONS=exitcode=99:detect_leaks=1 LSAN_OPTIONS="$LSAN_OPTIONS:exitcode=97" UBSAN_OPTIONS=halt_on_error=1:exitcode=98
ok=0 rejected=0
for f in "$WORK"/bad/*; do
	timeout 60 "$TA" exits "$f" >/dev/null 2>"$WORK/err"
	rc=$?
	case $rc in
	0) ok=$((ok + 1)) ;;
	2)
		rejected=$((rejected + 1))
		grep -q "$f" "$WORK/err" || ta_fail "$f: message does not name the file: $(cat "$WORK/err")"
		;;
	*)
		cat "$WORK/err"
		cp "$f" /tmp/topoadvisor-corrupt-failure.dat
		ta_fail "$f: exit $rc (crash, hang or sanitizer report); kept as /tmp/topoadvisor-corrupt-failure.dat"
		;;
	esac
done
[ $rejected -gt 0 ] || ta_fail "no damaged file was rejected"
echo "damaged files: $ok still readable, $rejected rejected with a message"
