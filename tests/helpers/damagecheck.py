#!/usr/bin/env python3
"""Checks `exits --json` on a damaged copy against the whole recording's.

usage: damagecheck.py WHOLE.json DAMAGED.json NAME WHAT FEWER
The damaged copy's counts must be flagged as lower bounds, its damage must
name WHAT, and it must hold exactly FEWER events less than the whole one.
"""
import json
import sys

whole, got = (json.load(open(f)) for f in sys.argv[1:3])
name, what, fewer = sys.argv[3], sys.argv[4], int(sys.argv[5])
problems = []
if not got["counts_are_lower_bounds"]:
    problems.append("counts not flagged as lower bounds")
if what not in (got["damage"] or ""):
    problems.append("damage %r does not name %r" % (got["damage"], what))
if got["events"] != whole["events"] - fewer:
    problems.append("%d events where the whole recording has %d (want %d fewer)" % (
        got["events"], whole["events"], fewer))
if problems:
    sys.exit("%s: %s" % (name, "; ".join(problems)))
