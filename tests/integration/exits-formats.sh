#!/bin/sh
# Offline: the same emulated kvm_hv sequences recorded by trace-cmd as
# version 6, version 7 uncompressed, version 7 zstd (the default), into a
# named -B buffer (v7 and v6) and by `trace-cmd extract` of an instance all
# give exactly the known answers, with both gang rules; unknown buffers and
# missing files fail with exit 2.
set -u
. "$TA_TOP/tests/helpers/kvmhv-lib.sh"
command -v trace-cmd >/dev/null || ta_skip "trace-cmd not installed (scripts/deps.sh)"
R=20
BUF=ta-test-$$
ta_track_instance $BUF

# The scenarios run as three processes (told apart by their signatures below).
cat >"$WORK/workload" <<WL
#!/bin/sh
sleep 0.2	# trace-cmd may enable the events only after starting the command
"$FAKEHV" run overlap-share $R && "$FAKEHV" run bailout $R && "$FAKEHV" run reasons 5
WL
chmod +x "$WORK/workload"

# record FILE ARGS...: trace-cmd record exits 1 here (function-tracer files are
# EPERM) but with -d --no-filter the file is complete.
# It can also fail outright when /proc/kallsyms changes while it copies it
# (modules or BPF programs loading elsewhere on the host): retry.
record() {
	out=$1; shift
	for try in 1 2 3; do
		rm -f "$out"
		trace-cmd record -d --no-filter -C mono "$@" -o "$out" "$WORK/workload" \
			>"$WORK/rec.log" 2>&1
		[ -s "$out" ] && return
		grep -q "kallsyms" "$WORK/rec.log" || break
	done
	cat "$WORK/rec.log"; ta_fail "trace-cmd wrote no $out"
}

check() { # FILE ALGO [EXTRA ARGS]
	f=$1; algo=$2; shift 2
	"$TA" --json exits --algorithm "$algo" "$@" "$f" >"$WORK/out.json" 2>"$WORK/err" \
		|| { cat "$WORK/err"; ta_fail "exits $f failed"; }
	if [ "$algo" = vcore ]; then share=$R; bail=$R; else share=0; bail=$((2 * R - 1)); fi
	ta_json_check "$WORK/out.json" "
assert j['lost_events'] == 0 and j['lost_events_exact'], 'losses'
assert j['applicable'] is True and j['events'] == 8*$R + 3*$R + 5*35, j['events']
share = proc(lambda p: p['cedes'] == $R and p['bailouts'] == 0)
assert (share['gang_exits'], share['core_runs']) == ($share, 2*$R), share
bail = proc(lambda p: p['bailouts'] > 0)
assert (bail['bailouts'], bail['gang_exits']) == ($R, $bail), bail
rs = proc(lambda p: p['guest_exits'] == 33*5)
assert rs['gang_exits'] == 0 and rs['comm'] == 'fakehv', rs
r = reasons(); assert r['H_DATA_STORAGE'] == 4*$R + 5 and r['0x1234'] == 5, r
"
}

record "$WORK/v6.dat" --file-version 6 -e kvm_hv
record "$WORK/v7.dat" --compression none -e kvm_hv
record "$WORK/v7z.dat" -e kvm_hv
record "$WORK/v7b.dat" -B $BUF -e kvm_hv
rmdir $TRACEFS/instances/$BUF 2>/dev/null
record "$WORK/v6b.dat" --file-version 6 -B $BUF -e kvm_hv
rmdir $TRACEFS/instances/$BUF 2>/dev/null

# trace-cmd extract from an instance we fill ourselves (trace-cmd start fails
# here like record does; extract works).
mkdir $TRACEFS/instances/$BUF || ta_fail "cannot create instance $BUF"
echo mono >$TRACEFS/instances/$BUF/trace_clock
echo 1 >$TRACEFS/instances/$BUF/events/kvm_hv/enable
"$WORK/workload"
echo 0 >$TRACEFS/instances/$BUF/tracing_on
trace-cmd extract -B $BUF -o "$WORK/ext.dat" >"$WORK/rec.log" 2>&1 \
	|| { cat "$WORK/rec.log"; ta_fail "trace-cmd extract failed"; }
[ -d $TRACEFS/instances/$BUF ] && rmdir $TRACEFS/instances/$BUF

for fmt in v6 v7 v7z v7b v6b ext; do
	for a in vcore seed; do
		check "$WORK/$fmt.dat" $a
	done
	echo "ok: $fmt"
done
check "$WORK/v7b.dat" vcore -B $BUF
"$TA" --json exits -B top "$WORK/v7b.dat" >"$WORK/top.json" || ta_fail "-B top failed"
ta_json_check "$WORK/top.json" "assert j['events'] == 0 and j['applicable'] is False, j['events']"
"$TA" exits -B nosuch "$WORK/v7b.dat" >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] || ta_fail "an unknown buffer should exit 2"
grep -q "has no buffer 'nosuch'" "$WORK/err" || ta_fail "unknown buffer message: $(cat "$WORK/err")"
"$TA" exits "$WORK/missing.dat" >/dev/null 2>&1; [ $? -eq 2 ] || ta_fail "a missing file should exit 2"

# Text report: one line per process, rates, reasons.
"$TA" exits "$WORK/v7z.dat" >"$WORK/text" || ta_fail "text report failed"
grep -q "GANG/S" "$WORK/text" && grep -q "H_DATA_STORAGE" "$WORK/text" || ta_fail "$(cat "$WORK/text")"
echo "all trace-cmd formats passed"
