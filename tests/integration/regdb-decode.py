#!/usr/bin/env python3
"""Independent decoder of regulatory.db v20 for the regdb integration tests:
one line per rule in file order. Default: regdb dump --tsv's format; with
--raw: alpha2, DFS region number, rule length, raw flags, EIRP, start, end,
bandwidth and CAC seconds, separated by blanks."""
import struct
import sys

d = open(sys.argv[1], 'rb').read()
raw = '--raw' in sys.argv[2:]
assert d[:4] == b'RGDB' and struct.unpack('>I', d[4:8])[0] == 20
names = [(1, 'NO-OFDM'), (2, 'NO-OUTDOOR'), (4, 'DFS'), (8, 'NO-IR'), (16, 'AUTO-BW')]
regions = ['UNSET', 'FCC', 'ETSI', 'JP']
off = 8
while True:
    cc, ptr = struct.unpack_from('>2sH', d, off)
    off += 4
    if not ptr:
        break
    c = ptr * 4
    hlen, n, dfs = d[c], d[c + 1], d[c + 2]
    for i in range(n):
        r = struct.unpack_from('>H', d, c + ((hlen + 1) & ~1) + 2 * i)[0] * 4
        ln, flags, eirp, s, e, bw = struct.unpack_from('>BBHIII', d, r)
        if raw:
            cac = struct.unpack_from('>H', d, r + 16)[0] if ln >= 18 else 0
            print(cc.decode(), dfs, ln, flags, eirp, s, e, bw, cac)
        else:
            fl = ','.join(nm for b, nm in names if flags & b) or '-'
            print('\t'.join([cc.decode(), regions[dfs], str(s), str(e), str(bw), str(eirp), fl]))
