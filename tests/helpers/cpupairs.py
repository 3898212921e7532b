#!/usr/bin/env python3
"""Interleaved CPU-time pairs, for `make bench` (scripts/bench.sh).

usage: cpupairs.py CPUTIME N NAME OP TARGET -- CMD_OURS... [-- CMD_PEER...]

Runs the two commands alternately N times each (ours first), each through
tests/helpers/cputime (user + sys of the command and its children), so the
host's drift hits both alike, and prints the CPU seconds of each
(min/median/max) and the ratio peer / ours of every pair (min/median/max)
next to the target:
    NAME: ours 0.0612/0.0654/0.0701 s, peer 3.81/3.95/4.20 s CPU (min/median/max
          of 3): ratio 54.1x (51.2-60.3x), target >= 50x: met
OP is ">=" (peer / ours at least TARGET, "the peer" being the slower one)
or "<=" (ours / peer at most TARGET: a floor, "the peer" being the floor);
"info" prints the figures without judging them.  With one command, OP and
TARGET apply to its median CPU seconds.
A command that fails stops the run (exit 1).  Exit status 0 when the
median ratio meets the target, 3 when it misses it.  Writes the last
stdout of ours to $CPUPAIRS_OUT when set.
"""
import os
import statistics
import subprocess
import sys

cputime, n, name, op, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], \
    float(sys.argv[5])
rest = sys.argv[6:]
assert rest[0] == "--", "usage: ... -- CMD_OURS... [-- CMD_PEER...]"
split = rest.index("--", 1) if "--" in rest[1:] else len(rest)
cmds = (rest[1:split], rest[split + 1:])
out = os.environ.get("CPUPAIRS_OUT", "/dev/null")


def cpu(cmd):
    p = subprocess.run([cputime, out if cmd is cmds[0] else "/dev/null"] + cmd,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        sys.exit("%s: '%s' failed (exit %d)" % (name, " ".join(cmd), p.returncode))
    return float(p.stdout.split()[0])


def mmm(v):
    return "%.4f/%.4f/%.4f" % (min(v), statistics.median(v), max(v))


def judged(value):
    if op == "info":
        return "", True
    met = value >= target if op == ">=" else value <= target
    return ", target %s %g: %s" % (op, target, "met" if met else "MISSED"), met


ours, peer = [], []
for _ in range(n):
    ours.append(cpu(cmds[0]))
    if cmds[1]:
        peer.append(cpu(cmds[1]))
if not cmds[1]:
    text, met = judged(statistics.median(ours))
    print("%s: %s s CPU (min/median/max of %d)%s" % (name, mmm(ours), n, text))
    sys.exit(0 if met else 3)
ratios = [(p / o if op != "<=" else o / p) for o, p in zip(ours, peer)]
med = statistics.median(ratios)
text, met = judged(med)
print("%s: ours %s s, %s %s s CPU (min/median/max of %d): ratio %.2fx (%.2f-%.2fx)%s" % (
    name, mmm(ours), "floor" if op == "<=" else "peer", mmm(peer), n, med, min(ratios),
    max(ratios), text.replace(" %g:" % target, " %gx:" % target)))
sys.exit(0 if met else 3)
