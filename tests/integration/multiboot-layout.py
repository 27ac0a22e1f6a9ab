#!/usr/bin/env python3
"""multiboot-layout.py DIR — write the two crafted multiboot payloads of
multiboot-layout.sh into DIR. Each exits through isa-debug-exit (port 0xf4)
with 0x10 (vmm status 33) when what it checks holds, else 0x20 (65).

bios-area.elf: ELF32 whose first PT_LOAD (its ELF header, 0x74 bytes) is at
  0xff000, as in the ELF kvm-unit-tests builds with some linkers; the code
  at 0x100000 checks the guest sees the ELF magic there and "RSD PTR " at
  0xe0000 (the RSDP copy in the BIOS area).
low.bin: a.out-kludge kernel loaded at 0x8000-0xba30, over the fixed
  multiboot info place (0x9000-0x9558), like realmode.flat; it checks its own
  marker at 0x9000 is intact and that EBX (the info) and the memory map lie
  after its end."""
import struct
import sys

OK = bytes([0xB0, 0x10, 0xE6, 0xF4, 0xF4])    # mov al,0x10; out 0xf4,al; hlt
FAIL = bytes([0xB0, 0x20, 0xE6, 0xF4, 0xF4])  # mov al,0x20; out 0xf4,al; hlt


def mb_header(flags, addrs=()):
    return struct.pack("<III", 0x1BADB002, flags, (-(0x1BADB002 + flags)) & 0xFFFFFFFF) + \
        b"".join(struct.pack("<I", a) for a in addrs)


def checks(tests):
    """tests: (code that sets flags, jcc opcode that means failure) pairs;
    each failure jumps to FAIL at the end."""
    body = b""
    parts = []
    for code, jfail in tests:
        parts.append((code, jfail))
    # lay out: each test is code + jcc rel32 to FAIL
    size = sum(len(c) + 6 for c, _ in parts) + len(OK)
    pos = 0
    for code, jfail in parts:
        pos += len(code) + 6
        rel = size - pos
        body += code + bytes([0x0F, jfail]) + struct.pack("<i", rel)
    return body + OK + FAIL


JNE, JB = 0x85, 0x82


def bios_area_elf():
    code = checks([
        (bytes([0xA1]) + struct.pack("<I", 0xFF000) + bytes([0x3D]) + b"\x7fELF", JNE),
        (bytes([0xA1]) + struct.pack("<I", 0xE0000) + bytes([0x3D]) + b"RSD ", JNE),
    ])
    text = mb_header(3) + code
    ehdr = struct.pack("<16sHHIIIIIHHHHHH", b"\x7fELF\x01\x01\x01" + bytes(9), 2, 3, 1,
                       0x100000 + 12, 52, 0, 0, 52, 32, 2, 0, 0, 0)
    ph0 = struct.pack("<IIIIIIII", 1, 0, 0xFF000, 0xFF000, 0x74, 0x74, 4, 0x1000)
    ph1 = struct.pack("<IIIIIIII", 1, 0x1000, 0x100000, 0x100000, len(text), len(text), 5,
                      0x1000)
    img = bytearray(0x1000 + len(text))
    img[0:len(ehdr)] = ehdr
    img[52:52 + 64] = ph0 + ph1
    img[0x1000:] = text
    return bytes(img)


def low_kernel():
    load, end, entry = 0x8000, 0xBA30, 0x8040
    code = checks([
        (bytes([0xA1]) + struct.pack("<I", 0x9000) + bytes([0x3D]) + b"MARK", JNE),
        (bytes([0x81, 0xFB]) + struct.pack("<I", end), JB),             # cmp ebx,end
        (bytes([0x8B, 0x43, 0x30, 0x3D]) + struct.pack("<I", end), JB),  # mmap_addr
    ])
    img = bytearray(end - load)
    hdr = mb_header(1 << 16 | 3, (load, load, end, end, entry))
    img[0:len(hdr)] = hdr
    img[entry - load:entry - load + len(code)] = code
    img[0x1000:0x1004] = b"MARK"
    return bytes(img)


out = sys.argv[1]
open(out + "/bios-area.elf", "wb").write(bios_area_elf())
open(out + "/low.bin", "wb").write(low_kernel())
