#!/usr/bin/env python3
"""Writes one hostile variant of a trace-cmd v7 file (little-endian, as recorded here).

usage: v7patch.py SRC OUT CASE
  selfloop     the first options section's next pointer points at itself
  buffer-id    every BUFFER option's id becomes 0xffff
  cpucount0    the CPUCOUNT option says 0 CPUs
  header-ptr0  the header's pointer to the first options section is 0
  next-ptr0    the first options section's next pointer is 0 (chain cut)
The options sections must be uncompressed (trace-cmd writes them so).
"""
import struct
import sys

src, out, case = sys.argv[1:4]
d = bytearray(open(src, "rb").read())
p = 10
p = d.index(b"\0", p) + 1 + 2 + 4           # version, endian, long size, page size
p = d.index(b"\0", p) + 1                   # compression name
p = d.index(b"\0", p) + 1                   # compression version
hdr_ptr = p
off = struct.unpack_from("<Q", d, p)[0]
first = True
while off:
    sid, flags, _, size = struct.unpack_from("<HHIQ", d, off)
    assert sid == 0 and not flags & 1, "options section not plain"
    q, end, nxt = off + 16, off + 16 + size, 0
    while q < end:
        oid, osz = struct.unpack_from("<HI", d, q)
        if oid == 0:
            nxt = struct.unpack_from("<Q", d, q + 6)[0]
            if first and case == "selfloop":
                struct.pack_into("<Q", d, q + 6, off)
            if first and case == "next-ptr0":
                struct.pack_into("<Q", d, q + 6, 0)
            break
        if oid == 3 and case == "buffer-id":
            struct.pack_into("<H", d, q, 0xffff)
        if oid == 8 and case == "cpucount0":
            struct.pack_into("<I", d, q + 6, 0)
        q += 6 + osz
    first = False
    off = nxt
if case == "header-ptr0":
    struct.pack_into("<Q", d, hdr_ptr, 0)
open(out, "wb").write(bytes(d))
