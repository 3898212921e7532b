#!/bin/sh
# Sweeps in real TCG guests: a small sweep checked run by run (shape seen by
# the guest, metrics, vCPU times, the domain XML kept), a guest that cannot
# boot (failed with the cause, no domain left), a controller killed with
# SIGKILL mid-run whose leftover guest `resume` destroys, a block's
# guests booting together, and one guest serving two pinnings (live
# pinning) until its kernel breaks.
. "$TA_TOP/tests/lib.sh"
guest_sweep_setup tasweeptest-

cat >"$tmp/sweep.yaml" <<YAML
name: guest-sweep
libvirt: {name_prefix: $prefix}
guest: {runner: agent, boot_timeout: 60, host_baseline: true}
topology: [1x2x1, 1x1x2]
benchmark:
  kind: stress-ng
  argv: [stress-ng, --cpu, "2", --cpu-method, int64, --timeout, "2s", --metrics-brief]
  duration: 2
collect: {gang_exits: false, exit_reasons: true, vcpu_stats: true}
repetitions: 1
order: sequential
YAML
exp=$(ta -q run "$tmp/sweep.yaml" 2>"$tmp/err") || { cat "$tmp/err"; fail "run exited $?"; }
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 3 ] ||
	fail "runs: $(q "SELECT status, error FROM runs")"
# The host reference ran on the host: no guest, no vCPU times, same metric.
[ "$(q "SELECT r.host_state ->> '\$.runner', c.factors ->> '\$.runner'
	FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.key LIKE 'host/%'")" = "host|host" ] ||
	fail "host reference run"
[ "$(q "SELECT COUNT(*) FROM metrics m JOIN runs r ON r.id = m.run_id JOIN configurations c
	ON c.id = r.configuration_id WHERE c.key LIKE 'host/%' AND m.name IN ('boot_seconds', 'vcpu_run_s')")" = 0 ] ||
	fail "the host reference has guest metrics"
ta rank "$exp" | grep -q "^.*host/pin=none/noise=none .*host reference" || fail "rank does not mark the host reference"
ta recommend "$exp" | grep -q "^recommended: host/" && fail "recommend picked the host reference"
# The guest saw the requested shape, and the check says so.
for shape in 1x2x1:1:2:1 1x1x2:1:1:2; do
	key=${shape%%:*}; rest=${shape#*:}
	s=${rest%%:*}; rest=${rest#*:}; c=${rest%%:*}; t=${rest#*:}
	row=$(q "SELECT r.topology_ok, r.guest_topology ->> '\$.sockets', r.guest_topology ->> '\$.cores',
		 r.guest_topology ->> '\$.threads' FROM runs r JOIN configurations c ON c.id = r.configuration_id
		 WHERE c.key LIKE '$key/%'")
	[ "$row" = "1|$s|$c|$t" ] || fail "$key: guest saw '$row', wanted 1|$s|$c|$t"
done
for m in boot_seconds vcpu_run_s vcpu0.run_s vcpu1.run_s; do
	[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = '$m' AND value > 0")" = 2 ] || fail "metric $m"
done
for m in bogo_ops_per_s benchmark_seconds; do
	[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = '$m' AND value > 0")" = 3 ] || fail "metric $m"
done
q "SELECT CAST(content AS TEXT) FROM artifacts WHERE name = 'domain.xml' LIMIT 1" >"$tmp/dom.xml"
grep -q "<topology sockets='1' dies='1' cores='2' threads='1'/>" "$tmp/dom.xml" ||
	grep -q '<topology sockets="1" dies="1" cores="2" threads="1"/>' "$tmp/dom.xml" ||
	grep -q "threads=.1" "$tmp/dom.xml" || fail "domain.xml artifact lacks the topology"
grep -q "topoadvisor.invalid/xmlns" "$tmp/dom.xml" || fail "domain.xml lacks our metadata"
[ "$(ours)" = 0 ] || fail "domains left after the sweep"

# guest.reuse: the same configuration twice in a row runs in one guest.
sed 's/, host_baseline: true//; s/guest: {runner: agent, boot_timeout: 60}/guest: {runner: agent, boot_timeout: 60, reuse: true, reuse_runs: 2}/;
     s/topology: \[1x2x1, 1x1x2\]/topology: [1x2x1]/; s/repetitions: 1/repetitions: 2/' \
	"$tmp/sweep.yaml" >"$tmp/reuse.yaml"
ta -q run "$tmp/reuse.yaml" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "reuse run exited $?"; }
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = 2 AND r.status = 'ok' AND r.topology_ok = 1")" = 2 ] || fail "reuse runs"
[ "$(q "SELECT COUNT(*) FROM metrics m JOIN runs r ON r.id = m.run_id JOIN configurations c
	ON c.id = r.configuration_id WHERE c.experiment_id = 2 AND m.name = 'boot_seconds'")" = 1 ] ||
	fail "reuse booted more than one guest"
[ "$(ours)" = 0 ] || fail "the reused guest was left behind"

# A guest that cannot boot: a kernel that is not one.
mkdir -m 0755 "$tmp/badcache" "$tmp/badcache/guest-x86_64"
head -c 65536 /dev/urandom >"$tmp/badcache/guest-x86_64/vmlinuz"
cp "$tmp/badcache/guest-x86_64/vmlinuz" "$tmp/badcache/guest-x86_64/initrd"
chmod 0644 "$tmp/badcache/guest-x86_64/"*
chmod 0755 "$tmp"
sed 's/, host_baseline: true//; s/boot_timeout: 60/boot_timeout: 10/; s/topology: \[1x2x1, 1x1x2\]/topology: [1x2x1]/' \
	"$tmp/sweep.yaml" >"$tmp/noboot.yaml"
TOPOADVISOR_CACHE=$tmp/badcache ta -q run "$tmp/noboot.yaml" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "an unbootable sweep should exit 1"
err=$(q "SELECT r.error FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = 3")
echo "$err" | grep -q "^guest: " || fail "no guest error: '$err'"
[ "$(ours)" = 0 ] || fail "the unbootable guest was left behind"

# SIGINT mid-benchmark: the benchmark is stopped in the guest, the guest
# destroyed, the run marked interrupted, exit 130 — without waiting for the
# benchmark's end; resume finishes it.
# The benchmark lasts 240 s, so a controller that waited for it instead of
# stopping it would take minutes; the 150 s bound leaves a loaded machine
# plenty of room and is not a performance assertion.
sed 's/, host_baseline: true//; s/"2s"/"240s"/; s/duration: 2/duration: 240/; s/topology: \[1x2x1, 1x1x2\]/topology: [1x2x1]/' \
	"$tmp/sweep.yaml" >"$tmp/int.yaml"
"$TOPOADVISOR" --db "$db" -q run "$tmp/int.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
i=0
until [ "$(ours)" = 1 ] && [ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'running'" 2>/dev/null)" = 1 ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "the guest never came up"; sleep 0.1
done
sleep 6
t0=$(date +%s)
kill -INT $pid
wait $pid
rc=$?
waited=$(( $(date +%s) - t0 ))
[ $rc -eq 130 ] || { cat "$tmp/err"; fail "SIGINT in a guest run: exit $rc"; }
[ $waited -lt 150 ] || fail "SIGINT waited $waited s for the 240 s benchmark instead of stopping it"
[ "$(ours)" = 0 ] || fail "the interrupted run left its guest"
exp=$(q "SELECT MAX(id) FROM experiments")
[ "$(q "SELECT r.status FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $exp")" = interrupted ] ||
	fail "the run is not marked interrupted"

# SIGKILL mid-benchmark leaves a guest running; resume destroys it and finishes.
sed 's/, host_baseline: true//; s/"2s"/"20s"/; s/duration: 2/duration: 20/; s/topology: \[1x2x1, 1x1x2\]/topology: [1x2x1]/' \
	"$tmp/sweep.yaml" >"$tmp/long.yaml"
exp=$(( $(q "SELECT MAX(id) FROM experiments") + 1 ))
"$TOPOADVISOR" --db "$db" -q run "$tmp/long.yaml" >/dev/null 2>&1 &
pid=$!
# Into the benchmark: its trace instance exists (a loaded host boots slowly).
# A TCG boot that hangs (rare; the guest's vCPUs spin, no agent) fails its
# run after boot_timeout: then resume runs it again, once.
inst=/sys/kernel/tracing/instances
i=0 tries=0
until [ "$(ls "$inst" 2>/dev/null | grep -c "^topoadvisor-$pid-")" = 1 ]; do
	if ! kill -0 $pid 2>/dev/null; then
		err=$(q "SELECT r.error FROM runs r JOIN configurations c ON c.id = r.configuration_id
			WHERE c.experiment_id = $exp")
		case "$err" in *"did not boot"*) [ $tries = 0 ] ;; *) false ;; esac ||
			fail "the run ended before it traced: $err"
		tries=1 i=0
		"$TOPOADVISOR" --db "$db" -q resume $exp >/dev/null 2>&1 &
		pid=$!
	fi
	i=$((i + 1)); [ $i -lt 1200 ] || fail "the run never started tracing"; sleep 0.1
done
sleep 2
kill -KILL $pid
wait $pid 2>/dev/null
[ "$(ours)" = 1 ] || fail "expected the killed controller's guest to be left running"
[ "$(ls "$inst" 2>/dev/null | grep -c "^topoadvisor-$pid-")" = 1 ] ||
	fail "expected the killed controller's trace instance to be left"
ta resume $exp >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "resume exited $?"; }
grep -q "destroyed 1 guest left by an earlier sweep" "$tmp/out" || fail "resume did not report the leftover: $(cat "$tmp/out")"
[ "$(q "SELECT status FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $exp")" = ok ] ||
	fail "resume did not finish the killed run"
[ "$(ours)" = 0 ] || fail "domains left after resume"
[ "$(ls "$inst" | grep -c "^topoadvisor-$pid-")" = 0 ] || fail "resume left the dead controller's trace instance"

# guest.reuse, two shapes per block: the block's second guest boots together
# with the first, so both exist while the first run measures (the second one
# suspended); it still counts as booted for its own run (runs.boot, its
# boot_seconds and domain.xml), and the sweep makes the same 4 boots.
# (Domains are counted before the runs, so a second domain seen while no
# run has ended yet existed during the first run.)
sed 's/, host_baseline: true//; s/guest: {runner: agent, boot_timeout: 60}/guest: {runner: agent, boot_timeout: 60, reuse: true}/; s/repetitions: 1/repetitions: 2/' \
	"$tmp/sweep.yaml" >"$tmp/together.yaml"
exp=$(( $(q "SELECT MAX(id) FROM experiments") + 1 ))
"$TOPOADVISOR" --db "$db" -q run "$tmp/together.yaml" >/dev/null 2>"$tmp/err" &
pid=$!
both=0
while kill -0 $pid 2>/dev/null; do
	n=$(ours)
	[ "$n" = 2 ] && [ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
		WHERE c.experiment_id = $exp AND r.status <> 'planned' AND r.status <> 'running'" 2>/dev/null)" = 0 ] &&
		both=1
	sleep 0.1
done
wait $pid || { cat "$tmp/err"; fail "the reuse sweep of two shapes exited $?"; }
[ $both = 1 ] || fail "the block's second guest did not boot during its first run"
[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
	WHERE c.experiment_id = $exp AND r.status = 'ok' AND r.boot = r.id AND r.topology_ok = 1")" = 4 ] ||
	fail "runs booted for: $(q "SELECT r.id, r.boot, r.status, r.error FROM runs r JOIN configurations c
		ON c.id = r.configuration_id WHERE c.experiment_id = $exp")"
for what in "metrics WHERE name = 'boot_seconds'" "artifacts WHERE name = 'domain.xml'"; do
	[ "$(q "SELECT COUNT(*) FROM $what AND run_id IN (SELECT r.id FROM runs r JOIN configurations c
		ON c.id = r.configuration_id WHERE c.experiment_id = $exp)")" = 4 ] || fail "not 4 of $what"
done
[ "$(ours)" = 0 ] || fail "domains left after the reuse sweep"

# Live pinning (guest.reuse on this host of one NUMA node): one guest
# serves both pinnings of its shape in a block, booted unpinned, each run's
# pins applied before it measures (compact: each vCPU to a CPU of its own,
# the emulator to all here; cpu1: the vCPUs to CPU 1, the emulator to CPU
# 0); a run in the guest booted for the other pinning stores the domain
# XML it measured in.  Then the kernel turns unbootable (during the second
# run, which boots nothing): the next block's boots fail, each run failing
# with its cause (the second one used to crash the controller on the guest
# its group's failed boot had destroyed), and nothing is left.
if [ "$(cat /sys/devices/system/node/online 2>/dev/null)" = 0 ]; then
	mkdir -m 0755 "$tmp/swapcache" "$tmp/swapcache/guest-x86_64"
	img=${TOPOADVISOR_CACHE:-/var/cache/topoadvisor}/guest-x86_64
	cp "$img/vmlinuz" "$img/initrd" "$tmp/swapcache/guest-x86_64/"
	chmod 0644 "$tmp/swapcache/guest-x86_64/"*
	sed 's/, host_baseline: true//; s/guest: {runner: agent, boot_timeout: 60}/guest: {runner: agent, boot_timeout: 60, reuse: true}/;
	     s/topology: \[1x2x1, 1x1x2\]/topology: [1x2x1]\npinning: [compact, {name: cpu1, vcpus: ["1", "1"], emulator: "0"}]/; s/repetitions: 1/repetitions: 2/' \
		"$tmp/sweep.yaml" >"$tmp/livepin.yaml"
	ta plan "$tmp/livepin.yaml" >"$tmp/plan" 2>&1 || fail "plan of the live-pinned sweep: $(cat "$tmp/plan")"
	grep -q "^Guest boots: 2 for 4 guest runs.*1 group by shape (each run's pinning applied live)" "$tmp/plan" ||
		fail "plan of the live-pinned sweep: $(cat "$tmp/plan")"
	[ "$(ta --json plan "$tmp/livepin.yaml" | python3 -c 'import json, sys; j = json.load(sys.stdin)
print(j["guest_boots"], j["live_pin"])')" = "2 True" ] || fail "plan --json of the live-pinned sweep"
	runq() { q "SELECT $1 FROM runs r JOIN configurations c ON c.id = r.configuration_id
		WHERE c.experiment_id = $exp ORDER BY r.order_index" 2>/dev/null | tr '\n' ' '; }
	# A first boot that hangs under TCG (rare) fails the first run before
	# the kernel is swapped: the sweep is then run again, once.
	tries=0
	while :; do
		exp=$(( $(q "SELECT MAX(id) FROM experiments") + 1 ))
		TOPOADVISOR_CACHE=$tmp/swapcache "$TOPOADVISOR" --db "$db" -q run "$tmp/livepin.yaml" >/dev/null 2>"$tmp/err" &
		pid=$!
		swapped=0
		while kill -0 $pid 2>/dev/null; do
			[ "$(runq r.status)" = "ok running planned planned " ] || { sleep 0.1; continue; }
			if [ $swapped = 0 ]; then
				head -c 65536 /dev/urandom >"$tmp/swapcache/guest-x86_64/vmlinuz"
				swapped=1
			fi
			# The last affinity seen while the second run still ran.
			for d in $(virsh -q -c qemu:///system list --name | grep "^$prefix"); do
				virsh -c qemu:///system vcpuinfo "$d" --pretty 2>/dev/null | awk '/^CPU Affinity:/ { print $3 }'
				virsh -c qemu:///system emulatorpin "$d" 2>/dev/null | awk '$1 == "*:" { print "emulator", $2 }'
			done >"$tmp/aff.now"
			[ "$(runq r.status)" = "ok running planned planned " ] && mv "$tmp/aff.now" "$tmp/aff"
			sleep 0.2
		done
		wait $pid
		rc=$?
		[ $swapped = 0 ] && [ $tries = 0 ] && [ $rc -eq 1 ] &&
			case "$(runq r.error)" in *"did not boot"*) true ;; *) false ;; esac || break
		tries=1
	done
	[ $rc -eq 1 ] || { cat "$tmp/err"; fail "the live-pinned sweep whose kernel broke exited $rc"; }
	[ -s "$tmp/aff" ] || fail "the second run was never seen running"
	[ "$(sort -u "$tmp/aff" | tr '\n' ' ')" = "1 emulator 0 " ] ||
		fail "the second run's vCPUs and emulator may run on: $(cat "$tmp/aff")"
	first=$(q "SELECT MIN(r.id) FROM runs r JOIN configurations c ON c.id = r.configuration_id WHERE c.experiment_id = $exp")
	[ "$(runq "c.key || ' ' || r.status || ' ' || COALESCE(r.boot = $first, 0)")" = \
		"1x2x1/pin=compact/noise=none ok 1 1x2x1/pin=cpu1/noise=none ok 1 1x2x1/pin=compact/noise=none failed 0 1x2x1/pin=cpu1/noise=none failed 0 " ] ||
		fail "live-pinned runs: $(runq "c.key, r.status, r.boot, r.error")"
	[ "$(q "SELECT COUNT(*) FROM runs r JOIN configurations c ON c.id = r.configuration_id
		WHERE c.experiment_id = $exp AND r.error LIKE 'guest: %'")" = 2 ] || fail "the failed boots: $(runq r.error)"
	q "SELECT CAST(a.content AS TEXT) FROM artifacts a JOIN runs r ON r.id = a.run_id JOIN configurations c
		ON c.id = r.configuration_id WHERE c.experiment_id = $exp AND c.key LIKE '%pin=cpu1%'
		AND a.name = 'domain.xml'" >"$tmp/pinned.xml"
	grep -q "<vcpupin vcpu=.1. cpuset=.1./>" "$tmp/pinned.xml" && grep -q "<emulatorpin cpuset=.0./>" "$tmp/pinned.xml" ||
		fail "the re-pinned run's domain.xml: $(cat "$tmp/pinned.xml")"
	[ "$(ours)" = 0 ] || fail "domains left after the live-pinned sweep"
else
	echo "sweep-guest: the live pinning case needs one NUMA node; this host has $(cat /sys/devices/system/node/online 2>/dev/null)"
fi
pass
