#!/usr/bin/env python3
"""mkseeds.py — (re)writes the hand-made seed inputs of tests/fuzz/corpus/.

Each seed is a well-formed example of what its target parses, so the
fuzzer starts from deep paths rather than from nothing. Run from the top
folder: python3 tests/fuzz/mkseeds.py [GROUP...] (GROUP: netstack, virtio_net...:
the *_seeds functions below; none: all). Crash reproducers and inputs kept
from fuzzing runs live next to these (other names) and are not touched.
"""
import os
import struct
import subprocess
import sys

OUT = "tests/fuzz/corpus"


def seed(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def rec(*parts):
    """fuzz.h's records: 2-byte big-endian length, then the bytes."""
    return b"".join(struct.pack(">H", len(p)) + p for p in parts)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


# ------------------------------------------------------------- netstack

MAC = bytes([2, 0, 0, 0, 0, 1])
PEER_MAC = bytes([2, 0, 0, 0, 0, 2])
LOCAL = bytes([10, 0, 0, 1])
PEER = bytes([10, 0, 0, 2])
LOCAL6 = bytes([0xFD] + [0] * 14 + [1])
PEER6 = bytes([0xFD] + [0] * 14 + [2])


def eth(proto, payload, dst=MAC):
    return dst + PEER_MAC + struct.pack("!H", proto) + payload


def ip4(proto, l4, ident=1, frag=0, src=PEER, dst=LOCAL):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), ident, frag, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return eth(0x0800, h + l4)


def l4sum4(proto, l4, src=PEER, dst=LOCAL):
    return csum(src + dst + struct.pack("!BBH", 0, proto, len(l4)) + l4)


def l4sum6(proto, l4, src=PEER6, dst=LOCAL6):
    return csum(src + dst + struct.pack("!IxxxB", len(l4), proto) + l4)


def udp4(sport, dport, data):
    u = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    return ip4(17, u[:6] + struct.pack("!H", l4sum4(17, u)) + u[8:])


def tcp_seg(sport, dport, seq, ack, flags, data=b"", opts=b""):
    off = (20 + len(opts)) // 4
    return struct.pack("!HHIIBBHHH", sport, dport, seq, ack, off << 4, flags, 65535, 0, 0) + opts + data


def tcp4(*a, **k):
    t = tcp_seg(*a, **k)
    return ip4(6, t[:16] + struct.pack("!H", l4sum4(6, t)) + t[18:])


def ip6(nh, l4, src=PEER6, dst=LOCAL6, hlim=64):
    return eth(0x86DD, struct.pack("!IHBB", 0x60000000, len(l4), nh, hlim) + src + dst + l4)


def icmp6(typ, code, body, src=PEER6, dst=LOCAL6, hlim=64):
    m = struct.pack("!BBH", typ, code, 0) + body
    m = m[:2] + struct.pack("!H", l4sum6(58, m, src, dst)) + m[4:]
    return ip6(58, m, src, dst, hlim)


def netstack_seeds():
    arp = struct.pack("!HHBBH", 1, 0x0800, 6, 4, 1) + PEER_MAC + PEER + b"\0" * 6 + LOCAL
    seed("netstack", "arp", rec(eth(0x0806, arp, b"\xff" * 6)))
    echo = struct.pack("!BBHHH", 8, 0, 0, 0x4242, 1) + b"ping" * 8
    echo = echo[:2] + struct.pack("!H", csum(echo)) + echo[4:]
    seed("netstack", "icmp-echo", rec(ip4(1, echo)))
    seed("netstack", "udp", rec(udp4(5555, 7777, b"hello")))
    mss = b"\x02\x04\x05\xb4\x01\x03\x03\x07\x04\x02\x08\x0a\0\0\0\1\0\0\0\0"
    syn = tcp4(40000, 80, 1000, 0, 0x02, opts=mss)
    # the stack's ISN is unknown: the ACK and data are there for the fuzzer
    seed("netstack", "tcp-syn-data", rec(syn, tcp4(40000, 80, 1001, 1, 0x10),
                                         tcp4(40000, 80, 1001, 1, 0x18, b"GET /\r\n"),
                                         tcp4(40000, 80, 1008, 1, 0x11)))
    payload = struct.pack("!HHHH", 5555, 7777, 8 + 64, 0) + bytes(range(64))
    seed("netstack", "ipv4-fragments", rec(ip4(17, payload[:32], 7, 0x2000),
                                           ip4(17, payload[32:], 7, 4)))
    sol = bytes([0xFF, 2] + [0] * 9 + [1, 0xFF]) + LOCAL6[13:]
    ns = struct.pack("!I", 0) + LOCAL6 + b"\x01\x01" + PEER_MAC
    seed("netstack", "ipv6-nd", rec(icmp6(135, 0, ns, dst=sol, hlim=255)))
    seed("netstack", "ipv6-echo", rec(icmp6(128, 0, struct.pack("!HH", 1, 1) + b"x" * 32)))
    u = struct.pack("!HHHH", 5555, 7777, 8 + 4, 0) + b"six!"
    seed("netstack", "ipv6-udp", rec(ip6(17, u[:6] + struct.pack("!H", l4sum6(17, u)) + u[8:])))
    t = tcp_seg(40001, 80, 5000, 0, 0x02, opts=mss)
    seed("netstack", "ipv6-tcp-syn", rec(ip6(6, t[:16] + struct.pack("!H", l4sum6(6, t)) + t[18:])))
    frag = struct.pack("!BBHI", 17, 0, 1, 0x1234) + u  # fragment header, offset 0, M=1
    seed("netstack", "ipv6-fragment", rec(ip6(44, frag)))


# ------------------------------------------------------------- usernet

def bootp(msgtype, xid=0x1234, ciaddr=b"\0" * 4, opts=b""):
    b = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0, 0x8000, ciaddr,
                    b"\0" * 4, b"\0" * 4, b"\0" * 4,
                    bytes([0x52, 0x54, 0, 0x12, 0x34, 0x56]) + b"\0" * 10, b"", b"")
    return b + b"\x63\x82\x53\x63" + bytes([53, 1, msgtype]) + opts + b"\xff"


def usernet_seeds():
    seed("usernet_dhcp", "discover", rec(b"\0" + bootp(1, opts=bytes([55, 4, 1, 3, 6, 15]))))
    req = bytes([50, 4, 10, 0, 2, 15, 54, 4, 10, 0, 2, 2, 12, 4]) + b"host"
    seed("usernet_dhcp", "discover-request-release",
         rec(b"\0" + bootp(1), b"\0" + bootp(3, opts=req), b"\0" + bootp(7, ciaddr=bytes([10, 0, 2, 15]))))
    seed("usernet_dhcp", "overload", rec(b"\0" + bootp(1, opts=bytes([52, 1, 3]))))
    info = bytes([11, 1, 2, 3]) + struct.pack("!HH", 1, 10) + b"\0\3\0\1" + PEER_MAC
    info += struct.pack("!HHH", 6, 2, 23)
    seed("usernet_dhcp", "dhcpv6-info", rec(b"\1" + info))
    q = struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\7example\3org\0" + struct.pack("!HH", 1, 1)
    seed("usernet_dns", "v4-query-reply", rec(b"\0" + q, b"\2" + q[:2] + b"\x81\x80" + q[4:]))
    seed("usernet_dns", "v6-query", rec(b"\1" + q))
    usernet_state_seeds()


def usernet_state_seeds():
    """usernet_save's format (netstack/usernet/state.c): "USNT", version,
    records of type, zero, length, body; default LAN 10.0.2.0/24."""
    def r(t, body):
        return struct.pack("!HHI", t, 0, len(body)) + body
    lan = r(1, struct.pack("!5I", 0x0a000200, 24, 0x0a000202, 0x0a00020f, 16))
    mac = bytes([0x52, 0x54, 0, 0x12, 0x34, 0x56])
    lease = r(2, struct.pack("!I", 0x0a00020f) + mac + bytes([2, 0]) + struct.pack("!I", 86000))
    offer = r(2, struct.pack("!I", 0x0a000210) + mac[:5] + b"\x57" + bytes([1, 0]) + struct.pack("!I", 30))
    g4, r4 = bytes([10, 0, 2, 15]) + bytes(12), bytes([93, 184, 216, 34]) + bytes(12)
    reset4 = r(3, bytes([4, 0]) + mac + g4 + r4 + struct.pack("!HHII", 40000, 80, 1000, 2000))
    g6 = bytes([0xfd] + [0] * 7 + [0x50, 0x54, 0, 0xff, 0xfe, 0x12, 0x34, 0x56])
    r6 = bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [1])
    reset6 = r(3, bytes([6, 0]) + mac + g6 + r6 + struct.pack("!HHII", 40001, 443, 7, 9))
    good = b"USNT" + struct.pack("!I", 1) + lan + lease + offer + reset4 + reset6
    # a connection carried on (fd 0): ESTABLISHED, wscale 7/7, WS+SACK+TS,
    # 5 unacknowledged bytes, 3 unread, 2 in the host-to-guest relay
    hdr = bytes([4, 1 | 16]) + mac + g4 + r4 + struct.pack("!HHII", 40002, 22, 1005, 2003)
    flow = hdr + struct.pack("!I", 0) + bytes([4, 7, 7, 7])
    flow += struct.pack("!13I", 1000, 65535, 2003 + 65535, 1460, 1460, 123456, 654321, 20000,
                        65536, 65536, 5, 3, 2) + b"hello" + b"abc" + b"xy"
    live = b"USNT" + struct.pack("!I", 1) + lan + lease + r(4, flow)
    seed("usernet_state", "live-flow", live)
    seed("usernet_state", "live-flow-short", live[:len(live) - 3])
    seed("usernet_state", "leases-and-resets", good)
    seed("usernet_state", "truncated", good[:len(good) - 7])
    seed("usernet_state", "other-lan", b"USNT" + struct.pack("!I", 1) + r(1, struct.pack("!5I", 0x0a000300, 24, 0x0a000302, 0x0a00030f, 16)))
    seed("usernet_state", "bad-length", b"USNT" + struct.pack("!I", 1) + lan + struct.pack("!HHI", 2, 0, 0xffffffff))
    # version 2: hostfwd rules with their sockets (flags, zero, host port
    # and address, guest port and address, fd index): TCP 127.0.0.1:2222
    # to 10.0.2.15:22 on fd 2, UDP [::1]:5353 to port 53 on fd 0
    fwd4 = bytes([0, 0]) + struct.pack("!HI", 2222, 0x7f000001) + bytes(12)
    fwd4 += struct.pack("!HI", 22, 0x0a00020f) + bytes(12) + struct.pack("!I", 2)
    fwd6 = bytes([1 | 2, 0]) + struct.pack("!H", 5353) + bytes(15) + b"\x01"
    fwd6 += struct.pack("!HI", 53, 0x0a00020f) + bytes(12) + struct.pack("!I", 0)
    fwds = b"USNT" + struct.pack("!I", 2) + lan + lease + r(4, flow) + r(5, fwd4) + r(5, fwd6)
    seed("usernet_state", "forwards", fwds)
    seed("usernet_state", "forwards-twice", fwds + r(5, fwd4))


# ------------------------------------------------------------- regdb

DBTXT = b"""# a small db.txt
wmmrule ETSI:
	vo_c: cw_min=3, cw_max=7, aifsn=2, cot=2
	vi_c: cw_min=7, cw_max=15, aifsn=2, cot=4
	be_c: cw_min=15, cw_max=1023, aifsn=3, cot=6
	bk_c: cw_min=15, cw_max=1023, aifsn=7, cot=6
	vo_ap: cw_min=3, cw_max=7, aifsn=1, cot=2
	vi_ap: cw_min=7, cw_max=15, aifsn=1, cot=4
	be_ap: cw_min=15, cw_max=63, aifsn=3, cot=6
	bk_ap: cw_min=15, cw_max=1023, aifsn=7, cot=6

country 00:
	(2402 - 2472 @ 40), (20)
	(5170 - 5250 @ 80), (20), NO-IR, AUTO-BW

country DE: DFS-ETSI
	(2400 - 2483.5 @ 40), (100 mW)
	(5150 - 5250 @ 80), (200 mW), NO-OUTDOOR, AUTO-BW, wmmrule=ETSI
	(5250 - 5350 @ 80), (100 mW), NO-OUTDOOR, DFS, AUTO-BW, wmmrule=ETSI
	(57000 - 66000 @ 2160), (40)

country US: DFS-FCC
	(2400 - 2472 @ 40), (30)
	(5730 - 5850 @ 80), (30)
"""


def regdb_seeds():
    seed("regdb_dbtxt", "small", DBTXT)
    with open("/lib/firmware/regulatory.db", "rb") as f:
        seed("regdb_db", "debian", f.read())
    small = "build/fuzz-seed-regulatory.db"
    tmp = "build/fuzz-seed-db.txt"
    with open(tmp, "wb") as f:
        f.write(DBTXT)
    if subprocess.call(["build/regdb", "compile", tmp, "-o", small]) == 0:
        with open(small, "rb") as f:
            seed("regdb_db", "small", f.read())


# ------------------------------------------------------------- loaders

def elf32_multiboot():
    entry = 0x100000 + 0x54 + 12
    hdr = struct.pack("<16sHHIIIIIHHHHHH", b"\x7fELF\x01\x01\x01" + b"\0" * 9, 2, 3, 1, entry,
                      52, 0, 0, 52, 32, 1, 0, 0, 0)
    code = struct.pack("<III", 0x1BADB002, 0, (-0x1BADB002) & 0xFFFFFFFF) + b"\xf4\xeb\xfd"
    ph = struct.pack("<IIIIIIII", 1, 0x54, 0x100000 + 0x54, 0x100000 + 0x54, len(code), len(code) + 64, 5, 4)
    return hdr + ph + code


def aout_kludge():
    load = 0x100000
    body = bytearray(64)
    flags = 0x10000
    body[0:32] = struct.pack("<IIIIIIII", 0x1BADB002, flags, (-(0x1BADB002 + flags)) & 0xFFFFFFFF,
                             load, load, load + 64, load + 128, load + 32)
    body[32:35] = b"\xf4\xeb\xfd"
    return bytes(body)


def elf64_pvh():
    note_name = b"Xen\0"
    note = struct.pack("<III", 4, 4, 18) + note_name + struct.pack("<I", 0x100000)
    code = b"\xf4\xeb\xfd"
    ehdr_len, ph_len = 64, 56
    off_note = ehdr_len + 2 * ph_len
    off_code = off_note + len(note)
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1, 0x1000000,
                       ehdr_len, 0, 0, ehdr_len, ph_len, 2, 0, 0, 0)
    ph_note = struct.pack("<IIQQQQQQ", 4, 4, off_note, 0, 0, len(note), len(note), 4)
    ph_load = struct.pack("<IIQQQQQQ", 1, 5, off_code, 0x100000, 0x100000, len(code), len(code) + 4096, 16)
    return ehdr + ph_note + ph_load + note + code


def bzimage(version=0x020F, setup_sects=1, loadflags=1):
    setup = bytearray(512 * (setup_sects + 1))
    setup[0x1F1] = setup_sects
    struct.pack_into("<H", setup, 0x1FE, 0xAA55)
    struct.pack_into("<H", setup, 0x200, 0x66EB)
    setup[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", setup, 0x206, version)
    setup[0x211] = loadflags
    struct.pack_into("<I", setup, 0x214, 0x100000)  # code32_start
    struct.pack_into("<I", setup, 0x22C, 0x37FFFFFF)  # initrd_addr_max
    struct.pack_into("<I", setup, 0x230, 0x200000)  # kernel_alignment
    setup[0x234] = 1  # relocatable
    struct.pack_into("<I", setup, 0x238, 2048)  # cmdline_size
    struct.pack_into("<I", setup, 0x260, 0x400000)  # init_size
    return bytes(setup) + b"\x90" * 1024


def loader_seeds():
    seed("multiboot", "elf32", elf32_multiboot())
    seed("multiboot", "aout-kludge", aout_kludge())
    seed("pvh", "elf64-note", elf64_pvh())
    seed("bzimage", "v2.15", bzimage())
    seed("bzimage", "v2.02-low", bzimage(0x0202, 4, 0))


# ------------------------------------------------------------- devices

def op_for(kind, window, nwin, size_log2=2):
    """fuzz_dev.h's op byte for an access of kind 0 (write) / 1 (read)."""
    for op in range(256):
        if op % 4 == kind and (op // 4) % nwin == window and (op >> 5) & 3 == size_log2:
            return op
    raise ValueError("no op byte for %r" % ((kind, window, nwin, size_log2),))


def wr(window, nwin, off, value, size_log2=2):
    return bytes([op_for(0, window, nwin, size_log2)]) + struct.pack(">HI", off, value)


def rd(window, nwin, off, size_log2=2):
    return bytes([op_for(1, window, nwin, size_log2)]) + struct.pack(">H", off)


def ram(gpa, data):
    out = b""
    while data:
        chunk, data = data[:255], data[255:]
        out += b"\x02" + struct.pack(">I", gpa)[1:] + bytes([len(chunk)]) + chunk
        gpa += len(chunk)
    return out


def step(arg):
    return bytes([3 | arg << 2])


def bswap32(v):
    return struct.unpack("<I", struct.pack(">I", v))[0]


def device_seeds():
    # fw_cfg: signature through the data port, then a DMA read of the file dir
    s = wr(0, 1, 0, 0, 1) + b"".join(rd(0, 1, 1, 0) for _ in range(4))
    desc = struct.pack(">IIQ", (0x19 << 16) | 0x08 | 0x02, 64, 0x2000)
    s += ram(0x1000, desc) + wr(0, 1, 4, 0) + wr(0, 1, 8, bswap32(0x1000))
    seed("fw_cfg", "select-read-dma", s)
    skip = struct.pack(">IIQ", (0x20 << 16) | 0x08 | 0x04, 16, 0) + struct.pack(">IIQ", 0x02, 4096, 0x3000)
    seed("fw_cfg", "dma-skip-read", ram(0x1000, skip[:16]) + wr(0, 1, 8, bswap32(0x1000)) +
         ram(0x1100, skip[16:]) + wr(0, 1, 8, bswap32(0x1100)))
    # IDE (windows: 0x1f0, 0x3f6, 0x170, 0x376, bus master)
    n = 5
    ident = wr(0, n, 6, 0xE0, 0) + wr(0, n, 7, 0xEC, 0) + rd(0, n, 7, 0) + b"".join(rd(0, n, 0, 1) for _ in range(8))
    seed("ide", "identify", ident)
    pio = wr(0, n, 6, 0xE0, 0) + wr(0, n, 2, 1, 0) + wr(0, n, 3, 5, 0) + wr(0, n, 7, 0x20, 0)
    pio += b"".join(rd(0, n, 0, 1) for _ in range(8))
    seed("ide", "read-pio", pio)
    prd = struct.pack("<IHH", 0x4000, 1024, 0x8000)
    dma = ram(0x3000, prd) + wr(4, n, 4, 0x3000) + wr(0, n, 6, 0xE0, 0) + wr(0, n, 2, 2, 0)
    dma += wr(0, n, 3, 1, 0) + wr(0, n, 7, 0xC8, 0) + wr(4, n, 0, 0x09, 0) + rd(4, n, 2, 0) + wr(4, n, 0, 0, 0)
    seed("ide", "read-dma", dma)
    wdma = ram(0x3000, prd) + ram(0x4000, b"W" * 64) + wr(4, n, 4, 0x3000) + wr(0, n, 6, 0xE0, 0)
    wdma += wr(0, n, 2, 2, 0) + wr(0, n, 7, 0xCA, 0) + wr(4, n, 0, 0x01, 0) + wr(0, n, 7, 0xE7, 0)
    seed("ide", "write-dma-flush", wdma)
    seed("ide", "atapi-secondary", wr(2, n, 6, 0xA0, 0) + wr(2, n, 7, 0xA1, 0) + rd(3, n, 0, 0))
    # ATAPI: 16-byte records (flags, byte count limit, PRD length / 256, CDB)
    def pkt(cdb, flags=0, limit=0xfffe, prd_len=16):
        return struct.pack("<BHB", flags, limit, prd_len) + bytes(cdb).ljust(12, b"\0")
    seed("atapi", "inquiry-sense-tur", pkt([0x12, 0, 0, 0, 36]) + pkt([0x03, 0, 0, 0, 18]) + pkt([0]))
    seed("atapi", "capacity-read10-pio", pkt([0x25]) + pkt([0x28, 0, 0, 0, 0, 1, 0, 0, 2], limit=1001))
    seed("atapi", "read12-dma", pkt([0xA8, 0, 0, 0, 0, 2, 0, 0, 0, 1], flags=1))
    seed("atapi", "toc-modes", pkt([0x43, 0, 0, 0, 0, 0, 0, 0, 255]) + pkt([0x43, 2, 1, 0, 0, 0, 0, 0, 255]) +
         pkt([0x43, 0, 2, 0, 0, 0, 0, 0, 255]) + pkt([0x5A, 0, 0x3F, 0, 0, 0, 0, 0, 255]))
    seed("atapi", "config-events-mech", pkt([0x46, 0, 0, 0, 0, 0, 0, 0, 255]) + pkt([0x4A, 1, 0, 0, 0x10, 0, 0, 0, 8]) +
         pkt([0xBD, 0, 0, 0, 0, 0, 0, 0, 0, 8]) + pkt([0x51, 0, 0, 0, 0, 0, 0, 0, 34]))
    seed("atapi", "tray-lock-change", pkt([0x1E, 0, 0, 0, 1]) + pkt([0x1B, 0, 0, 0, 2], flags=1 << 2) +
         pkt([0x1E]) + pkt([0x1B, 0, 0, 0, 2]) + pkt([0], flags=3 << 2) + pkt([0]) + pkt([0x28, 0, 0, 0, 0, 0, 0, 0, 1]))
    seed("atapi", "empty-slave", pkt([0], flags=2) + pkt([0x25], flags=2) + pkt([0x46, 0, 0, 0, 0, 0, 0, 0, 64], flags=2))
    # PCI: every function's ID, BAR sizing of the virtio-blk at 00:03.0
    p = b""
    for devfn in (0, 8, 9, 24):
        p += wr(0, 1, 0, 0x80000000 | devfn << 8) + rd(0, 1, 4)
    for bar in range(6):
        p += wr(0, 1, 0, 0x80000000 | 24 << 8 | (0x10 + 4 * bar)) + wr(0, 1, 4, 0xFFFFFFFF) + rd(0, 1, 4)
    p += wr(0, 1, 0, 0x80000000 | 24 << 8 | 0x34) + rd(0, 1, 4, 0)
    p += wr(0, 1, 0, 0x80000000 | 24 << 8 | 0x04) + wr(0, 1, 4, 0x7, 1)
    seed("pci", "ids-bars-caps", p)
    seed("pci", "pam-pirq", wr(0, 1, 0, 0x80000058) + wr(0, 1, 5, 0x33, 0) +
         wr(0, 1, 0, 0x80000860) + wr(0, 1, 4, 0x0B0A0B0A))
    # virtqueues: size 8, desc 0x1000, avail 0x2000, used 0x3000
    head = bytes([0]) + struct.pack(">H", 8) + b"\x00\x10\x00" + b"\x00\x20\x00" + b"\x00\x30\x00"
    chain = struct.pack("<QIHH", 0x4000, 16, 1, 1) + struct.pack("<QIHH", 0x5000, 512, 3, 2)
    chain += struct.pack("<QIHH", 0x6000, 1, 2, 0)
    avail = struct.pack("<HHH", 0, 1, 0)
    for typ, name in ((0, "read"), (1, "write"), (4, "flush"), (8, "get-id")):
        req = struct.pack("<IIQ", typ, 0, 3)
        c = chain if typ != 1 else chain[:16] + struct.pack("<QIHH", 0x5000, 512, 1, 2) + chain[32:]
        seed("virtio_blk", name, head + ram(0x1000, c) + ram(0x2000, avail) + ram(0x4000, req) + step(0))
    disc = struct.pack("<QIHH", 0x4000, 16, 1, 1) + struct.pack("<QIHH", 0x5000, 16, 1, 2)
    disc += struct.pack("<QIHH", 0x6000, 1, 2, 0)
    seed("virtio_blk", "discard", head + ram(0x1000, disc) + ram(0x2000, avail) +
         ram(0x4000, struct.pack("<IIQ", 11, 0, 0)) + ram(0x5000, struct.pack("<QII", 2, 4, 0)) + step(0))
    seed("virtqueue", "chain", head + ram(0x1000, chain) + ram(0x2000, avail) + ram(0x4000, b"data") + step(1))
    # virtio-rng: two writable buffers chained; a readable one (refused);
    # three 32-byte requests against the 64-byte quota
    rng = struct.pack("<QIHH", 0x4000, 16, 3, 1) + struct.pack("<QIHH", 0x5000, 40, 2, 0)
    seed("virtio_rng", "chain", head + ram(0x1000, rng) + ram(0x2000, avail) + step(0))
    seed("virtio_rng", "readable", head + ram(0x1000, struct.pack("<QIHH", 0x4000, 16, 0, 0)) +
         ram(0x2000, avail) + step(0))
    three = b"".join(struct.pack("<QIHH", 0x4000 + 0x100 * i, 32, 2, 0) for i in range(3))
    seed("virtio_rng", "quota", head + ram(0x1000, three) + ram(0x2000, struct.pack("<HHHHH", 0, 3, 0, 1, 2)) +
         step(0))
    # virtio-balloon (first byte: the queue): PFNs, one outside RAM and a
    # partial one; stats with an unknown tag and a partial entry; a
    # reported range that is not page-aligned
    pfns = struct.pack("<IIIII", 0x10, 0x11, 0x13, 0x100, 0xFFFFFFFF) + b"\x05"
    one = struct.pack("<QIHH", 0x4000, len(pfns), 0, 0)
    seed("virtio_balloon", "inflate", bytes([0]) + head + ram(0x1000, one) + ram(0x2000, avail) +
         ram(0x4000, pfns) + step(0))
    seed("virtio_balloon", "deflate", bytes([1]) + head + ram(0x1000, one) + ram(0x2000, avail) +
         ram(0x4000, pfns) + step(0))
    stats = struct.pack("<HQHQHQ", 5, 512 << 20, 4, 100 << 20, 99, 1) + b"\x01\x00"
    seed("virtio_balloon", "stats", bytes([2]) + head +
         ram(0x1000, struct.pack("<QIHH", 0x4000, len(stats), 0, 0)) + ram(0x2000, avail) +
         ram(0x4000, stats) + step(0))
    seed("virtio_balloon", "report", bytes([3]) + head +
         ram(0x1000, struct.pack("<QIHH", 0x8800, 0x3000, 2, 0)) + ram(0x2000, avail) + step(0))
    indirect = struct.pack("<QIHH", 0x7000, 32, 4, 0)
    table = struct.pack("<QIHH", 0x4000, 8, 1, 1) + struct.pack("<QIHH", 0x5000, 8, 2, 0)
    seed("virtqueue", "indirect-event-idx", bytes([3]) + head[1:] + ram(0x1000, indirect) +
         ram(0x7000, table) + ram(0x2000, struct.pack("<HHHH", 0, 1, 0, 0)) + step(0))
    # APICs: enable, timer, an IPI, x2APIC
    l = bytes([0]) + struct.pack(">HI", 0xF0, 0x1FF)
    l += bytes([0]) + struct.pack(">HI", 0x320, 0x20030) + bytes([0]) + struct.pack(">HI", 0x380, 1000)
    l += bytes([5]) + b"\0\x10\0" + bytes([4])
    l += bytes([0]) + struct.pack(">HI", 0x310, 1 << 24) + bytes([0]) + struct.pack(">HI", 0x300, 0x4041)
    l += bytes([12]) + bytes([1]) + struct.pack(">HI", 0xB0, 0)
    seed("lapic", "timer-ipi", l)
    seed("lapic", "x2apic", bytes([7, 0x4D]) + bytes([2, 0x0F]) + struct.pack(">Q", 0x1FF) +
         bytes([2, 0x30]) + struct.pack(">Q", 0x100000045) + bytes([3, 0x02]))
    io = wr(0, 1, 0, 0x10) + wr(0, 1, 0x10, 0xA030) + wr(0, 1, 0, 0x11) + wr(0, 1, 0x10, 0)
    io += step(32 | 0) + wr(0, 1, 0, 1) + rd(0, 1, 0x10) + step(48 | 0) + wr(0, 1, 0x40, 0x30)
    seed("ioapic", "level-rte-eoi", io)
    # VT-d + edu (windows: VT-d page, edu BAR, 0xcf8): 3-level tables for
    # 00:02.0 (IOVA 0 -> 0x20000), DMA both ways, queued invalidation wait,
    # an IRTE and the edu's MSI through it, a fault on IOVA 0x1000
    n = 3
    t = ram(0x10000, struct.pack("<QQ", 0x11000 | 1, 0))
    t += ram(0x11000 + 0x10 * 16, struct.pack("<QQ", 0x12000 | 1, 1))
    t += ram(0x12000, struct.pack("<Q", 0x13000 | 3)) + ram(0x13000, struct.pack("<Q", 0x14000 | 3))
    t += ram(0x14000, struct.pack("<Q", 0x20000 | 3)) + ram(0x20000, b"fuzz dma")
    t += wr(0, n, 0x20, 0x10000) + wr(0, n, 0x18, 0x40000000) + wr(0, n, 0x18, 0xC0000000)
    t += wr(1, n, 0x80, 0) + wr(1, n, 0x88, 0x40000) + wr(1, n, 0x90, 8) + wr(1, n, 0x98, 1)
    t += wr(1, n, 0x80, 0x40000) + wr(1, n, 0x88, 0x10) + wr(1, n, 0x98, 3)
    t += wr(1, n, 0x88, 0x1000) + wr(1, n, 0x98, 3) + rd(0, n, 0x34) + rd(0, n, 0x228)
    t += ram(0x40000, struct.pack("<QQ", 5 | 1 << 5 | 1 << 4 | 0x1234 << 32, 0x50000))
    t += wr(0, n, 0x90, 0x40000) + wr(0, n, 0x18, 0xC4000000) + wr(0, n, 0x88, 16)
    t += ram(0x30000 + 3 * 16, struct.pack("<QQ", 1 | 0x41 << 16, 0x10 | 1 << 18))
    t += wr(0, n, 0xB8, 0x30000 | 7) + wr(0, n, 0x18, 0xC5000000) + wr(0, n, 0x18, 0xC6000000)
    t += wr(2, n, 0, 0x80001040) + wr(2, n, 4, 0xFEE00070) + wr(2, n, 0, 0x80001040)
    t += wr(2, n, 6, 1, 1) + wr(1, n, 0x60, 1) + step(7) + step(2)
    seed("intel_iommu", "dma-qi-ir", t)


# ------------------------------------------------------------- virtio-net

def desc(addr, length, flags=0, nxt=0):
    """A split virtqueue descriptor (flags: 1 NEXT, 2 WRITE, 4 INDIRECT)."""
    return struct.pack("<QIHH", addr, length, flags, nxt)


def avail(*heads, idx=None):
    return struct.pack("<HH", 0, len(heads) if idx is None else idx) + b"".join(struct.pack("<H", h) for h in heads)


def vpci_setup(features, queues):
    """fuzz_vpci.h's driver set-up: features, then (size, desc, avail, used) per queue."""
    out = struct.pack(">Q", features)
    for size, base in queues:
        out += struct.pack(">H", size) + b"".join(struct.pack(">I", base + off)[1:] for off in (0, 0x1000, 0x2000))
    return out


NET_Q = ((16, 0x10000), (16, 0x20000), (32, 0x30000))  # RX, TX, control rings
NET_ALL = (1 << 64) - 1  # every offered feature
NET_NO_MRG = NET_ALL & ~(1 << 15)


def net_hdr(flags=0, gso=0, hdr_len=0, gso_size=0, csum_start=0, csum_off=0):
    return struct.pack("<BBHHHHH", flags, gso, hdr_len, gso_size, csum_start, csum_off, 0)


def net_frame(n, dst=b"\x52\x54\x00\x12\x34\x56"):
    return dst + b"\x52\x54\x00\xaa\xbb\xcc" + b"\x08\x00" + bytes(i & 0xFF for i in range(n - 14))


def net_rx_buffers(count, size):
    """count single-descriptor writable buffers of size bytes at 0x40000 + 0x1000 * i."""
    return ram(0x10000, b"".join(desc(0x40000 + 0x1000 * i, size, 2) for i in range(count))) + ram(
        0x11000, avail(*range(count)))


def net_tx(frames):
    """Each (hdr, frame) as a two-descriptor chain on the TX ring."""
    d, data = b"", b""
    for i, (h, f) in enumerate(frames):
        d += desc(0x50000 + 0x4000 * i, len(h), 1, 2 * i + 1) + desc(0x50100 + 0x4000 * i, len(f))
        data += ram(0x50000 + 0x4000 * i, h) + ram(0x50100 + 0x4000 * i, f)
    return ram(0x20000, d) + data + ram(0x21000, avail(*range(0, 2 * len(frames), 2)))


def net_ctrl(cmds):
    """Each command bytes as (out: command, in: ack byte) on the control ring."""
    d, data = b"", b""
    for i, c in enumerate(cmds):
        d += desc(0x70000 + 0x100 * i, len(c), 1, 2 * i + 1) + desc(0x78000 + i, 1, 2)
        data += ram(0x70000 + 0x100 * i, c)
    return ram(0x30000, d) + data + ram(0x31000, avail(*range(0, 2 * len(cmds), 2)))


def virtio_console_seeds():
    def msg(steer, port, event, value, extra=b""):
        return bytes([steer]) + struct.pack("<IHH", port, event, value) + extra
    # Linux's handshake: DEVICE_READY, PORT_READY for each port, the host
    # end of port 1 connecting, the guest opening and closing port 1.
    seed("virtio_console", "handshake", rec(msg(0, 0, 0, 1), msg(2, 0, 3, 1), msg(0, 1, 3, 1),
                                            msg(1, 3, 3, 1), msg(2, 1, 6, 1), msg(1, 1, 6, 0)))
    # unknown ports and events, a failed driver, short messages
    seed("virtio_console", "bad", rec(msg(0, 2, 3, 1), msg(0, 0xffffffff, 6, 1), msg(0, 1, 99, 1),
                                      msg(0, 0, 0, 0), b"\0\1\0\0", b"\0"))
    # the outbox left to fill: DEVICE_READY over and over
    seed("virtio_console", "flood", rec(*[msg(0, 0, 0, 1)] * 40))


def virtio_net_seeds():
    csum = net_hdr(1, 0, 0, 0, 34, 16)
    seed("virtio_net", "tx-csum-loopback", bytes([0x1F]) + vpci_setup(NET_ALL, NET_Q) +
         net_rx_buffers(4, 64) + net_tx([(csum, net_frame(60)), (net_hdr(), net_frame(1514))]) + step(0))
    gso = net_hdr(1, 1, 54, 1448, 34, 16)
    seed("virtio_net", "tx-tso4-mergeable", bytes([0x1F]) + vpci_setup(NET_ALL, NET_Q) +
         net_rx_buffers(8, 512) + net_tx([(gso, net_frame(3000)), (net_hdr(1, 0x84, 74, 1428, 54, 16), net_frame(2000))]) + step(0))
    seed("virtio_net", "tx-bad-headers", bytes([0x10]) + vpci_setup(NET_NO_MRG, NET_Q) + net_rx_buffers(2, 2048) +
         net_tx([(net_hdr(4), net_frame(60)), (net_hdr(1, 0, 0, 0, 60, 0), net_frame(60)),
                 (net_hdr(0, 1, 0, 0), net_frame(60)), (net_hdr(0, 0x80), net_frame(60))]) + step(0))
    frame = net_hdr(1, 4, 54, 1400, 34, 16)[:10] + struct.pack("<H", 300) + net_frame(300)
    seed("virtio_net", "rx-poll-mergeable", bytes([0x0F]) + vpci_setup(NET_ALL, NET_Q) +
         ram(0xF0000, frame) + step(3) + net_rx_buffers(4, 128) + step(2) + step(6))
    seed("virtio_net", "rx-backlog-link-reset", bytes([0x20]) + vpci_setup(NET_NO_MRG, NET_Q) +
         ram(0xF0000, net_hdr()[:10] + struct.pack("<H", 100) + net_frame(100)) + step(7) + step(7) +
         net_rx_buffers(1, 2048) + step(2) + step(4) + step(3) + step(4 | 8) + step(5) + step(3) + step(6))
    mac = b"\x52\x54\x00\x00\x00\x01"
    table = struct.pack("<I", 2) + mac + mac[:5] + b"\x02" + struct.pack("<I", 1) + b"\x01\x00\x5e\x00\x00\x01"
    cmds = [b"\x00\x00\x00", b"\x00\x01\x01", b"\x00\x05\x01", b"\x01\x00" + table,
            b"\x01\x01" + mac, b"\x02\x00\x05\x00", b"\x03\x00", b"\x04\x00\x01\x00", b"\x00\x09\x01"]
    seed("virtio_net", "ctrl-commands", bytes([0x10]) + vpci_setup(NET_ALL, NET_Q) + net_ctrl(cmds) + step(1) +
         net_rx_buffers(4, 2048) + ram(0xF0000, net_hdr()[:10] + struct.pack("<H", 64) + net_frame(64, mac)) +
         step(3) + step(6))


# ------------------------------------------------------------- hwsim

def nla(typ, data):
    pad = (4 - len(data) % 4) % 4
    return struct.pack("<HH", 4 + len(data), typ) + data + b"\0" * pad


def hwsim_msg(cmd, attrs, nl_type=0x10):
    body = bytes([cmd, 1, 0, 0]) + b"".join(attrs)
    return struct.pack("<IHHII", 16 + len(body), nl_type, 0, 1, 0) + body


def radio(i):
    return bytes([0x42, 0, 0, 0, i, 0])


def perm(i):
    return bytes([0x02, 0, 0, 0, i, 0])


def wifi(fc, addr1, addr2, body=b""):
    return struct.pack("<H", fc) + b"\0\0" + addr1 + addr2 + addr2 + b"\x10\x00" + body


BEACON, PROBE, DATA = 0x80, 0x40, 0x08
BCAST = b"\xff" * 6


def hwsim_tx(tx, frame, freq, width=20, flags=1, cookie=7):
    wf = {20: 0, 40: 1 << 5, 80: 1 << 9, 160: 1 << 10}[width]
    return hwsim_msg(2, [nla(2, radio(tx)), nla(3, frame), nla(4, struct.pack("<I", flags)),
                         nla(19, struct.pack("<I", freq)), nla(7, bytes([0, 1, 0xff, 0, 0xff, 0, 0xff, 0])),
                         nla(21, struct.pack("<bH", 0, wf) + b"\0" * 9), nla(8, struct.pack("<Q", cookie))])


def hwsim_mac(add, tx, vif):
    return hwsim_msg(7 if add else 8, [nla(2, radio(tx)), nla(1, vif)])


HW_Q = ((8, 0x10000), (8, 0x20000))  # TX, RX rings of the virtio-wlan device


def hw_guest(ops):
    return bytes([2]) + ops


def hw_rx_buffers(count=8):
    return ram(0x20000, b"".join(desc(0x40000 + 0x1000 * i, 0x1000, 2) for i in range(count))) + ram(
        0x21000, avail(*range(count)))


def hw_guest_tx(msgs):
    d = b"".join(desc(0x60000 + 0x1000 * i, len(m)) for i, m in enumerate(msgs))
    data = b"".join(ram(0x60000 + 0x1000 * i, m) for i, m in enumerate(msgs))
    return ram(0x10000, d) + data + ram(0x11000, avail(*range(len(msgs))))


def hw_register():
    """Every port's radio announces an interface (radios exist once they sent)."""
    m0, m2 = hwsim_mac(True, 0, b"\x02\xaa\0\0\0\0"), hwsim_mac(True, 2, b"\x02\xcc\0\0\0\0")
    return [hw_guest(hw_rx_buffers() + hw_guest_tx([m0]) + step(0)), b"\x00" + hwsim_mac(True, 1, b"\x02\xbb\0\0\0\0"),
            b"\x01" + struct.pack("<I", len(m2)) + m2]


def hwsim_seeds():
    head = vpci_setup((1 << 64) - 1, HW_Q)
    beacon = wifi(BEACON, BCAST, perm(1), b"\0" * 12 + b"\x00\x04fuzz")
    seed("hwsim", "beacon-to-all", bytes([0x80]) + head + rec(*hw_register(),
        hw_guest(hw_rx_buffers()), b"\x00" + hwsim_tx(1, beacon, 2412),
        b"\x01" + struct.pack("<I", 0) + b"", hw_guest(step(3) + step(1))))
    data = wifi(DATA, perm(1), perm(0), b"\xaa\xaa\x03\0\0\0\x08\x00" + b"x" * 40)
    seed("hwsim", "virtio-unicast-ack", bytes([0x80]) + head + rec(*hw_register(),
        b"\x00" + hwsim_tx(1, beacon, 5180),
        hw_guest(hw_rx_buffers() + hw_guest_tx([hwsim_tx(0, data, 5180, 40)]) + step(0) + step(3) + step(1)),
        hw_guest(step(2) + step(1))))
    dfs = bytes([0x80 | 2 << 2 | 2 << 4])  # DE, CAC 60 s, NOP 10 s
    seed("hwsim", "dfs-cac-radar", dfs + head + rec(*hw_register(),
        b"\x00" + hwsim_tx(1, beacon, 5500), b"\x03" + struct.pack(">I", 61000),
        b"\x00" + hwsim_tx(1, beacon, 5500, 80), b"\x05" + struct.pack(">H", 5500),
        b"\x00" + hwsim_tx(1, beacon, 5500), b"\x03" + struct.pack(">I", 11000),
        b"\x00" + hwsim_tx(1, wifi(PROBE, BCAST, perm(1)), 5500), b"\x07\x01"))
    m = hwsim_tx(2, wifi(PROBE, BCAST, perm(2)), 2437)
    framed = struct.pack("<I", len(m)) + m
    seed("hwsim", "stream-country-commands", bytes([0x40]) + head + rec(*hw_register(),
        b"\x01" + framed[:20], b"\x01" + framed[20:], b"\x04" + b"JP", b"\x04\x05",
        b"\x01" + framed, b"\x06info wlan", b"\x06wlan_country FR", b"\x06wlan_radar 5260",
        b"\x06info regdomain", b"\x06wlan_enforce off", b"\x01" + framed, b"\x07\x00"))
    seed("hwsim", "mac-addr-malformed", bytes([0]) + head + rec(*hw_register(),
        b"\x00" + hwsim_mac(True, 1, b"\x02\x11\x22\x33\x44\x55"),
        b"\x00" + hwsim_tx(0, wifi(DATA, b"\x02\x11\x22\x33\x44\x55", perm(0)), 2462),
        b"\x00" + hwsim_mac(False, 1, b"\x02\x11\x22\x33\x44\x55"),
        b"\x00" + hwsim_tx(1, b"\x0c\x00" + b"\0" * 30, 2412), b"\x00" + hwsim_msg(4, []),
        b"\x01" + struct.pack("<I", 0x100000)))


# ------------------------------------------------------------- control plane

def control_seeds():
    argvs = {
        "kernel": ["-m", "512M", "-smp", "2", "-kernel", "bzImage", "-append", "console=ttyS0",
                   "-initrd", "initrd.cpio", "-nographic"],
        "drives": ["-drive", "file=disk.img,if=virtio,cache=none,format=raw",
                   "-drive", "file=cd.iso,if=ide,index=2,media=cdrom,readonly=on",
                   "-device", "virtio-blk-pci,drive=d0,num-queues=2,serial=abc", "-snapshot"],
        "control": ["-qmp", "unix:/tmp/q.sock,server=on,wait=off", "-monitor", "stdio",
                    "-gdb", "tcp::1234", "-S", "-chardev", "socket,id=c0,path=/tmp/c,server=on",
                    "-serial", "chardev:c0", "-machine", "pc,kernel_irqchip=split,pit=off",
                    "-action", "reboot=shutdown,panic=pause", "-device", "pvpanic"],
        "misc": ["-name", "guest", "-boot", "order=dc,menu=on", "-bios", "bios.bin",
                 "-debugcon", "file:/tmp/dbg", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
                 "-no-reboot", "-cpu", "host,-x2apic", "-m", "size=1G",
                 "-sandbox", "on,obsolete=deny,spawn=deny", "-runas", "nobody", "-chroot", "/tmp"],
        "rng": ["-object", '{"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"}',
                "-device", '{"driver":"virtio-rng-pci","rng":"objrng0","id":"rng0","bus":"pci.0","addr":"0x6"}',
                "-object", "rng-builtin,id=b", "-device", "virtio-rng-pci,rng=b,max-bytes=1024,period=1000",
                "-device", "virtio-rng-pci"],
        "vserial": ["-device", "virtio-serial-pci,id=virtio-serial0,bus=pci.0,addr=0x5,max_ports=4",
                    "-chardev", "socket,id=charchannel0,path=/tmp/ga,server=on,wait=off",
                    "-device", '{"driver":"virtserialport","bus":"virtio-serial0.0","nr":1,'
                    '"chardev":"charchannel0","id":"channel0","name":"org.qemu.guest_agent.0"}',
                    "-chardev", "pty,id=charconsole0", "-device", "virtconsole,chardev=charconsole0",
                    "-device", "virtserialport,name=x"],
        "balloon": ["-device", '{"driver":"virtio-balloon-pci","id":"balloon0","bus":"pci.0",'
                    '"addr":"0x6","deflate-on-oom":true,"free-page-reporting":false}'],
    }
    for name, argv in argvs.items():
        seed("cli", name, "\0".join(argv).encode())
    seed("monitor", "commands", b"info status\nhelp\ninfo registers\nxp /8xb 0x1000\n"
         b"x /4xg 0x2000\nx /3i 0\nbreak 0x1000\ninfo break\ndelete 0x1000\nstop\nstepi\n"
         b"cont\ninfo cpus\ninfo mtree\nxp /2c 0x100\nsystem_reset\n")
    seed("monitor", "balloon", b"balloon 256\nballoon x\nballoon\ninfo balloon\n")
    qmp = [b'{"execute":"qmp_capabilities"}\n', b'{"execute":"query-status","id":1}\n',
           b'{"execute":"query-version"}{"execute":"query-cpus-fast"}\n',
           b'{"execute":"human-monitor-command","arguments":{"command-line":"info status"},"id":"x"}\n',
           b'{"execute":"query-block"}\n{"execute":"stop"}\n{"execute":"cont"}\n',
           b'{"exec', b'ute":"query-name"}\n', b'garbage\n{"execute":"nope"}\n',
           b'{"execute":"quit"}\n']
    seed("qmp", "session", rec(*qmp))
    seed("qmp", "balloon", rec(b'{"execute":"qmp_capabilities"}\n',
                               b'{"execute":"balloon","arguments":{"value":268435456}}\n',
                               b'{"execute":"query-balloon"}\n',
                               b'{"execute":"qom-set","arguments":{"path":"/machine/peripheral/'
                               b'balloon0","property":"guest-stats-polling-interval","value":2}}\n',
                               b'{"execute":"qom-get","arguments":{"path":"balloon0",'
                               b'"property":"guest-stats"}}\n',
                               b'{"execute":"human-monitor-command","arguments":'
                               b'{"command-line":"info balloon"}}\n'))
    seed("qmp", "unnegotiated", rec(b'{"execute":"query-status","extra":1}\n', b'[1,2]\n'))
    # object-add in QEMU's flat form and libvirt's "props" one
    seed("qmp", "object", rec(b'{"execute":"qmp_capabilities"}\n',
                              b'{"execute":"object-add","arguments":{"qom-type":"rng-random",'
                              b'"id":"o1","filename":"/dev/urandom"}}\n',
                              b'{"execute":"object-add","arguments":{"qom-type":"rng-random",'
                              b'"id":"o2","props":{"filename":"/dev/random"}}}\n',
                              b'{"execute":"object-add","arguments":{"qom-type":"rng-builtin",'
                              b'"id":"o3","props":[1]}}\n',
                              b'{"execute":"object-del","arguments":{"id":"o1"}}\n',
                              b'{"execute":"human-monitor-command","arguments":'
                              b'{"command-line":"object_add rng-builtin,id=o4"}}\n'))
    # chardev-add's backends (libvirt's unix socket by getfd name too),
    # bad ones, chardev-remove, a virtserialport's device_add
    seed("qmp", "chardev", rec(b'{"execute":"qmp_capabilities"}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"c1","backend":'
                               b'{"type":"socket","data":{"addr":{"type":"unix","data":'
                               b'{"path":"/tmp/c1.sock"}},"server":true,"wait":false}}}}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"c2","backend":'
                               b'{"type":"socket","data":{"addr":{"type":"fd","data":'
                               b'{"str":"fdname"}},"server":true}}}}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"p1","backend":'
                               b'{"type":"pty","data":{}}}}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"f1","backend":'
                               b'{"type":"file","data":{"out":"/tmp/f,1","append":true}}}}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"n1","backend":'
                               b'{"type":"null"}}}\n',
                               b'{"execute":"chardev-add","arguments":{"id":"x","backend":7}}\n',
                               b'{"execute":"device_add","arguments":{"driver":"virtserialport",'
                               b'"bus":"vs0.0","nr":1,"chardev":"c1","id":"ch1",'
                               b'"name":"org.qemu.guest_agent.0"}}\n',
                               b'{"execute":"chardev-remove","arguments":{"id":"c1"}}\n'))

    def pkt(p):
        return b"$" + p + b"#" + b"%02x" % (sum(p) & 0xFF)
    gdb = b"+" + b"".join(pkt(p) for p in (
        b"qSupported:multiprocess+;xmlRegisters=i386", b"QStartNoAckMode", b"?", b"Hg1", b"g",
        b"p10", b"P0=0100000000000000", b"m1000,10", b"M1000,4:deadbeef", b"Z0,1000,1",
        b"z0,1000,1", b"qXfer:features:read:target.xml:0,ffb", b"qfThreadInfo", b"qsThreadInfo",
        b"T2", b"vCont?", b"vCont;s:1", b"qC", b"qAttached", b"c")) + b"\x03" + pkt(b"D")
    seed("gdbstub", "session", gdb)
    seed("gdbstub", "write-regs", pkt(b"G" + b"00" * 600) + pkt(b"k"))


# ---------------------------------------------------------------- state

def fdt(root):
    """A flattened device tree (version 17, as libfdt's sequential writer
    lays it out) from nested (name, [(prop, bytes)...], [children]) tuples."""
    strings = b""
    offsets = {}

    def pad4(b):
        return b + b"\0" * (-len(b) % 4)

    def node(name, props, kids):
        nonlocal strings
        out = struct.pack(">I", 1) + pad4(name.encode() + b"\0")
        for pname, val in props:
            if pname not in offsets:
                offsets[pname] = len(strings)
                strings += pname.encode() + b"\0"
            out += struct.pack(">III", 3, len(val), offsets[pname]) + pad4(val)
        for k in kids:
            out += node(*k)
        return out + struct.pack(">I", 2)

    dt = node(*root) + struct.pack(">I", 9)
    rsv = b"\0" * 16
    off_rsv, off_struct = 40, 56
    off_strings = off_struct + len(dt)
    total = off_strings + len(strings)
    hdr = struct.pack(">10I", 0xD00DFEED, total, off_struct, off_strings, off_rsv, 17, 16, 0,
                      len(strings), len(dt))
    return hdr + rsv + dt + strings


def state_seeds():
    u8 = lambda v: struct.pack(">B", v)
    u16 = lambda v: struct.pack(">H", v)
    u32 = lambda v: struct.pack(">I", v)
    u64 = lambda v: struct.pack(">Q", v)
    ver = ("version", u32(1))
    uart = ("serial@3f8", [ver, ("ier", u8(0x0F)), ("lcr", u8(0x03)), ("mcr", u8(0x13)),
                           ("lsr", u8(0x63)), ("msr", u8(0xB8)), ("scr", u8(0x5A)),
                           ("fcr", u8(0xC1)), ("divisor", u16(3)), ("thr-ipending", u8(1)),
                           ("rx-fifo", bytes(range(65, 81))), ("rx-head", u32(7)),
                           ("rx-count", u32(16))], [])
    cmos = bytearray((i * 13 + 1) & 0xFF for i in range(128))
    cmos[0x0A:0x0E] = b"\x26\x42\x40\x80"  # 1024 Hz, PIE (the clock runs), PF, VRT
    rtc = ("rtc@70", [ver, ("cmos", bytes(cmos)),
                      ("index", u8(0x2A)), ("offset", u64(150000000))], [])

    def chip(port, base, elcr):
        return ("pic@%x" % port, [ver, ("irr", u8(0x41)), ("isr", u8(0x02)), ("imr", u8(0xB8)),
                                  ("last-level", u8(0x41)), ("elcr", u8(elcr)),
                                  ("base", u8(base)), ("priority-add", u8(4)), ("icw1", u8(0x11)),
                                  ("init-step", u8(0)), ("read-isr", u8(1)), ("poll", u8(0)),
                                  ("special-mask", u8(0)), ("auto-eoi", u8(0)),
                                  ("rotate-on-aeoi", u8(0)), ("sfnm", u8(0))], [])
    devices = ("devices", [ver], [uart, rtc, chip(0x20, 0x08, 0x20), chip(0xA0, 0x70, 0x0A)])
    good = fdt(("", [], [devices]))
    seed("state", "machine", good)
    seed("state", "uart-only", fdt(("", [], [("devices", [ver], [uart])])))
    seed("state", "truncated", good[:len(good) // 2])
    seed("state", "bad-totalsize", good[:4] + u32(len(good) + 64) + good[8:])
    seed("state", "bad-string-offset", good.replace(struct.pack(">III", 3, 4, 0), struct.pack(">III", 3, 4, 0xFFFF), 1))
    # values the devices refuse: FIFO indices out of range, a newer version
    bad = [(n, v) for n, v in uart[1]]
    bad[-1] = ("rx-count", u32(40))
    seed("state", "uart-rx-count", fdt(("", [], [("devices", [ver], [("serial@3f8", bad, [])])])))
    bad = [(n, u32(100) if n == "rx-head" else v) for n, v in uart[1]]
    seed("state", "uart-rx-head", fdt(("", [], [("devices", [ver], [("serial@3f8", bad, [])])])))
    for name, val in (("index", u8(0xFF)), ("offset", u64(0x7FFFFFFFFFFFFFF0))):
        bad = [(n, val if n == name else v) for n, v in rtc[1]]
        seed("state", "rtc-" + name, fdt(("", [], [("devices", [ver], [("rtc@70", bad, [])])])))
    newer = [("version", u32(7))] + rtc[1][1:]
    seed("state", "rtc-newer", fdt(("", [], [("devices", [ver], [("rtc@70", newer, [])])])))


def usb_seeds():
    """fuzz_usb.c: xHCI (window 0) as xhci_hcd starts it, a command ring
    with No Op, Enable Slot, a device command and a Link TRB back to its
    start; UHCI (window 1) reset, run, suspend."""
    def trb(param, status, control):
        return struct.pack("<QII", param, status, control)
    x = wr(0, 3, 0x40, 2)                                    # HCRST
    x += ram(0x10000, trb(0x11000, 16, 0))                   # ERST entry
    x += wr(0, 3, 0x1028, 1) + wr(0, 3, 0x1038, 0x11000)     # ERSTSZ, ERDP
    x += wr(0, 3, 0x1030, 0x10000) + wr(0, 3, 0x1034, 0)     # ERSTBA
    x += wr(0, 3, 0x58, 0x12001) + wr(0, 3, 0x5C, 0)         # CRCR
    x += wr(0, 3, 0x1020, 2) + wr(0, 3, 0x40, 5)             # IMAN.IE, RS | INTE
    ring = trb(0, 0, 23 << 10 | 1) + trb(0, 0, 9 << 10 | 1) + trb(0, 0, 11 << 10 | 1 << 24 | 1)
    ring += trb(0x12000, 0, 6 << 10 | 3)
    seed("usb", "xhci-commands", x + ram(0x12000, ring) + wr(0, 3, 0x2000, 0) +
         wr(0, 3, 0x1020, 3) + wr(0, 3, 0x1038, 0x11030 | 8) + rd(0, 3, 0x440))
    loop = trb(0x12000, 0, 6 << 10 | 1)                       # a Link TRB to itself
    seed("usb", "xhci-link-loop", x + ram(0x12000, loop) + wr(0, 3, 0x2000, 0) + rd(0, 3, 0x44))
    u = wr(1, 3, 0, 2, 1) + wr(1, 3, 8, 0x3000) + wr(1, 3, 0, 0xC1, 1) + rd(1, 3, 6, 1)
    u += wr(1, 3, 0x10, 0x1204, 1) + wr(1, 3, 0, 0x48, 1) + rd(1, 3, 2, 1) + rd(1, 3, 0xC, 0)
    seed("usb", "uhci-run-suspend", u)


def ahci_seeds():
    # AHCI (windows: ABAR, BAR 4); step N starts port N (command list at
    # 0x10000 + N * 0x1000); each command goes in a slot's header and table
    def cmd(port, slot, fis, prds, acmd=b"", write=False):
        clb = 0x10000 + port * 0x1000
        ct = 0x30000 + port * 0x4000 + slot * 0x200
        hdr = struct.pack("<IIII", 5 | (0x40 if write else 0) | len(prds) << 16, 0, ct, 0)
        tbl = fis.ljust(0x40, b"\0") + acmd.ljust(0x40, b"\0")
        for addr, n in prds:
            tbl += struct.pack("<IIII", addr, 0, 0, n - 1)
        return ram(clb + slot * 32, hdr) + ram(ct, tbl) + wr(0, 2, 0x100 + port * 0x80 + 0x38, 1 << slot)

    def h2d(op, lba=0, count=0, feat=0, c=0x80):
        return bytes([0x27, c, op, feat, lba & 0xFF, lba >> 8 & 0xFF, lba >> 16 & 0xFF, 0x40,
                      lba >> 24 & 0xFF, 0, 0, 0, count & 0xFF, count >> 8, 0, 0, 0, 0, 0, 0])
    regs = rd(0, 2, 0) + rd(0, 2, 0xC) + rd(0, 2, 0x10) + wr(1, 2, 0x10, 0x100) + rd(1, 2, 0x14)
    seed("ahci", "regs-reset-comreset", regs + wr(0, 2, 4, 1) + wr(0, 2, 0x12C, 1) + wr(0, 2, 0x12C, 0) + rd(0, 2, 0x128))
    seed("ahci", "identify", step(0) + cmd(0, 0, h2d(0xEC), [(0x50000, 512)]) + rd(0, 2, 0x110) + rd(0, 2, 0x120))
    seed("ahci", "read-dma-ext", step(0) + cmd(0, 1, h2d(0x25, 3, 4), [(0x50000, 1000), (0x52000, 1048)]))
    seed("ahci", "write-dma-flush", step(0) + ram(0x50000, b"W" * 200) +
         cmd(0, 2, h2d(0xCA, 5, 1), [(0x50000, 512)], write=True) + cmd(0, 3, h2d(0xEA), []))
    ncq = h2d(0x60, 8, 0, feat=2)
    ncq = ncq[:12] + bytes([7 << 3]) + ncq[13:]
    seed("ahci", "ncq-read", step(0) + wr(0, 2, 0x134, 1 << 7) + cmd(0, 7, ncq, [(0x50000, 1024)]))
    seed("ahci", "bad-prdt", step(0) + cmd(0, 0, h2d(0x25, 0, 8), [(0x50000, 512)]) +
         cmd(0, 1, h2d(0x25, 0, 1), [(0xFFFFF000, 512)]) + cmd(0, 2, h2d(0x25, 63, 2), [(0x50000, 1024)]))
    seed("ahci", "atapi-inquiry-read10", step(1) + cmd(1, 0, h2d(0xA1), [(0x50000, 512)]) +
         cmd(1, 1, h2d(0xA0, feat=1), [(0x50000, 36)], acmd=bytes([0x12, 0, 0, 0, 36])) +
         cmd(1, 2, h2d(0xA0), [(0x50000, 4096)], acmd=bytes([0x28, 0, 0, 0, 0, 1, 0, 0, 2])))
    seed("ahci", "srst", step(0) + cmd(0, 0, h2d(0, c=0)[:15] + b"\x04" + bytes(4), []) + cmd(0, 1, h2d(0, c=0), []))


def state_wlan_seeds():
    """wlan/medium_state.c's node: a medium under DE with a radar closure
    and two radios (one with an interface address), and its bad forms."""
    u16 = lambda v: struct.pack(">H", v)
    u32 = lambda v: struct.pack(">I", v)
    u64 = lambda v: struct.pack(">Q", v)
    ver = ("version", u32(1))

    def radio(i, port, vifs, freq):
        hw = bytes([0x42, 0, 0, 0, i, 0])
        return ("radio@%d" % i, [ver, ("port", u32(port)), ("hw", hw), ("vif-count", u32(len(vifs))),
                                 ("vifs", b"".join(vifs).ljust(24, b"\0")),
                                 ("vif-refs", bytes([2] * len(vifs)).ljust(4, b"\0")), ("nl-type", u16(0x10)),
                                 ("freq", u32(freq)), ("on-channel-ns", u64(30 * 10**9)),
                                 ("cac-wait-ns", u64(0))], [])

    def medium(radios, radar=(5590, 5610, 10**9), country=b"DE"):
        props = [ver, ("country", country), ("enforce", b"\1"), ("regdb", bytes(256)),
                 ("radar-count", u32(1)), ("radars", u32(radar[0]) + u32(radar[1]) + u64(radar[2])),
                 ("radio-count", u32(len(radios)))]
        tree = ("", [], [("devices", [ver], [("wlan-medium@0", props, radios)])])
        return fdt(tree)

    good = medium([radio(0, 0, [], 5500), radio(1, 1, [b"\x02\x11\x22\x33\x44\x55"], 5180)])
    seed("state_wlan", "medium", good)
    seed("state_wlan", "medium-truncated", good[:len(good) - 40])
    seed("state_wlan", "bad-port", medium([radio(0, 7, [], 5500)]))
    seed("state_wlan", "bad-radar", medium([], radar=(5610, 5590, 10**9)))
    seed("state_wlan", "bad-country", medium([], country=b"d1"))
    # vif_log.c's node: records of (count, length, the guest's ADD_MAC_ADDR)
    adds = [hwsim_mac(True, 1, b"\x02\x11\x22\x33\x44\x55"), hwsim_mac(True, 0, b"\x02\0\0\0\0\0")]
    recs = b"".join(bytes([2 - i, len(m)]) + m for i, m in enumerate(adds))
    relay = ("wlan-relay@0", [ver, ("vif-count", u32(2)), ("vif-bytes", u32(len(recs))), ("vifs", recs)], [])
    seed("state_wlan", "relay", fdt(("", [], [("devices", [ver], [relay])])))
    dels = hwsim_mac(False, 1, b"\x02\x11\x22\x33\x44\x55")
    bad = ("wlan-relay@0", [ver, ("vif-count", u32(1)), ("vif-bytes", u32(len(dels) + 2)),
                            ("vifs", bytes([1, len(dels)]) + dels)], [])
    seed("state_wlan", "relay-del", fdt(("", [], [("devices", [ver], [bad])])))


def migration_seeds():
    """vmm/migration.h's stream: blocks of 16 and 3 pages (fuzz_migration_stream.c)."""
    page = 4096

    def pad(b):
        return b + bytes(-len(b) % page)

    def bits(n, which):
        m = bytearray((n + 7) // 8)
        for i in which:
            m[i // 8] |= 1 << (i % 8)
        return bytes(m)

    def ram_pass(number, blocks):
        # blocks: per block a list with, per page, bytes (stored), b"" (zeros) or None (not sent)
        out = b"VMMPASS!" + struct.pack("<Q", number)
        for pages in blocks:
            sent = [j for j, p in enumerate(pages) if p is not None]
            stored = [j for j, p in enumerate(pages) if p]
            region = struct.pack("<QQ", len(pages) * page, 0) + bits(len(pages), sent) + bits(len(pages), stored)
            out = pad(out + region) + b"".join(p for p in pages if p)
        return out

    def stream(tree, passes):
        out = pad(b"VMMIGRAT" + struct.pack("<IIQII", 2, page, 0, 2, 0))
        for n, blocks in enumerate(passes):
            out += ram_pass(n + 1, blocks)
        out = pad(out + b"VMMSTATE" + struct.pack("<Q", len(tree)) + tree)
        return out + b"VMMEND!!" + struct.pack("<Q", len(out))

    a = [b""] * 16
    a[1], a[2], a[15] = bytes(range(256)) * 16, b"\x5a" * page, b"\x01" + bytes(page - 1)
    b = [b"", b"\xff" * page, b""]
    good = stream(b"tree", [[a, b]])
    seed("migration_stream", "two-blocks", good)
    seed("migration_stream", "all-zero", stream(b"t", [[[b""] * 16, [b""] * 3]]))
    again = [None] * 16
    again[1], again[3] = b"", b"\x07" * page
    seed("migration_stream", "three-passes", stream(b"tree", [[a, b], [again, [None] * 3], [[None] * 16, [b"", None, None]]]))
    seed("migration_stream", "truncated", good[:len(good) - 100])
    seed("migration_stream", "bad-trailer", good[:-8] + struct.pack("<Q", 1))
    seed("migration_stream", "wrong-size", stream(b"tree", [[[b""] * 17, b]]))
    # the return path's reply (vmm/migration.h): loaded, failed to load
    seed("migration_stream", "rp-loaded", b"VMMLOAD!" + struct.pack("<Q", 0))
    seed("migration_stream", "rp-failed", b"VMMLOAD!" + struct.pack("<Q", 1))


GROUPS = (netstack_seeds, usernet_seeds, regdb_seeds, loader_seeds, device_seeds, ahci_seeds, virtio_net_seeds,
          virtio_console_seeds, hwsim_seeds, control_seeds, state_seeds, state_wlan_seeds, usb_seeds,
          migration_seeds)

if __name__ == "__main__":
    # optional arguments: only these groups ("virtio_net" runs virtio_net_seeds)
    wanted = set(sys.argv[1:])
    for g in GROUPS:
        if not wanted or g.__name__[:-len("_seeds")] in wanted:
            g()
