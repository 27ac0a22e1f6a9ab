#!/usr/bin/env python3
"""mkint13.py MBR IMAGE — a 4 MiB disk for int13-mbr.S: the boot sector,
then LBA 1-252 of seeded pseudo-random bytes; the 16-bit sums of LBA 1-125
and 126-252 go into the boot sector at 0x1f8 and 0x1fa."""
import sys, random
mbr, img = sys.argv[1], sys.argv[2]
b = bytearray(open(mbr, 'rb').read())
rng = random.Random(13)
disk = bytearray(4 << 20)
payload = bytes(rng.getrandbits(8) for _ in range(252 * 512))
disk[512:512 + len(payload)] = payload
def wsum(lo, hi):
    d = disk[lo * 512:hi * 512]
    return sum(d[i] | d[i + 1] << 8 for i in range(0, len(d), 2)) & 0xffff
b[0x1f8:0x1fa] = wsum(1, 126).to_bytes(2, 'little')
b[0x1fa:0x1fc] = wsum(126, 253).to_bytes(2, 'little')
disk[0:512] = b
open(img, 'wb').write(disk)
