#!/usr/bin/env python3
"""Writes structural mutants of a recording: what damage does to the layout.

usage: mutants.py SRC OUTDIR     (deterministic: no randomness at all)

SRC is a trace-cmd trace.dat (v6, or v7 plain or zstd) or a perf.data (file
or pipe mode), little- or big-endian.  The file is parsed here, independently
of topoadvisor, into its structural fields (headers, sizes, counts, offsets,
option ids and sizes, section headers, BUFFER descriptions, zstd chunk
headers, ring-buffer page headers, perf attributes, record headers, sample
layouts) and its boundaries; each mutant changes one thing:
  cut@N         the file truncated to N bytes (every boundary, and inside
                the last page/record)
  F=V           field F set to V: 0, v-1, v+1, 2v, v/2, all ones, top bit
                flipped (page commits also: one word less, the missed-events
                flag); fields inside zstd chunks are recompressed (libzstd
                through ctypes) and padded with a skippable frame
  dup:ITEM      an option or a record written twice
  del:ITEM      an option or record removed
  commits=0     every page's commit 0 (trace.dat)
  fmt:EV.name[i]^1, fmt:EV.ID[i]^1, fmt:EV.name[0:8]=0
                a byte of the name or ID line of one of our events' formats
                flipped, or 8 bytes of its name zeroed (where the formats
                are not compressed)
Event payloads (field values inside records) are never touched: nothing
can tell a changed trap code from a recorded one.  A pipe-mode perf.data cut
right after a FINISHED_ROUND is a complete shorter recording, so no such
cut is written.  OUTDIR gets one file per mutant, named NNNN, and
OUTDIR/index listing "NNNN DESCRIPTION".
"""
import ctypes
import os
import re
import struct
import sys

src, outdir = sys.argv[1], sys.argv[2]
data = bytes(open(src, "rb").read())


class Layout:
    def __init__(self, big):
        self.E = ">" if big else "<"
        self.fields = []        # (offset, width, name)
        self.cuts = set()       # truncation points
        self.items = []         # (start, end, name, fixups): dup/del candidates
        self.chunk_fields = []  # (chunk_start, zsize, raw, inner_fields)
        self.sample_type = None  # of the first perf attribute

    def field(self, off, width, name):
        self.fields.append((off, width, name))

    def num(self, d, off, width):
        return struct.unpack_from(self.E + {1: "B", 2: "H", 4: "I", 8: "Q"}[width], d, off)[0]


def cstr_end(d, p):
    return d.index(b"\0", p) + 1


# --- the tracing-data layout (a v6 file's start, perf's tracing data) --------

def tracing_data(L, d, p, base):
    """Fields of the tracing-data layout at p; returns its end."""
    L.cuts.add(base + p)
    start = p
    p += 10
    ver_end = cstr_end(d, p)
    L.field(base + p, 1, "version")
    p = ver_end
    L.field(base + p, 1, "endian")
    L.field(base + p + 1, 1, "long_size")
    L.field(base + p + 2, 4, "page_size")
    p += 6
    for tag in ("header_page", "header_event"):
        p = cstr_end(d, p)
        L.field(base + p, 8, tag + "_size")
        p += 8 + L.num(d, p, 8)
        L.cuts.add(base + p)
    n = L.num(d, p, 4)
    L.field(base + p, 4, "ftrace_count")
    p += 4
    for i in range(n):
        L.field(base + p, 8, "ftrace%d_size" % i)
        p += 8 + L.num(d, p, 8)
    nsys = L.num(d, p, 4)
    L.field(base + p, 4, "systems")
    p += 4
    for k in range(nsys):
        p = cstr_end(d, p)
        nev = L.num(d, p, 4)
        L.field(base + p, 4, "sys%d_events" % k)
        p += 4
        for i in range(nev):
            L.field(base + p, 8, "sys%d_format%d_size" % (k, i))
            p += 8 + L.num(d, p, 8)
            L.cuts.add(base + p)
    for what in ("kallsyms", "printk"):
        L.field(base + p, 4, what + "_size")
        p += 4 + L.num(d, p, 4)
    if d[start + 10:start + 14] != b"0.5\0":
        L.field(base + p, 8, "cmdlines_size")
        p += 8 + L.num(d, p, 8)
    L.cuts.add(base + p)
    return p


# --- ring-buffer pages ------------------------------------------------------

def page_fields(L, d, off, size, page, commit_size, name, fields):
    """Timestamp and commit of every page in [off, off + size)."""
    for i, p in enumerate(range(off, off + size, page)):
        fields.append((p, 8, "%s.page%d.ts" % (name, i), "ts"))
        fields.append((p + 8, commit_size, "%s.page%d.commit" % (name, i), "commit"))
        L.cuts.add(p)
        L.cuts.add(p + 16 + 8)


def trace_v6(L, d):
    p = tracing_data(L, d, 0, 0)
    L.field(p, 4, "cpus")
    cpus = L.num(d, p, 4)
    p += 4
    page = L.num(d, cstr_end(d, 10) + 2, 4)
    if d[p:p + 10] == b"options  \0":
        p += 10
        while True:
            oid = L.num(d, p, 2)
            L.field(p, 2, "option@%d.id" % p)
            if oid == 0:
                p += 2
                break
            L.field(p + 2, 4, "option@%d.size" % p)
            end = p + 6 + L.num(d, p + 2, 4)
            L.items.append((p, end, "option%d@%d" % (oid, p), []))
            L.cuts.add(p)
            p = end
    p += 10
    fields = []
    for c in range(cpus):
        L.field(p + 16 * c, 8, "cpu%d.offset" % c)
        L.field(p + 16 * c + 8, 8, "cpu%d.size" % c)
        off, size = L.num(d, p + 16 * c, 8), L.num(d, p + 16 * c + 8, 8)
        page_fields(L, d, off, size, page, d[cstr_end(d, 10) + 1], "cpu%d" % c, fields)
    for f in fields:
        L.field(f[0], f[1], f[2])
    L.cuts.add(len(d) - 1)
    L.cuts.add(len(d) - page // 2)


def trace_v7(L, d):
    p = cstr_end(d, 10)
    big = d[p] != 0
    long_size = d[p + 1]
    page = L.num(d, p + 2, 4)
    L.field(p, 1, "endian")
    L.field(p + 1, 1, "long_size")
    L.field(p + 2, 4, "page_size")
    p = cstr_end(d, cstr_end(d, p + 6))
    comp = d[cstr_end(d, 10) + 6:].split(b"\0")[0]
    L.field(p, 8, "options_ptr")
    p += 8
    sections = []
    while p < len(d):
        sid, flags, _, size = struct.unpack_from(L.E + "HHIQ", d, p)
        L.field(p, 2, "section@%d.id" % p)
        L.field(p + 2, 2, "section@%d.flags" % p)
        L.field(p + 8, 8, "section@%d.size" % p)
        L.cuts.add(p)
        L.cuts.add(p + 16)
        sections.append((p, sid, flags, size))
        p += 16 + size
    L.cuts.add(len(d))
    commit_size = 8 if long_size == 8 else 4
    for s, sid, flags, size in sections:
        if sid != 0 or flags & 1:
            continue
        q, end = s + 16, s + 16 + size
        while q < end:
            oid, osz = struct.unpack_from(L.E + "HI", d, q)
            L.field(q, 2, "option@%d.id" % q)
            L.field(q + 2, 4, "option@%d.size" % q)
            if oid == 0:
                L.field(q + 6, 8, "options@%d.next" % s)
                break
            # Writing it twice or leaving it out keeps the section's size right.
            L.items.append((q, q + 6 + osz, "option%d@%d" % (oid, q), [(s + 8, 8)]))
            if oid == 3:
                b = q + 6
                L.field(b, 8, "buffer.flyrecord")
                r = cstr_end(d, cstr_end(d, b + 8))
                L.field(r, 4, "buffer.page_size")
                n = L.num(d, r + 4, 4)
                L.field(r + 4, 4, "buffer.cpus")
                for c in range(n):
                    e = r + 8 + 20 * c
                    L.field(e, 4, "buffer.cpu%d.id" % c)
                    L.field(e + 4, 8, "buffer.cpu%d.offset" % c)
                    L.field(e + 12, 8, "buffer.cpu%d.size" % c)
                    off, csize = L.num(d, e + 4, 8), L.num(d, e + 12, 8)
                    name = "cpu%d" % L.num(d, e, 4)
                    if comp in (b"", b"none"):
                        fields = []
                        page_fields(L, d, off, csize, page, commit_size, name, fields)
                        for f in fields:
                            L.field(f[0], f[1], f[2])
                        continue
                    L.field(off, 4, name + ".chunks")
                    k, x = L.num(d, off, 4), off + 4
                    for i in range(k):
                        zs = L.num(d, x, 4)
                        L.field(x, 4, "%s.chunk%d.zsize" % (name, i))
                        L.field(x + 4, 4, "%s.chunk%d.size" % (name, i))
                        L.cuts.add(x)
                        L.cuts.add(x + 8 + zs // 2)
                        inner = []
                        raw = zstd_decompress(d[x + 8:x + 8 + zs], L.num(d, x + 4, 4))
                        page_fields(L, raw, 0, len(raw), page, commit_size,
                                    "%s.chunk%d" % (name, i), inner)
                        L.chunk_fields.append((x, zs, raw, inner))
                        x += 8 + zs
            if oid == 8:
                L.field(q + 6, 4, "cpucount")
            q += 6 + osz


# --- zstd through ctypes (the generator must not depend on a Python module) --

_zstd = None


def zstd():
    global _zstd
    if _zstd is None:
        _zstd = ctypes.CDLL("libzstd.so.1")
        _zstd.ZSTD_compress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_isError.restype = ctypes.c_uint
    return _zstd


def zstd_decompress(z, size):
    out = ctypes.create_string_buffer(size)
    got = zstd().ZSTD_decompress(out, size, z, len(z))
    assert not zstd().ZSTD_isError(got) and got == size, "a chunk of SRC does not decompress"
    return out.raw


def zstd_fit(raw, room):
    """raw compressed into exactly room bytes (a skippable frame pads), or None."""
    for level in (3, 19, 1):
        out = ctypes.create_string_buffer(len(raw) + 1024)
        n = zstd().ZSTD_compress(out, len(out), raw, len(raw), level)
        if zstd().ZSTD_isError(n):
            continue
        if n == room:
            return out.raw[:n]
        if n + 8 <= room:
            return out.raw[:n] + struct.pack("<II", 0x184D2A50, room - n - 8) + b"\0" * (room - n - 8)
    return None


# --- perf.data ----------------------------------------------------------------

def raw_offset(st):
    """Where a sample's RAW size lies after its header, or None (READ, CALLCHAIN)."""
    if st is None or not st & 1024 or st & (16 | 32):
        return None
    before = (65536, 1, 2, 4, 8, 64, 512, 128, 256)  # IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD
    return 8 + 8 * sum(1 for bit in before if st & bit)


def perf_records(L, d, p, end, pipe):
    """Record headers of [p, end); in pipe mode no cut where the file would
    look complete (no sample after the last FINISHED_ROUND) but before the
    first attribute (nothing to read at all)."""
    pending, attrs = False, False
    starts = []
    q = p
    while q < end:
        starts.append(q)
        q += L.num(d, q + 6, 2) + (L.num(d, q + 8, 4) if L.num(d, q, 4) == 66 else 0)
    # Record fields: every record but samples, and samples 0, 1, the last two
    # and every 16th (they all share one layout).
    samples = [r for r in starts if L.num(d, r, 4) == 9]
    picked = set(samples[:2] + samples[-2:] + samples[::16])
    while p < end:
        rtype, misc, size = struct.unpack_from(L.E + "IHH", d, p)
        if rtype != 9 or p in picked:
            L.field(p, 4, "record@%d.type" % p)
            L.field(p + 6, 2, "record@%d.size" % p)
        if not pipe or pending or not attrs:
            L.cuts.add(p)
        nxt = p + size
        if rtype == 66:   # HEADER_TRACING_DATA: the layout follows the record
            L.field(p + 8, 4, "tracing_data.size")
            tracing_data(L, d[nxt:], 0, nxt)
            nxt += L.num(d, p + 8, 4)
        elif rtype == 64:   # HEADER_ATTR
            perf_attr(L, d, p + 8, "attr@%d" % p)
            L.items.append((p, nxt, "attr-record@%d" % p, []))
            attrs = True
        elif rtype == 9:
            pending = True
            raw = raw_offset(L.sample_type)
            if p in picked:
                L.field(p + 8, 8, "sample@%d.id" % p)
                if raw is not None and raw + 4 <= size:
                    L.field(p + raw, 4, "sample@%d.raw_size" % p)
        elif rtype == 68:
            pending = False
            L.items.append((p, nxt, "finished_round@%d" % p, [] if pipe else [(48, 8)]))
        elif rtype == 2:
            L.field(p + 16, 8, "lost@%d.count" % p)
        if rtype != 9 or p in picked:
            L.cuts.add(p + size // 2)
        p = nxt
    if not pipe:
        L.cuts.add(end)


def perf_attr(L, d, a, name):
    if L.sample_type is None:
        L.sample_type = L.num(d, a + 24, 8)
    L.field(a, 4, name + ".type")
    L.field(a + 4, 4, name + ".size")
    L.field(a + 24, 8, name + ".sample_type")
    L.field(a + 32, 8, name + ".read_format")


def perf_file(L, d):
    L.field(8, 8, "header_size")
    L.field(16, 8, "attr_size")
    for i, what in enumerate(("attrs", "data", "event_types")):
        L.field(24 + 16 * i, 8, what + ".offset")
        L.field(32 + 16 * i, 8, what + ".size")
    for w in range(4):
        L.field(72 + 8 * w, 8, "features%d" % w)
    attr_size = L.num(d, 16, 8)
    aoff, asize = L.num(d, 24, 8), L.num(d, 32, 8)
    for a in range(aoff, aoff + asize, attr_size):
        perf_attr(L, d, a, "attr@%d" % a)
        L.field(a + attr_size - 16, 8, "attr@%d.ids.offset" % a)
        L.field(a + attr_size - 8, 8, "attr@%d.ids.size" % a)
    doff, dsize = L.num(d, 40, 8), L.num(d, 48, 8)
    perf_records(L, d, doff, doff + dsize, False)
    feat = doff + dsize
    nfeat = sum(bin(L.num(d, 72 + 8 * w, 8)).count("1") for w in range(4))
    for i in range(nfeat):
        L.field(feat + 16 * i, 8, "feature%d.offset" % i)
        L.field(feat + 16 * i + 8, 8, "feature%d.size" % i)
    if L.num(d, 72, 8) & 2:
        toff = L.num(d, feat, 8)
        tracing_data(L, d[toff:], 0, toff)
    L.cuts.add(len(d) - 1)


def perf_pipe(L, d):
    L.field(8, 8, "header_size")
    perf_records(L, d, 16, len(d), True)


# --- the mutants ----------------------------------------------------------------

def values(v, width):
    top = (1 << (8 * width)) - 1
    out = [0, v - 1, v + 1, 2 * v, v // 2, top, v ^ (1 << (8 * width - 1))]
    return sorted({x for x in out if 0 <= x <= top and x != v})


def put(L, b, off, width, v):
    struct.pack_into(L.E + {1: "B", 2: "H", 4: "I", 8: "Q"}[width], b, off, v)


def main():
    big = data[:8] == b"2ELIFREP" or (data[:3] == b"\x17\x08\x44" and data[cstr_end(data, 10)] != 0)
    L = Layout(big)
    if data[:8] in (b"PERFILE2", b"2ELIFREP"):
        (perf_pipe if L.num(data, 8, 8) == 16 else perf_file)(L, data)
    elif data[10:12] == b"6\0":
        trace_v6(L, data)
    elif data[10:12] == b"7\0":
        trace_v7(L, data)
    else:
        sys.exit("mutants.py: %s is neither a trace.dat v6/v7 nor a perf.data" % src)
    os.makedirs(outdir, exist_ok=True)
    seen, index = set(), []

    def emit(desc, blob):
        if blob == data or blob in seen:
            return
        seen.add(blob)
        name = "%04d" % len(index)
        open(os.path.join(outdir, name), "wb").write(blob)
        index.append("%s %s" % (name, desc))

    for c in sorted(L.cuts):
        if 0 < c < len(data):
            emit("cut@%d" % c, data[:c])
    for off, width, name in L.fields:
        if not width or off + width > len(data):
            continue
        v = L.num(data, off, width)
        vals = values(v, width)
        if name.endswith(".commit"):
            vals += [x for x in (v - 4, v | (1 << 31)) if 0 <= x < (1 << (8 * width))]
        for x in vals:
            b = bytearray(data)
            put(L, b, off, width, x)
            emit("%s=%d(was %d)" % (name, x, v), bytes(b))
    for start, zs, raw, inner in L.chunk_fields:
        for off, width, name, kind in inner:
            v = L.num(raw, off, width)
            vals = [0, v + 1, v - 1] if kind == "ts" else [0, v - 4, v + 4, v | (1 << 31)]
            for x in vals:
                if x < 0 or x >= 1 << (8 * width) or x == v:
                    continue
                r = bytearray(raw)
                put(L, r, off, width, x)
                z = zstd_fit(bytes(r), zs)
                if z is not None:
                    emit("%s=%d(was %d)" % (name, x, v), data[:start + 8] + z + data[start + 8 + zs:])
    # Every page's commit 0: in place, and inside every zstd chunk at once.
    commits = [(o, w) for o, w, n in L.fields if n.endswith(".commit")]
    if commits or L.chunk_fields:
        b = bytearray(data)
        for o, w in commits:
            put(L, b, o, w, 0)
        for start, zs, raw, inner in L.chunk_fields:
            r = bytearray(raw)
            for off, width, name, kind in inner:
                if kind == "commit":
                    put(L, r, off, width, 0)
            z = zstd_fit(bytes(r), zs)
            if z is not None:
                b[start + 8:start + 8 + zs] = z
        emit("commits=0", bytes(b))
    # The name and ID lines of our events' formats where they are stored
    # uncompressed: each byte's low bit flipped, and 8 bytes zeroed from
    # the name on (a kernel never writes such a format; its records must not
    # silently become some other event's, or none).
    for m in re.finditer(rb"name: (kvm_exit|kvm_userspace_exit|kvmppc_run_core|"
                         rb"kvm_guest_exit)\nID: ([0-9]+)\n", data):
        for g in (1, 2):
            for i in range(m.start(g), m.end(g)):
                b = bytearray(data)
                b[i] ^= 1
                emit("fmt:%s.%s[%d]^1" % (m.group(1).decode(), ("name", "ID")[g - 1],
                                          i - m.start(g)), bytes(b))
        b = bytearray(data)
        b[m.start(1):m.start(1) + 8] = bytes(8)
        emit("fmt:%s.name[0:8]=0" % m.group(1).decode(), bytes(b))
    for start, end, name, fixups in L.items:
        for op in ("dup", "del"):
            piece = data[start:end]
            b = bytearray(data[:start] + (piece + piece if op == "dup" else b"") + data[end:])
            delta = len(piece) if op == "dup" else -len(piece)
            for off, width in fixups:
                if off < start:
                    put(L, b, off, width, L.num(data, off, width) + delta)
            emit("%s:%s" % (op, name), bytes(b))
    open(os.path.join(outdir, "index"), "w").write("\n".join(index) + "\n")
    print("%d mutants of %s" % (len(index), src))


main()
