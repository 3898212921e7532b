#!/bin/sh
# The demo's study (configs/ebizzy-tcg.yaml, what `make demo` runs) end to
# end in real TCG guests, kept short (at most 3 blocks, first test after
# block 2): it plans, runs, races and ranks; the pinning the study is about
# really holds (the kernel's affinity of every vCPU thread of its guests, read
# back while they run); no decision that ranks best at the end was
# eliminated; recommend gives the XML with one of the study's two pinnings.
# Whether `split` wins is not asserted: on a host loaded by others a 3-block
# race can end undecided.
. "$TA_TOP/tests/lib.sh"
guest_sweep_setup tademotest-

sed -e "s/^libvirt:$/libvirt:\n  name_prefix: $prefix/" \
    -e 's/^repetitions: 6 /repetitions: 3 /' \
    -e 's/^race: {first_test: 3}$/race: {first_test: 2}/' \
    "$TA_TOP/configs/ebizzy-tcg.yaml" >"$tmp/demo.yaml"
grep -q "name_prefix: $prefix" "$tmp/demo.yaml" && grep -q '^repetitions: 3 ' "$tmp/demo.yaml" &&
	grep -q '^race: {first_test: 2}$' "$tmp/demo.yaml" ||
	fail "could not derive the short study from configs/ebizzy-tcg.yaml"

# One guest per block on a host of one NUMA node (each run's pinning
# applied live), else one per pinning and block.
boots=6
[ "$(cat /sys/devices/system/node/online 2>/dev/null)" = 0 ] && boots=3
ta plan "$tmp/demo.yaml" >"$tmp/plan" || fail "plan: $(cat "$tmp/plan")"
grep -q "^Configurations (6):" "$tmp/plan" && grep -q "race: at most 18 runs" "$tmp/plan" &&
	grep -q "Guest boots: $boots for 18 guest runs" "$tmp/plan" || { cat "$tmp/plan"; fail "plan of the demo's study"; }

# Runs topoadvisor ARGS in the background and, while it runs, appends the
# host CPUs each vCPU of our guests may run on to $tmp/pins as "RUN DOMAIN
# VCPU CPUS", RUN being the run that was running before and after the look
# (virsh vcpuinfo reads the vCPU threads' affinity from the kernel).
# Returns its exit status.
run_watched() {
	: >>"$tmp/pins"
	"$TOPOADVISOR" --db "$db" -q "$@" >/dev/null 2>"$tmp/err" &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		r=$(q "SELECT id FROM runs WHERE status = 'running'" 2>/dev/null)
		for d in $(virsh -q -c qemu:///system list --name 2>/dev/null | grep "^$prefix"); do
			virsh -c qemu:///system vcpuinfo "$d" --pretty 2>/dev/null |
				awk -v r="$r" -v d="$d" '/^VCPU:/ { v = $2 } /^CPU Affinity:/ { print r, d, v, $3 }'
		done >"$tmp/pins.now"
		[ -n "$r" ] && [ "$(q "SELECT id FROM runs WHERE status = 'running'" 2>/dev/null)" = "$r" ] &&
			cat "$tmp/pins.now" >>"$tmp/pins"
		sleep 0.5
	done
	wait $pid
}

# A TCG guest that fails to boot on a loaded host fails its run (exit 1);
# resume runs failed runs again, so give it two more tries.
run_watched run "$tmp/demo.yaml"
rc=$?
tries=0
while [ $rc -ne 0 ]; do
	[ $rc -eq 1 ] && [ $tries -lt 2 ] || { cat "$tmp/err"; fail "run/resume exited $rc"; }
	tries=$((tries + 1))
	run_watched resume 1
	rc=$?
done
[ "$(q "SELECT status FROM experiments WHERE id = 1")" = done ] || fail "experiment not done"
[ "$(ours)" = 0 ] || fail "domains left after the study"
[ "$(q "SELECT blocks_evaluated >= 2 AND stop_reason IS NOT NULL FROM races")" = 1 ] ||
	fail "the race did not end: $(q "SELECT * FROM races")"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status <> 'ok' AND configuration_id NOT IN
	(SELECT configuration_id FROM eliminations)")" = 0 ] ||
	fail "runs left: $(q "SELECT status, error FROM runs WHERE status <> 'ok'")"
[ "$(q "SELECT COUNT(*) FROM runs WHERE repetition < 2 AND status = 'ok'")" = 12 ] ||
	fail "the first two blocks: $(q "SELECT repetition, status, COUNT(*) FROM runs GROUP BY 1, 2")"

# Every run has its per-vCPU run and wait times (collect.vcpu_stats).
[ "$(q "SELECT COUNT(DISTINCT r.id) FROM runs r JOIN metrics m ON m.run_id = r.id
	WHERE r.status = 'ok' AND m.name = 'vcpu3.run_s'")" = \
	"$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" ] ||
	fail "a run lacks its per-vCPU run times (collect.vcpu_stats)"

# The pinning holds: the last affinity seen during each run of each vCPU of
# the run's own guest (named by the domain XML its boot run stored; on this
# host of one NUMA node one guest serves both pinnings of a block, its pins
# applied live before each run measures) is the run's pinning; runs of both
# pinnings were seen.
awk '{ last[$1 " " $2 " " $3] = $4 } END { for (k in last) print k, last[k] }' "$tmp/pins" |
	sort >"$tmp/pins.last"
seen="" n=0
while read -r r d v cpus; do
	pin=$(q "SELECT json_extract(c.factors, '\$.pinning') || ' ' ||
		json_extract(c.factors, '\$.pinning_cpus[$v]') FROM runs r
		JOIN configurations c ON c.id = r.configuration_id JOIN artifacts a ON a.run_id = r.boot
		WHERE r.id = $r AND r.status = 'ok' AND a.name = 'domain.xml'
		AND instr(CAST(a.content AS TEXT), '<name>$d</name>') > 0")
	[ -n "$pin" ] || continue	# another run's guest (suspended), or a failed run
	[ "${pin#* }" = "$cpus" ] ||
		fail "run $r in guest $d (pinning ${pin% *}): vCPU $v may run on host CPUs $cpus, not ${pin#* }"
	seen="$seen ${pin% *}" n=$((n + 1))
done <"$tmp/pins.last"
[ $n -ge 8 ] || fail "only $n vCPUs of runs in their guests were seen: $(cat "$tmp/pins.last")"
for p in one-cpu split; do
	case "$seen" in *" $p"*) ;; *) fail "no guest with pinning $p was seen: $(cat "$tmp/pins.last")" ;; esac
done

# Rank and recommend read the race; the best decision was never eliminated.
ta rank 1 >"$tmp/rank" || fail "rank of the demo's study"
ta --json rank 1 >"$tmp/rank.json" || fail "rank --json"
best=$(python3 -c 'import json, sys
print("\n".join(d["key"] for d in json.load(open(sys.argv[1]))["decisions"] if d.get("best")))' \
	"$tmp/rank.json") || fail "rank --json unreadable"
[ -n "$best" ] || fail "rank names no best decision"
for d in $best; do
	[ "$(q "SELECT COUNT(*) FROM eliminations e JOIN configurations c ON c.id = e.configuration_id
		WHERE c.key LIKE '$d/%'")" = 0 ] || fail "the best decision $d was eliminated in the race"
done
# Whichever it recommends (the race may end undecided on a loaded host: then
# the baseline), its XML pins the four vCPUs as one of the study's pinnings.
ta recommend 1 >"$tmp/rec" || fail "recommend of the demo's study"
pins=$(sed -n "s/^ *<vcpupin vcpu='\([0-9]\)' cpuset='\([^']*\)'\/>$/\1:\2/p" "$tmp/rec" | tr '\n' ' ')
case "$pins" in
"0:0 1:0 2:0 3:0 " | "0:0 1:0 2:1 3:1 ") ;;
*) cat "$tmp/rec"; fail "recommend's vcpupins are neither one-cpu's nor split's: $pins" ;;
esac
cat "$tmp/rec"
echo "race: $(q "SELECT stop_reason, stopped_after FROM races"), $(q "SELECT COUNT(*) FROM runs") runs"
pass
