#!/usr/bin/env python3
"""Judges `topoadvisor exits` on the mutants of a recording (mutants.py).

usage: mutjudge.py TOPOADVISOR SRC MUTDIR

Each mutant must be refused (exit 2, the message naming the file), or read
with its counts flagged as lower bounds (counts_are_lower_bounds), or read
with exactly the counts of SRC: events, every process's counts and every
exit reason (process names are not counts: an option id changed into
another valid one can lose the saved command lines).  One exception, said
in the summary: a mutant that only moved a page's timestamp earlier may
order events differently, and so attribute them differently, as long as
it loses none (same events, same exit reasons): nothing in a recording can
tell a first page's start time from another.  Anything else fails: fewer
(or other) counts without a word, a crash, a sanitizer report, a hang.
Prints one line per failure and a summary; exits 1 on a failure.
"""
import json
import subprocess
import sys

ta, src, mutdir = sys.argv[1:4]


def run(path):
    try:
        p = subprocess.run([ta, "--json", "exits", path], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout", None, ""
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        return p.returncode, None, err
    return 0, json.loads(p.stdout), err


def counts(j):
    procs = [{k: v for k, v in p.items() if k != "comm"} for p in j["processes"]]
    return (j["events"], json.dumps(j["exit_reasons"], sort_keys=True),
            json.dumps(procs, sort_keys=True))


rc, orig, err = run(src)
if rc != 0:
    sys.exit("%s does not read: %s" % (src, err))
want = counts(orig)
exact = flagged = refused = reordered = 0
failures = []
for line in open("%s/index" % mutdir):
    name, desc = line.rstrip("\n").split(" ", 1)
    path = "%s/%s" % (mutdir, name)
    rc, j, err = run(path)
    if rc == 2 and path in err:
        refused += 1
    elif rc == 0 and j["counts_are_lower_bounds"]:
        flagged += 1
    elif rc == 0 and counts(j) == want:
        exact += 1
    elif rc == 0 and ".ts=" in desc and counts(j)[:2] == want[:2]:
        reordered += 1
    elif rc == 0:
        failures.append("%s (%s): %d events, not flagged (the original has %d)%s" % (
            name, desc, j["events"], orig["events"],
            "" if j["events"] != orig["events"] else ", other counts"))
    else:
        failures.append("%s (%s): exit %s: %s" % (name, desc, rc, err.strip()[:300]))
for f in failures:
    print("  " + f)
print("%s: %d mutants: %d exact, %d reordered by a moved timestamp, %d flagged as lower "
      "bounds, %d refused, %d wrong" % (
          src.rsplit("/", 1)[-1], exact + reordered + flagged + refused + len(failures), exact,
          reordered, flagged, refused, len(failures)))
sys.exit(1 if failures else 0)
