#!/usr/bin/env python3
"""Compensates one gap of QEMU's powernv8 emulation in a POWER8 host vmlinux.

POWER8 hardware keeps the partition registers SDR1 and LPIDR per *core*;
QEMU (target/ppc/misc_helper.c: helper_store_sdr1, helper_store_lpidr)
keeps them per *thread*.  KVM-HV relies on the hardware: only the primary
thread of a vcore switches the partition on guest entry (kvmppc_hv_entry:
`cmpwi r6,0; bne 10f` skips mtlpidr/mtsdr1 on secondaries) and only the
primary restores the host's on exit (kvmhv_switch_to_host).  Under QEMU a
secondary thread therefore "runs the guest" with the host's LPID and hash
table: it faults until the hypervisor decrementer fires and never executes
a guest instruction.

Four instruction words make every thread do what the core does in
hardware, and nothing else changes (thread grab, cede, exits, tracepoints
stay Debian's):

  entry  bne 10f -> nop      secondaries enter the LPID/SDR1 switch too
  entry  isync   -> bne 10f  ... and leave it for label 10 right after
  exit   b 16f   -> b LOAD   a secondary (after the primary is out)
                             loads the host's LPID/SDR1 as well
  exit   isync   -> beq 16f  ... then goes on at label 16

The sites are found by symbol (the vmlinux symbol table: kvmppc_hv_entry,
kvmhv_switch_to_host) and by instruction pattern with every fixed word
checked and the branch targets cross-checked, so another kernel build is
either patched at the right words or refused with the reason.

usage: power8-smt-patch.py VMLINUX OUT      writes the patched copy to OUT
                                            and prints the table of changes
Exit 0 when patched, 3 when the kernel does not fit (the reason on stderr),
2 on bad usage or unreadable input.
"""
import os
import shutil
import struct
import sys

# How far past a symbol its pattern may start (the code in question sits
# within the first 0x400 bytes of both routines in 6.1).
WINDOW = 0x1000

# Masked words: (mask, value, what).  A 0xffff0000 mask leaves a load's
# structure offset free (it changes with the kernel's struct layouts).
ANY_D = 0xFFFF0000
BC_MASK = 0xFFFF0003          # bc with BO/BI fixed, displacement free
ENTRY = [
    (0xFFFFFFFF, 0x2C060000, "cmpwi r6,0"),
    (BC_MASK, 0x40820000, "bne 10f"),
    (ANY_D, 0x80E90000, "lwz r7,KVM_LPID(r9)"),
    (BC_MASK, 0xE8C90000, "ld r6,KVM_SDR1(r9)"),
    (ANY_D, 0x38000000, "li r0,LPID_RSVD"),
    (0xFFFFFFFF, 0x7C1F4BA6, "mtlpidr r0"),
    (0xFFFFFFFF, 0x7C4004AC, "ptesync"),
    (0xFFFFFFFF, 0x7CD903A6, "mtsdr1 r6"),
    (0xFFFFFFFF, 0x7CFF4BA6, "mtlpidr r7"),
    (0xFFFFFFFF, 0x4C00012C, "isync"),
]
LABEL10 = (0xFFFFFFFF, 0x2C240000, "cmpdi r4,0")
EXIT_SECONDARY = [
    (ANY_D, 0x886D0000, "lbz r3,HSTATE_PTID(r13)"),
    (0xFFFFFFFF, 0x2C030000, "cmpwi r3,0"),
    (BC_MASK, 0x41820000, "beq primary"),
    (0xFFFFFFFF, 0x7C210B78, "HMT_LOW"),
    (ANY_D, 0x88650000, "lbz r3,VCORE_IN_GUEST(r5)"),
    (0xFFFFFFFF, 0x2C030000, "cmpwi r3,0"),
    (0xFFFFFFFF, 0x4082FFF8, "bne .-8"),
    (0xFFFFFFFF, 0x7C421378, "HMT_MEDIUM"),
    (0xFC000003, 0x48000000, "b 16f"),
]
EXIT_PRIMARY = [
    (ANY_D, 0x88C50000, "lbz r6,VCORE_IN_GUEST(r5)"),
    (0xFFFFFFFF, 0x2C060000, "cmpwi r6,0"),
    (BC_MASK, 0x41820000, "beq 15f"),
    (ANY_D, 0x80E40000, "lwz r7,KVM_HOST_LPID(r4)"),
    (BC_MASK, 0xE8C40000, "ld r6,KVM_HOST_SDR1(r4)"),
    (ANY_D, 0x39000000, "li r8,LPID_RSVD"),
    (0xFFFFFFFF, 0x7D1F4BA6, "mtlpidr r8"),
    (0xFFFFFFFF, 0x7C4004AC, "ptesync"),
    (0xFFFFFFFF, 0x7CD903A6, "mtsdr1 r6"),
    (0xFFFFFFFF, 0x7CFF4BA6, "mtlpidr r7"),
    (0xFFFFFFFF, 0x4C00012C, "isync"),
]
NOP = 0x60000000


class Refused(Exception):
    """The kernel is not one this patch is known to fit."""


def sext(v, bits):
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def bc_target(addr, w):
    return addr + sext(w & 0xFFFC, 16)


def b_target(addr, w):
    return addr + sext(w & 0x03FFFFFC, 26)


def bc_word(base, addr, target):
    d = target - addr
    if d % 4 or not -0x8000 <= d < 0x8000:
        raise Refused(f"a conditional branch from {addr:#x} cannot reach {target:#x}")
    return base | (d & 0xFFFC)


def b_word(addr, target):
    d = target - addr
    if d % 4 or not -0x2000000 <= d < 0x2000000:
        raise Refused(f"a branch from {addr:#x} cannot reach {target:#x}")
    return 0x48000000 | (d & 0x03FFFFFC)


class Elf:
    """The little of a ppc64le ELF vmlinux this needs: symbols, and words by address."""

    def __init__(self, data):
        self.data = data
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise Refused("not a 64-bit little-endian ELF file")
        (e_machine,) = struct.unpack_from("<H", data, 18)
        if e_machine != 21:
            raise Refused(f"ELF machine {e_machine}, not PowerPC64 (21)")
        e_shoff, = struct.unpack_from("<Q", data, 0x28)
        e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
        self.sections = []
        for i in range(e_shnum):
            (name, stype, flags, addr, off, size, link, info, align, entsize) = \
                struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
            self.sections.append((stype, addr, off, size, link, entsize))
        self.symbols = {}
        for stype, _addr, off, size, link, entsize in self.sections:
            if stype != 2:      # SHT_SYMTAB
                continue
            stroff = self.sections[link][2]
            for j in range(size // entsize):
                st_name, _info, _other, _shndx, value, _size = \
                    struct.unpack_from("<IBBHQQ", data, off + j * entsize)
                if st_name and value:
                    end = data.index(b"\0", stroff + st_name)
                    self.symbols.setdefault(data[stroff + st_name:end].decode(), value)
        if not self.symbols:
            raise Refused("the vmlinux has no symbol table (a stripped build)")

    def offset(self, addr):
        """File offset of a code address (PROGBITS sections only)."""
        for stype, saddr, off, size, _link, _entsize in self.sections:
            if stype == 1 and saddr <= addr < saddr + size:
                return off + (addr - saddr)
        raise Refused(f"address {addr:#x} is in no section of the file")

    def word(self, addr):
        return struct.unpack_from("<I", self.data, self.offset(addr))[0]

    def symbol(self, name):
        if name not in self.symbols:
            raise Refused(f"no symbol {name} (not a POWER8 KVM-HV kernel?)")
        return self.symbols[name]


def find(elf, start, end, pattern, where):
    """The one address in [start, end) where pattern's words all match."""
    hits = []
    for a in range(start, end - 4 * len(pattern) + 4, 4):
        if all(elf.word(a + 4 * i) & m == v for i, (m, v, _) in enumerate(pattern)):
            hits.append(a)
    if len(hits) != 1:
        names = "; ".join(w for _, _, w in pattern)
        raise Refused(f"{where}: the sequence {names} occurs {len(hits)} times "
                      f"in {start:#x}..{end:#x}, expected once")
    return hits[0]


def sites(elf):
    """[(address, old word, new word, effect)] for the four changes."""
    entry = elf.symbol("kvmppc_hv_entry")
    e = find(elf, entry, entry + WINDOW, ENTRY, "kvmppc_hv_entry")
    bne, isync = e + 4, e + 36
    label10 = bc_target(bne, elf.word(bne))
    if not isync < label10 < entry + WINDOW or \
            elf.word(label10) & LABEL10[0] != LABEL10[1]:
        raise Refused(f"kvmppc_hv_entry: bne at {bne:#x} goes to {label10:#x}, "
                      f"which is not the '10: {LABEL10[2]}' after the switch")

    host = elf.symbol("kvmhv_switch_to_host")
    s = find(elf, host, host + WINDOW, EXIT_SECONDARY, "kvmhv_switch_to_host (secondary)")
    beq_primary, wait_lbz, b16 = s + 8, s + 16, s + 32
    primary = bc_target(beq_primary, elf.word(beq_primary))
    if primary != b16 + 4:
        raise Refused(f"kvmhv_switch_to_host: the primary's path starts at {primary:#x}, "
                      f"not right after the secondary's 'b 16f' at {b16:#x}")
    label16 = b_target(b16, elf.word(b16))
    p = find(elf, primary, label16, EXIT_PRIMARY, "kvmhv_switch_to_host (primary)")
    if elf.word(p) & 0xFFFF != elf.word(wait_lbz) & 0xFFFF:
        raise Refused("kvmhv_switch_to_host: the secondary waits on another vcore "
                      "field than the primary tests (VCORE_IN_GUEST)")
    load, isync2 = p + 12, p + 40
    if not isync2 < label16:
        raise Refused(f"kvmhv_switch_to_host: label 16 ({label16:#x}) is not after "
                      f"the host LPID/SDR1 load ({load:#x})")
    return [
        (bne, elf.word(bne), NOP,
         "secondaries also enter the LPID/SDR1 switch"),
        (isync, elf.word(isync), bc_word(0x40820000, isync, label10),
         f"a secondary leaves right after the switch (bne {label10:#x})"),
        (b16, elf.word(b16), b_word(b16, load),
         f"a secondary runs the host LPID/SDR1 restore (b {load:#x})"),
        (isync2, elf.word(isync2), bc_word(0x41820000, isync2, label16),
         f"then returns to label 16 (beq {label16:#x})"),
    ]


def main(argv):
    if len(argv) != 3:
        print("usage: power8-smt-patch.py VMLINUX OUT", file=sys.stderr)
        return 2
    src, dst = argv[1], argv[2]
    try:
        with open(src, "rb") as f:
            data = bytearray(f.read())
    except OSError as e:
        print(f"power8-smt-patch: {src}: {e.strerror}", file=sys.stderr)
        return 2
    try:
        elf = Elf(data)
        changes = sites(elf)
    except Refused as e:
        print(f"power8-smt-patch: {src}: cannot patch: {e}", file=sys.stderr)
        return 3
    for addr, _old, new, _ in changes:
        struct.pack_into("<I", data, elf.offset(addr), new)
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    shutil.copymode(src, tmp)
    os.replace(tmp, dst)
    print("| address | old word | new word | effect |")
    print("|---|---|---|---|")
    for addr, old, new, what in changes:
        print(f"| `{addr:016x}` | `{old:08x}` | `{new:08x}` | {what} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
