#!/bin/sh
# Runs inside the emulated POWER8 host with two threads per core (as
# /in/run.sh, in /out) for tests/power8/study.sh: the host-runner sweep of
# docs/power-host.md's study.  vCPU 0 of kvmppc-guest spins; its sibling
# vCPU 1 in the same vcore is idle (H_CEDE), spins, or makes hypercalls to
# user space - the seed's setups 1a-1c, as the noise factor's levels: the
# run gives the program TOPOADVISOR_NOISE, which names vCPU 1's behaviour.
# Ganged exits come from the sweep's own host-wide trace, vCPU 0's progress
# (rounds of its loop per second) from the program's output.  Writes
# study.db and study.json (run's summary); REPS from /in/reps.
reps=$(cat /in/reps)
secs=$(cat /in/seconds)
export TOPOADVISOR_LOCK=/tmp/ta.lock
cat /out/modules.log
# KVM HV on POWER8 runs a vcore's threads on offline secondary threads.
for c in /sys/devices/system/cpu/cpu[1-9]*/online; do echo 0 >"$c"; done
echo "online $(cat /sys/devices/system/cpu/online)"
cat >/tmp/study.yaml <<YAML
name: power8-sibling
description: "vCPU 0 spins; vCPU 1 of the same vcore is idle, spins or makes hypercalls"
guest: {runner: host}
topology: [1x1x2]
noise:
  - {kind: none, name: idle}
  - {kind: none, name: spin}
  - {kind: none, name: hcall}
benchmark:
  kind: command
  argv: [sh, -c, 'exec /in/kvmppc-guest -s $secs spin "\$TOPOADVISOR_NOISE"']
  parse: '"vcpu": 0, "behaviour": "spin", "tid": [0-9]+, "counter": [0-9]+, "per_s": (?<progress>[0-9.]+)'
  metric: {name: progress, direction: higher, unit: rounds/s}
  duration: $secs
repetitions: $reps
baseline: {noise: idle}
YAML
/in/topoadvisor --db /out/study.db --json run /tmp/study.yaml >study.json 2>study.err
echo "run exit $?"
tail -n 5 study.err
