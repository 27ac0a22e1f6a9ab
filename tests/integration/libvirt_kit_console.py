"""libvirt_kit_console.py URI DOMAIN LOG SECONDS TICK_MS [SEND] — watch the kit's
mem-dirty payload through `virsh console` for SECONDS after its first
tick line, typing SEND (bytes, e.g. "d" to start its rewriting) once that
tick came. Everything read goes to LOG. Prints one line:
"ticks FIRST LAST rewrite MB_PER_S" (the rate between its last two
"dirtied" reports, TICK_MS being its tick; 0 when fewer came) and exits 0; exits 1 with the reason when no tick came
within 60 s, the console closed, or the payload reported a damaged page."""
import os
import pty
import re
import select
import sys
import time

uri, domain, log_path, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
tick_ms = float(sys.argv[5])
send = sys.argv[6].encode() if len(sys.argv) > 6 else b""
TICK = re.compile(rb"mem-dirty: tick (\d+)\r?\n")  # whole lines only
DIRTIED = re.compile(rb"mem-dirty: dirtied (\d+) in (\d+)\r?\n")

pid, fd = pty.fork()
if pid == 0:
    os.execvp("virsh", ["virsh", "-c", uri, "console", domain, "--force"])

log = open(log_path, "wb")
seen = b""
first = last = None
deadline = time.time() + 60.0
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.5)
    if not r:
        continue
    try:
        data = os.read(fd, 65536)
    except OSError:
        data = b""
    if not data:
        sys.exit("the console closed")
    log.write(data)
    seen += data
    if b"mem-dirty: FAIL" in seen:
        sys.exit("the payload found its memory damaged: " +
                 seen[seen.index(b"mem-dirty: FAIL"):].split(b"\n")[0].decode(errors="replace"))
    ticks = [int(m) for m in TICK.findall(seen)]
    if ticks:
        if first is None:
            first = ticks[-1]
            deadline = time.time() + seconds
            if send:
                os.write(fd, send)
        last = ticks[-1]
if first is None:
    sys.exit("no tick line within 60 s")
dirtied = [(int(p), int(t)) for p, t in DIRTIED.findall(seen)]
rate = 0.0
if len(dirtied) > 1 and dirtied[-1][1] > dirtied[-2][1]:
    (p0, t0), (p1, t1) = dirtied[-2:]
    rate = (p1 - p0) * 4096 / ((t1 - t0) * tick_ms / 1000.0) / 1e6
os.write(fd, b"\x1d")  # Ctrl-]: virsh console leaves
os.waitpid(pid, 0)
print("ticks %d %d rewrite %.0f" % (first, last, rate))
