#!/usr/bin/env python3
"""udp-echo.py PORTFILE [ADDRESS] — a UDP echo server on ADDRESS (default
127.0.0.1; a free port, written to PORTFILE) for the virtio-net kit tests;
serves until killed."""
import socket
import sys

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind((sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    data, addr = s.recvfrom(65536)
    s.sendto(data, addr)
