#!/usr/bin/env python3
"""virtio-blk-image.py — the host side of tests/guest/virtio-blk.c.

  virtio-blk-image.py make IMG        a 16 MiB image: random data in A, D, E
  virtio-blk-image.py check ORIG IMG LOG
      what IMG must hold after the payload ran on a copy of ORIG (its serial
      output in LOG): B = A, C = the guest's pattern, D and E zeros (unless
      LOG says the device did not offer discard / write-zeroes), everything
      else unchanged. Compares the sha256 of each region and of the whole
      image; prints the regions that differ and exits 1 if any does.
"""
import hashlib
import os
import struct
import sys

SECTOR = 512
SIZE = 16 << 20
# name: (first sector, sectors); keep in step with tests/guest/virtio-blk.c
REGIONS = {"A": (0, 2048), "B": (4096, 2048), "C": (8192, 512),
           "D": (12288, 256), "E": (16384, 256)}
PATTERN_SEED = 0x5A


def span(name):
    first, count = REGIONS[name]
    return first * SECTOR, (first + count) * SECTOR


def pattern(first, count):
    return b"".join(struct.pack("<Q", s << 32 | PATTERN_SEED << 16 | w)
                    for s in range(first, first + count) for w in range(64))


def make(path):
    img = bytearray(SIZE)
    for name in "ADE":
        lo, hi = span(name)
        img[lo:hi] = os.urandom(hi - lo)
    with open(path, "wb") as f:
        f.write(img)


def expected(orig, log):
    img = bytearray(orig)
    a_lo, a_hi = span("A")
    b_lo, b_hi = span("B")
    img[b_lo:b_hi] = orig[a_lo:a_hi]
    c_lo, c_hi = span("C")
    img[c_lo:c_hi] = pattern(*REGIONS["C"])
    for name, op in (("D", "discard"), ("E", "write-zeroes")):
        if op + " not offered" not in log:
            lo, hi = span(name)
            img[lo:hi] = bytes(hi - lo)
    return img


def sha(b):
    return hashlib.sha256(b).hexdigest()


def check(orig_path, img_path, log_path):
    orig = open(orig_path, "rb").read()
    got = open(img_path, "rb").read()
    log = open(log_path, errors="replace").read()
    want = expected(orig, log)
    bad = []
    if len(got) != len(want):
        bad.append("size %d, want %d" % (len(got), len(want)))
    for name in REGIONS:
        lo, hi = span(name)
        if sha(got[lo:hi]) != sha(want[lo:hi]):
            bad.append("region %s sha256 %s, want %s" % (name, sha(got[lo:hi])[:16],
                                                         sha(want[lo:hi])[:16]))
    if sha(got) != sha(want):
        bad.append("image sha256 %s, want %s" % (sha(got), sha(want)))
    for line in bad:
        print("image: " + line)
    if not bad:
        print("image: sha256 %s as expected" % sha(got))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
