#!/usr/bin/env python3
"""Writes damaged copies of a trace file: truncations and byte flips.

usage: corrupt.py SRC OUTDIR [FLIPS]   (deterministic: seeded by the file size)
The flips favour the header, the options and the last pages, where the
reader's structures live.
"""
import os
import random
import sys

src, outdir = sys.argv[1], sys.argv[2]
flips = int(sys.argv[3]) if len(sys.argv) > 3 else 40
data = open(src, "rb").read()
n = len(data)
rng = random.Random(n)
base = os.path.basename(src)

cuts = sorted({0, 3, 10, 17, 31, 64, 200, 1000, 5000, n // 3, n // 2, n - 8192, n - 4097,
               n - 4096, n - 1000, n - 100, n - 17, n - 1})
for c in cuts:
    if 0 <= c < n:
        open(os.path.join(outdir, "%s.cut%d" % (base, c)), "wb").write(data[:c])

regions = [(0, min(n, 1024)), (max(0, n - 8192), n), (0, n)]
for i in range(flips):
    b = bytearray(data)
    lo, hi = regions[i % len(regions)]
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(lo, hi)
        b[pos] = rng.choice([0x00, 0xff, 0x7f, 0x80, b[pos] ^ (1 << rng.randrange(8))])
    open(os.path.join(outdir, "%s.flip%d" % (base, i)), "wb").write(bytes(b))
