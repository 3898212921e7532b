#!/usr/bin/env python3
"""Mutation testing of the decision engine (decide/*.c): `make mutate`.

Every single-point mutant of the engine's C sources is built and the unit
tests that exercise the engine are run against it; a mutant is *killed*
when a test fails (or crashes, or times out), *survives* when they all
pass, and is *stillborn* (not counted) when it does not compile.  The
score is killed / (killed + survived).

Mutation operators, applied to code only (not comments, strings,
character literals or preprocessor lines), one site at a time:
  relational   <  <=  >  >=  ==  !=   each to its neighbours (< to <=, ...)
  logical      &&  ||                  swapped;  !x  to  x
  arithmetic   + -  * /               swapped (binary ones), += -= swapped
  increment    ++  --                  swapped
  constants    an integer k to k + 1 (0 to 1), a floating-point x to 2x
The mutated file is compiled and linked into each test binary ahead of
the library (build/, from `make units`), which is run (20 s timeout each, stopping at
the first failure).  Usage:

  scripts/mutate.py [--jobs N] [--files decide/engine.c,...] [--sample K]
                    [--seed S] [--list] [--recheck FILE] [--out FILE]

Mutants inside assert(...) and testcase(...) are never made: an invariant
that holds cannot be killed by a passing test, so mutating it only rewards
deleting it (SQLite keeps its asserts for the same reason).

--sample K takes a random 1/K of the mutants, drawn afresh on every run
(so tests cannot be fitted to one fixed sample); --seed S replays the
sample a run printed.  Without --sample every mutant runs.
--list prints the mutants (file:line: mutation) and builds nothing.
--files takes any C sources of the library; the unit tests run against a
file are those TESTS_FOR names for its folder or name.
--recheck FILE runs only the mutants a survivors file lists (file, line and
mutation): what new tests kill of them, without building every mutant again.
Prints the score per file and overall, and writes the survivors (file,
line, the mutation) to --out (default build-mutate/survivors.txt).
"""
import argparse
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = ["test-decide", "test-compare", "test-rank", "test-rank-pipeline", "test-stats"]
# The unit tests that exercise each mutated source: the first prefix that
# matches its path wins.
TESTS_FOR = [
    ("decide/", TESTS),
    ("collectors/gang", ["test-gang"]),
    ("experiments/plan", ["test-plan", "test-plan-estimate", "test-reuse"]),
    ("model/", ["test-config", "test-plan", "test-knobs", "test-cmd"]),
]
# Calls whose arguments are invariants, never mutated.
INVARIANT_CALLS = re.compile(r"(?<![A-Za-z0-9_])(assert|testcase|static_assert|_Static_assert)\s*\(")
IDENT = re.compile(r"[A-Za-z0-9_\])]")


def code_spans(text):
    """Yields (start, end) of the code outside comments, strings, chars and # lines."""
    i, n, start = 0, len(text), 0
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            yield start, i
            while i < n and (text[i] != "\n" or text[i - 1] == "\\"):
                i += 1
            start = i
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("/*", i):
            yield start, i
            i = text.index("*/", i) + 2
            start = i
        elif text.startswith("//", i):
            yield start, i
            i = text.index("\n", i)
            start = i
        elif c in "\"'":
            yield start, i
            i += 1
            while text[i] != c:
                i += 2 if text[i] == "\\" else 1
            i += 1
            start = i
        else:
            i += 1
    yield start, n


def invariant_spans(text):
    """(start, end) of every assert(...)-like call, parentheses matched."""
    spans = []
    for m in INVARIANT_CALLS.finditer(text):
        i, depth = m.end() - 1, 0
        while i < len(text):
            c = text[i]
            if c in "\"'":
                q, i = c, i + 1
                while i < len(text) and text[i] != q:
                    i += 2 if text[i] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        spans.append((m.start(), i + 1))
    return spans


def tests_for(path):
    for prefix, tests in TESTS_FOR:
        if path.startswith(prefix):
            return tests
    raise SystemExit(f"mutate.py: no unit tests are named for {path} (TESTS_FOR)")


def prev_char(text, i):
    j = i - 1
    while j >= 0 and text[j] in " \t\n":
        j -= 1
    return text[j] if j >= 0 else ""


SWAPS = {"<": ["<="], "<=": ["<"], ">": [">="], ">=": [">"], "==": ["!="], "!=": ["=="],
         "&&": ["||"], "||": ["&&"], "+=": ["-="], "-=": ["+="], "++": ["--"], "--": ["++"]}
TOKENS = sorted(list(SWAPS) + ["->", "<<", ">>", "+", "-", "*", "/", "!"], key=len, reverse=True)
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)(?![A-Za-z0-9_.])")


def mutants(text):
    """Yields (offset, length, replacement, description) for every mutation site."""
    skip = invariant_spans(text)
    for m in raw_mutants(text):
        if not any(s <= m[0] < e for s, e in skip):
            yield m


def raw_mutants(text):
    for start, end in code_spans(text):
        seg = text[start:end]
        i = 0
        while i < len(seg):
            for tok in TOKENS:
                if seg.startswith(tok, i):
                    break
            else:
                i += 1
                continue
            at = start + i
            if tok in SWAPS:
                for rep in SWAPS[tok]:
                    yield at, len(tok), rep, f"{tok} -> {rep}"
            elif tok in "+-" and IDENT.match(prev_char(text, at) or " "):
                yield at, 1, "-" if tok == "+" else "+", f"{tok} -> {'-' if tok == '+' else '+'}"
            elif tok in "*/" and IDENT.match(prev_char(text, at) or " "):
                rep = "/" if tok == "*" else "*"
                yield at, 1, rep, f"{tok} -> {rep}"
            elif tok == "!":
                yield at, 1, "", "!x -> x"
            i += len(tok)
        for m in NUMBER.finditer(seg):
            lit = m.group(1)
            at = start + m.start(1)
            if "." in lit or "e" in lit.lower():
                rep = repr(float(lit) * 2)
            else:
                rep = str(int(lit) + 1)
            yield at, len(lit), rep, f"{lit} -> {rep}"


def run(cmd, cwd=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, timeout=timeout, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode


def cflags():
    out = subprocess.run(["make", "-s", "-C", TOP, "print-cflags"], capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()
    # A mutant that only draws a warning still runs; dependency files are not wanted.
    drop = ("-Werror", "-MMD", "-MP", "-DTA_VERSION")
    flags = [f for f in shlex.split(out[0]) if not f.startswith(drop)]
    return flags, shlex.split(out[1])


def one(args):
    """Builds and tests one mutant; returns 'killed', 'survived' or 'stillborn'."""
    path, text, (at, length, rep, _), work, flags, libs, lib, tests, snap = args
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, os.path.basename(path))
    with open(src, "w") as f:
        f.write(text[:at] + rep + text[at + length:])
    obj = os.path.join(work, os.path.basename(path)[:-2] + ".o")
    # The headers from the snapshot: editing the tree meanwhile does not mix in.
    cc = ["cc", "-I", snap] + flags + ["-O0", "-g0", "-iquote",
                                       os.path.join(snap, os.path.dirname(path)),
                                       "-c", "-o", obj, src]
    if run(cc, cwd=TOP) != 0:
        return "stillborn"
    for t in tests_for(path):
        exe = os.path.join(work, t)
        # The mutant before the library: its symbols win, the original member stays out.
        link = ["cc", "-o", exe, tests[t], obj, lib] + libs
        if run(link, cwd=TOP) != 0:
            return "stillborn"
        try:
            # From the top, as `make check` runs them: some read configs/ by a relative path.
            if run([exe], cwd=TOP, timeout=20) != 0:
                return "killed"
        except subprocess.TimeoutExpired:
            return "killed"
    return "survived"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--files", default=",".join(sorted(
        os.path.join("decide", f) for f in os.listdir(os.path.join(TOP, "decide"))
        if f.endswith(".c"))))
    ap.add_argument("--sample", type=int, default=1)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--recheck", default=None)
    ap.add_argument("--out", default=os.path.join(TOP, "build-mutate", "survivors.txt"))
    a = ap.parse_args()
    if a.sample < 1:
        ap.error("--sample takes K >= 1 (a random 1/K of the mutants)")
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    draw = random.Random(seed)
    if a.sample > 1:
        print(f"a random 1/{a.sample} of the mutants, --seed {seed}", file=sys.stderr)
    wanted = None
    if a.recheck:
        with open(a.recheck) as f:
            wanted = {line.rstrip("\n") for line in f if line.strip()}
    jobs, where = [], []
    for path in a.files.split(","):
        if not a.list:
            tests_for(path)
        text = open(os.path.join(TOP, path)).read()
        for m in mutants(text):
            line = text.count("\n", 0, m[0]) + 1
            if wanted is not None:
                if f"{path}:{line}: {m[3]}" not in wanted:
                    continue
            elif a.sample > 1 and draw.randrange(a.sample):
                continue
            where.append((path, line, m[3]))
            jobs.append((path, text, m, None))
    if a.list:
        for path, line, what in where:
            print(f"{path}:{line}: {what}")
        return 0
    flags, libs = cflags()
    base = os.path.join(TOP, "build-mutate")
    os.makedirs(base, exist_ok=True)
    results = []
    tmp = tempfile.mkdtemp(prefix="mutate.", dir=base)
    # A snapshot of the library: rebuilding build/ meanwhile does not mix in.
    lib = os.path.join(tmp, "libtopoadvisor.a")
    shutil.copy(os.path.join(TOP, "build", "libtopoadvisor.a"), lib)
    # ... and of every header, which the mutants are compiled against.
    snap = os.path.join(tmp, "src")
    for d in ("util", "model", "schema", "decide", "experiments", "collectors", "advisor"):
        os.makedirs(os.path.join(snap, d))
        for f in os.listdir(os.path.join(TOP, d)):
            if f.endswith(".h"):
                shutil.copy(os.path.join(TOP, d, f), os.path.join(snap, d, f))
    # The tests compiled once; each mutant is only linked with them.
    tests = {}
    for t in sorted({t for path in a.files.split(",") for t in tests_for(path)}):
        tests[t] = os.path.join(tmp, t + ".o")
        subprocess.run(["cc", "-I", snap] + flags + ["-c", "-o", tests[t],
                                         os.path.join(TOP, "tests", "unit", t + ".c")],
                       cwd=TOP, check=True)
    # Each unmutated file must pass under this harness, or every mutant
    # would count as killed (a test that cannot run here kills them all).
    for path in a.files.split(","):
        text = open(os.path.join(TOP, path)).read()
        if one((path, text, (0, 0, "", "none"), os.path.join(tmp, "unmutated"), flags, libs,
                lib, tests, snap)) != "survived":
            print(f"the unmutated {path} fails the tests under this harness: no score",
                  file=sys.stderr)
            return 2
    with ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(one, j[:3] + (os.path.join(tmp, str(i % a.jobs) + "-" + str(i)),
                                        flags, libs, lib, tests, snap))
                for i, j in enumerate(jobs)]
        for i, f in enumerate(futs):
            results.append(f.result())
            shutil.rmtree(os.path.join(tmp, str(i % a.jobs) + "-" + str(i)), ignore_errors=True)
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(jobs)} mutants", file=sys.stderr, flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    per = {}
    with open(a.out, "w") as out:
        for (path, line, what), r in zip(where, results):
            k, s, b = per.get(path, (0, 0, 0))
            per[path] = (k + (r == "killed"), s + (r == "survived"), b + (r == "stillborn"))
            if r == "survived":
                out.write(f"{path}:{line}: {what}\n")
    tk = ts = 0
    for path, (k, s, b) in sorted(per.items()):
        tk, ts = tk + k, ts + s
        print(f"{path:24} {k:5} killed {s:5} survived {b:5} stillborn  "
              f"score {100 * k / max(1, k + s):5.1f} %")
    print(f"{'all':24} {tk:5} killed {ts:5} survived             "
          f"score {100 * tk / max(1, tk + ts):5.1f} %   (survivors: {a.out})")
    return 0 if tk / max(1, tk + ts) >= 0.90 else 1


if __name__ == "__main__":
    sys.exit(main())
