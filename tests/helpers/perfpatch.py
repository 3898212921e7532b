#!/usr/bin/env python3
"""Writes one damaged (or reordered) variant of a perf.data file (file mode, either byte order).

usage: perfpatch.py SRC OUT CASE
  data-beyond     the data section's size runs past the end of the file
  attr-size0      the header's attribute size is 0
  record-size0    the first record's size is 0 (a reader must not loop)
  no-tracing      the feature bits lack HEADER_TRACING_DATA
  raw-huge        the first sample's raw size is 0xfffffff0
  ids-beyond      the first attribute's id list lies past the end of the file
  compressed      the first record becomes PERF_RECORD_COMPRESSED (perf record -z)
  callchain-huge  samples claim CALLCHAIN and a 2^60-entry chain follows the time
  raw-short-mid   the raw size of the middle sample of those that follow a
                  sample (inside a stretch of samples: the first pass's lanes)
                  is one byte short of what its record holds
  type-mid        that sample's raw record names tracepoint ID 0xfffe, which
                  no attribute records
  halves-swapped  not damaged: the longest stretch of samples has its two halves
                  swapped, split where time moves on (so no tie is reordered):
                  the same events, no longer in time order in the file; prints
                  the number of time-ordered runs of samples before and after
"""
import struct
import sys

src, out, case = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
E = "<" if d[:8] == b"PERFILE2" else ">"
attr_size = struct.unpack_from(E + "Q", d, 16)[0]
attrs_off, attrs_size, data_off, data_size = struct.unpack_from(E + "QQQQ", d, 24)


def records():
    pos = data_off
    while pos < data_off + data_size:
        rtype, _, size = struct.unpack_from(E + "IHH", d, pos)
        yield pos, rtype, size
        pos += size


first_sample = next(pos for pos, t, _ in records() if t == 9)
if case == "data-beyond":
    struct.pack_into(E + "Q", d, 48, len(d))
elif case == "attr-size0":
    struct.pack_into(E + "Q", d, 16, 0)
elif case == "record-size0":
    struct.pack_into(E + "H", d, data_off + 6, 0)
elif case == "no-tracing":
    struct.pack_into(E + "Q", d, 72, struct.unpack_from(E + "Q", d, 72)[0] & ~2)
elif case == "raw-huge":
    # IDENTIFIER IP TID TIME CPU PERIOD, then the raw size (see mkpowertrace.py)
    struct.pack_into(E + "I", d, first_sample + 8 + 6 * 8, 0xfffffff0)
elif case in ("raw-short-mid", "type-mid"):
    inner, prev = [], None
    for pos, t, _ in records():
        if t == 9 and prev == 9:
            inner.append(pos)
        prev = t
    raw_at = inner[len(inner) // 2] + 8 + 6 * 8     # as raw-huge's
    if case == "raw-short-mid":
        struct.pack_into(E + "I", d, raw_at, struct.unpack_from(E + "I", d, raw_at)[0] - 1)
    else:
        struct.pack_into(E + "H", d, raw_at + 4, 0xfffe)     # common_type leads the record
elif case == "ids-beyond":
    struct.pack_into(E + "Q", d, attrs_off + attr_size - 16, len(d) + 4096)
elif case == "compressed":
    struct.pack_into(E + "I", d, data_off, 81)
elif case == "callchain-huge":
    for i in range(attrs_size // attr_size):
        at = attrs_off + i * attr_size + 24
        struct.pack_into(E + "Q", d, at, struct.unpack_from(E + "Q", d, at)[0] | 32)
    struct.pack_into(E + "Q", d, first_sample + 8 + 4 * 8, 1 << 60)
elif case == "halves-swapped":
    st = struct.unpack_from(E + "Q", d, attrs_off + 24)[0]
    time_at = 8 + 8 * (bool(st & 0x10000) + bool(st & 1) + bool(st & 2))

    def ts(pos):
        return struct.unpack_from(E + "Q", d, pos + time_at)[0]

    def runs():
        n, last = 0, None
        for pos, t, _ in records():
            if t == 9:
                n += last is None or ts(pos) < last
                last = ts(pos)
        return n
    before = runs()
    best, cur = [], []
    for pos, t, size in records():
        if t == 9:
            cur.append((pos, size))
            if len(cur) > len(best):
                best = list(cur)
        else:
            cur = []
    k = len(best) // 2
    while 0 < k < len(best) and ts(best[k][0]) <= ts(best[k - 1][0]):
        k += 1
    assert 0 < k < len(best), "no stretch of samples to reorder"
    start, split = best[0][0], best[k][0]
    end = best[-1][0] + best[-1][1]
    d[start:end] = d[split:end] + d[start:split]
    print(before, runs())
else:
    sys.exit("unknown case " + case)
open(out, "wb").write(bytes(d))
