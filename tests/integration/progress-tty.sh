#!/bin/sh
# The progress a sweep shows on a terminal (a pty through script(1)) and off
# one: a raced host-runner sweep on a fake sysfs root, 2 decisions x 2
# blocks of a 2-second benchmark.  On the terminal the status line ticks
# while a run goes on ("run 0:01" before the run's 2 s are up), and every
# message — here the race's stop — starts a line of its own, never glued to
# the status line ("ETA ?race: ..."); the stop names the decisions left.
# Off a terminal every run start is one line, no carriage returns.
. "$TA_TOP/tests/lib.sh"
host_sweep_setup
command -v script >/dev/null || skip "script(1) (bsdutils) is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

cat >"$tmp/race.yaml" <<YAML
name: progress
guest: {runner: host}
topology: 1x1x1
host: {subcores_per_core: [1, 4]}
benchmark:
  kind: command
  argv: ["$TA_TOP/tests/helpers/fake-bench", "100", "2", "knob", "$knob", "$tmp/count", "1"]
  parse: 'throughput: (?<ops>[0-9.]+) ops/s'
  metric: ops
  timeout: 90
collect: {gang_exits: false, exit_reasons: false}
repetitions: 4
strategy: race
race: {first_test: 2}
seed: 3
baseline: {subcores_per_core: 1}
YAML

# On a terminal.  script -c runs the command through $SHELL: keep it sh.
SHELL=/bin/sh script -qfec "'$TOPOADVISOR' --db '$db' run --root '$root' '$tmp/race.yaml'" \
	/dev/null >"$tmp/tty" 2>&1 </dev/null || { cat "$tmp/tty"; fail "run on a pty failed"; }
# What the terminal shows once the sweep is over: \r returns, ESC[K erases.
python3 - "$tmp/tty" >"$tmp/screen" <<'PY' || fail "screen emulation"
import sys
raw = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace')
lines, line, col, i = [], [], 0, 0
while i < len(raw):
    c = raw[i]
    if c == '\r':
        col = 0
    elif raw.startswith('\033[K', i):
        del line[col:]
        i += 2
    elif c == '\n':
        lines.append(''.join(line)); line, col = [], 0
    else:
        if col < len(line):
            line[col] = c
        else:
            line.append(c)
        col += 1
    i += 1
if line:
    lines.append(''.join(line))
print('\n'.join(lines))
PY
grep -q "^race: stopped after block 2: decided (2 decisions left: 1x1x1/pin=none/subcores_per_core=1, 1x1x1/pin=none/subcores_per_core=4)$" "$tmp/screen" ||
	fail "the race's stop is not a line of its own naming what is left: $(cat "$tmp/screen")"
# Nothing is left glued to a status line: the screen keeps none of them.
! grep -n "ETA" "$tmp/screen" || fail "a status line stayed on the screen (glued)"
# The status line was live: redrawn with the run's time while it ran.
grep -aq "run 0:0[1-9] (benchmark timeout 1:30)" "$tmp/tty" ||
	fail "no live run time on the terminal: $(tr '\r' '\n' <"$tmp/tty" | head -20)"
grep -q "^experiment 1: 4 runs this time: 4 ok, 0 failed$" "$tmp/screen" ||
	fail "summary: $(cat "$tmp/screen")"

# Off a terminal: one line per run start, plain.
echo 1 >"$knob"
rm -f "$tmp/count"
ta run --root "$root" "$tmp/race.yaml" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "run"; }
! grep -q "$(printf '\r')" "$tmp/err" || fail "carriage returns off a terminal"
[ "$(grep -c '^\[[1-4]/8\] 1x1x1/pin=none/subcores_per_core=[14]/noise=none repetition [12] (elapsed [0-9]*:[0-9][0-9], ETA [0-9?:]*)$' "$tmp/err")" = 4 ] ||
	fail "run lines off a terminal: $(cat "$tmp/err")"
grep -q "^race: stopped after block 2: decided (2 decisions left: " "$tmp/err" ||
	fail "race stop off a terminal: $(cat "$tmp/err")"
pass
