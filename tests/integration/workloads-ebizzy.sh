#!/bin/sh
# ebizzy inside a real TCG guest, as in the seed's setups 1a/1b: a 4-vCPU
# guest runs ebizzy pinned to vCPUs 0-1 (benchmark.vcpus) while the other
# two vCPUs are idle or busy with an in-guest spin loop (noise.vcpus), all
# in one reused guest.  Checks: the guest's ebizzy (the image's stand-in)
# prints ebizzy 0.3's lines and the ebizzy parser reads them; the spin
# loops run on vCPUs 2-3 only and measurably slow ebizzy down; after a spin
# run the same guest's vCPUs 2-3 are idle again (the loads were stopped);
# `plan` and the sweep boot one guest for the whole sweep; `ping -f` runs
# in the guest (iputils', not busybox's applet).
. "$TA_TOP/tests/lib.sh"
guest_sweep_setup taebizzytest-

cat >"$tmp/ebizzy.yaml" <<YAML
name: ebizzy-in-guest
libvirt: {name_prefix: $prefix, memory_mib: 384}
guest: {runner: agent, boot_timeout: 180, reuse: true, reuse_runs: 2}
topology: [1x4x1]
noise:
  - none
  - {kind: spin, vcpus: "2-3"}
  - {kind: command, name: ping-f, vcpus: "2-3", argv: [ping, -f, -q, 127.0.0.1]}
benchmark:
  kind: ebizzy
  vcpus: "0-1"
  argv: [ebizzy, -t, "2", -S, "3", -s, "131072"]
  duration: 3
collect: {gang_exits: false, exit_reasons: false, vcpu_stats: true}
repetitions: 2
order: randomized
seed: 11
YAML
ta plan "$tmp/ebizzy.yaml" >"$tmp/plan" || fail "plan: $(cat "$tmp/plan")"
grep -q "^Guest boots: 1 for 6 guest runs" "$tmp/plan" || fail "plan: $(grep -i boots "$tmp/plan")"
start=$(date +%s)
ta -q run "$tmp/ebizzy.yaml" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "run exited $?"; }
echo "sweep: $(( $(date +%s) - start )) s for 6 runs"
[ "$(q "SELECT COUNT(*) FROM runs WHERE status = 'ok'")" = 6 ] ||
	fail "runs: $(q "SELECT status, error FROM runs")"
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'boot_seconds'")" = 1 ] ||
	fail "guest.reuse booted $(q "SELECT COUNT(*) FROM metrics WHERE name = 'boot_seconds'") guests for one shape"
[ "$(ours)" = 0 ] || fail "the reused guest was left behind"

# The guest's ebizzy printed ebizzy 0.3's four result lines, read by the ebizzy parser.
q "SELECT CAST(content AS TEXT) FROM artifacts WHERE name = 'benchmark.stdout' LIMIT 1" >"$tmp/ebizzy.out"
grep -Eq '^[0-9]+ records/s$' "$tmp/ebizzy.out" || fail "no records/s line: $(cat "$tmp/ebizzy.out")"
[ "$(grep -Ec '^(real|user|sys ) ( [0-9]|[0-9]{2,})\.[0-9]{2} s$' "$tmp/ebizzy.out")" = 3 ] ||
	fail "not ebizzy 0.3's time lines: $(cat "$tmp/ebizzy.out")"
[ "$(q "SELECT COUNT(*) FROM metrics WHERE name = 'records_per_s' AND value > 0
	AND unit = 'records/s' AND direction = 'higher'")" = 6 ] || fail "records_per_s rows"

# Per noise load: mean ebizzy rate, and the run time of vCPUs 0-1 and 2-3 in the window.
m() { echo "(SELECT value FROM metrics WHERE run_id = r.id AND name = '$1')"; }
per_noise() { # noise -> "rate|vcpu0-1 s|vcpu2-3 s"
	q "SELECT AVG($(m records_per_s)), AVG($(m vcpu0.run_s) + $(m vcpu1.run_s)),
	   AVG($(m vcpu2.run_s) + $(m vcpu3.run_s)) FROM runs r
	   JOIN configurations c ON c.id = r.configuration_id WHERE c.noise = '$1' AND r.status = 'ok'"
}
IFS='|' read -r rate_none low_none high_none <<EOT
$(per_noise none)
EOT
IFS='|' read -r rate_spin low_spin high_spin <<EOT
$(per_noise spin)
EOT
IFS='|' read -r rate_ping_f low_ping_f high_ping_f <<EOT
$(per_noise ping-f)
EOT
echo "ebizzy records/s: alone $rate_none, spin on vCPUs 2-3 $rate_spin, ping -f $rate_ping_f"
echo "vCPU 0-1 / 2-3 run s: alone $low_none / $high_none, spin $low_spin / $high_spin, ping -f $low_ping_f / $high_ping_f"
# The loads ran on vCPUs 2-3: busy with them, nearly idle without (the stopped
# spin of an earlier run in this same guest would keep them busy).
awk -v a="$high_none" -v b="$high_spin" 'BEGIN { exit !(b > 2.5 * a) }' ||
	fail "spin did not load vCPUs 2-3 (${high_spin} s) against idle (${high_none} s)"
awk -v a="$high_none" -v b="$high_ping_f" 'BEGIN { exit !(b > 1.5 * a) }' ||
	fail "ping -f did not load vCPUs 2-3 (${high_ping_f} s) against idle (${high_none} s)"
awk -v a="$high_none" -v l="$low_none" 'BEGIN { exit !(a < 0.5 * l) }' ||
	fail "vCPUs 2-3 were busy without noise ($high_none s, ebizzy's $low_none s): a load survived"
# Two busy vCPUs take host CPU time from ebizzy's two on this 2-CPU host.
awk -v a="$rate_none" -v b="$rate_spin" 'BEGIN { exit !(b < 0.9 * a) }' ||
	fail "spin inside the guest did not slow ebizzy: $rate_spin vs $rate_none records/s"
pass
