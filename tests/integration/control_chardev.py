"""control_chardev.py — character devices and strict QMP with -machine none
(no guest, no KVM), vmm beside QEMU 7.2 where QEMU runs the same line:
QMP over unix and tcp with QEMU's argument errors, a telnet monitor
session, a pty serial port opened by the test, query-chardev's filenames,
and a wait=on server socket that holds start-up until a client comes."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from qmp_client import Qmp

vmm = os.environ.get("VMM", "build/vmm")
qemu = shutil.which("qemu-system-x86_64")
tmp = tempfile.mkdtemp()
procs = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(prog, *args):
    cmd = [prog, "-machine", "none", "-nodefaults", "-display", "none"] + list(args)
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def stop(p):
    p.kill()
    p.wait()


def connect(port, timeout=10):
    for _ in range(200):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            return s
        except OSError:
            time.sleep(0.05)
    sys.exit("nothing listens on port %d" % port)


def read_until(s, needle, limit=10):
    buf = b""
    end = time.time() + limit
    while needle not in buf and time.time() < end:
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        if not data:
            break
        buf += data
    return buf


def request(q, name, args):
    """q.cmd, for arguments called "name" too."""
    q.next_id += 1
    q.raw(json.dumps({"execute": name, "arguments": args, "id": q.next_id}).encode() + b"\n")
    return q.reply()


def strict_qmp(q):
    """The answers QEMU gives: missing, wrong type, unexpected."""
    q.cmd("qmp_capabilities")
    out = []
    for name, args in (("query-status", {"x": 1}), ("qom-list", {}),
                       ("qom-list", {"path": 1}), ("set_link", {"name": "n"}),
                       ("qom-list-types", {"abstract": "yes"}),
                       ("human-monitor-command", {"command-line": "info version", "y": 0})):
        rep = request(q, name, args)
        out.append((name, rep.get("error")))
    return out


def qmp_case(prog, spec, where):
    p = start(prog, "-qmp", spec)
    q = Qmp(where)
    answers = strict_qmp(q)
    types = {t["name"] for t in q.cmd("qom-list-types")["return"]}
    stop(p)
    return answers, types


# 1. QMP over unix and tcp: the same errors as QEMU, and for QEMU's words.
port = free_port()
vmm_unix, vmm_types = qmp_case(vmm, "unix:%s/v.sock,server=on,wait=off" % tmp, tmp + "/v.sock")
vmm_tcp, _ = qmp_case(vmm, "tcp:127.0.0.1:%d,server,nowait" % port, ("127.0.0.1", port))
assert vmm_unix == vmm_tcp, (vmm_unix, vmm_tcp)
for name, e in vmm_unix:
    assert e and e["class"] == "GenericError", (name, e)
assert vmm_unix[0][1]["desc"] == "Parameter 'x' is unexpected", vmm_unix
for t in ("edu", "intel-iommu", "pci-testdev", "pc-testdev", "virtio-wlan-pci"):
    assert t in vmm_types, t
if qemu:
    qemu_unix, qemu_types = qmp_case(qemu, "unix:%s/q.sock,server=on,wait=off" % tmp,
                                     tmp + "/q.sock")
    assert vmm_unix == qemu_unix, (vmm_unix, qemu_unix)
    for t in ("edu", "intel-iommu", "pci-testdev", "pc-testdev"):
        assert t in qemu_types, t
print("QMP over unix and tcp: %d argument errors as QEMU's" % len(vmm_unix))


# 2. A telnet monitor: the option greeting, then an HMP session.
def telnet_session(prog):
    port = free_port()
    p = start(prog, "-monitor", "telnet:127.0.0.1:%d,server=on,wait=off" % port)
    s = connect(port)
    banner = read_until(s, b"(")
    # a client's negotiation (IAC DO option 'x') must not reach the monitor
    s.sendall(b"\xff\xfdxinfo version\r\n")
    out = read_until(s, b"\n(", 10)
    s.close()
    stop(p)
    return banner, out


banner, out = telnet_session(vmm)
assert banner.startswith(b"\xff\xfb\x01"), banner  # IAC WILL ECHO
assert b"\xff" not in out and b"xinfo" not in out and b"unknown" not in out, out
answer = out.split(b"info version", 1)[-1].strip().split(b"\n")[0]
assert b"info version" in out and answer[:1].isalnum(), out  # the echo, then the answer
if qemu:
    qbanner, qout = telnet_session(qemu)
    assert qbanner[:3] == banner[:3] and b"7.2" in qout, (qbanner, qout)
print("telnet monitor: greeting, echo and `info version`")

# 3. A pty serial port: announced as QEMU does, listed, opened by the test.
p = start(vmm, "-serial", "pty", "-qmp", "unix:%s/p.sock,server=on,wait=off" % tmp)
line = p.stdout.readline().decode()
assert line.startswith("char device redirected to /dev/pts/") and \
    line.rstrip().endswith("(label serial0)"), line
pts = line.split()[4]
fd = os.open(pts, os.O_RDWR | os.O_NOCTTY)
os.close(fd)
q = Qmp(tmp + "/p.sock")
q.cmd("qmp_capabilities")
chardevs = {c["label"]: c["filename"] for c in q.cmd("query-chardev")["return"]}
assert chardevs.get("serial0") == "pty:" + pts, chardevs
stop(p)
print("pty serial: %s opened, query-chardev says pty:%s" % (pts, pts))

# 4. wait=on: start-up (the QMP socket) waits for the first client.
port = free_port()
qsock = tmp + "/w.sock"
p = start(vmm, "-chardev", "socket,id=mon0,host=127.0.0.1,port=%d,server=on,wait=on,telnet=on"
          % port, "-mon", "chardev=mon0,mode=readline", "-qmp",
          "unix:%s,server=on,wait=off" % qsock)
time.sleep(1.5)
assert p.poll() is None and not os.path.exists(qsock), "did not wait for a client"
s = connect(port)
q = Qmp(qsock)
q.cmd("qmp_capabilities")
chardevs = {c["label"]: c["filename"] for c in q.cmd("query-chardev")["return"]}
want = "telnet:127.0.0.1:%d,server=on <-> 127.0.0.1:%d" % (port, s.getsockname()[1])
assert chardevs.get("mon0") == want, (chardevs, want)
s.close()
stop(p)
print("wait=on held start-up until a client connected; query-chardev: %s" % want)


# 5. -chardev ringbuf/memory: QMP ringbuf-write/-read (the newest bytes
# kept, utf8 and base64, QEMU's errors) answer as QEMU's do; HMP's
# ringbuf_write/ringbuf_read on a ringbuf behind -serial chardev:ID.
RING_CASES = (
    ("ringbuf-write", {"device": "r", "data": "hello world"}),
    ("ringbuf-read", {"device": "r", "size": 100}),  # 8 bytes kept: "lo world"
    ("ringbuf-read", {"device": "r", "size": 100}),
    ("ringbuf-write", {"device": "r", "data": "aGk=", "format": "base64"}),
    ("ringbuf-read", {"device": "r", "size": 1}),
    ("ringbuf-read", {"device": "r", "size": 5, "format": "base64"}),
    ("ringbuf-write", {"device": "m", "data": "QUJD", "format": "base64"}),
    ("ringbuf-read", {"device": "m", "size": 2}),
    ("ringbuf-read", {"device": "m", "size": 2, "format": "utf8"}),
    ("ringbuf-read", {"device": "r", "size": 0}),
    ("ringbuf-read", {"device": "m", "size": -1}),
    ("ringbuf-read", {"device": "x", "size": 3}),
    ("ringbuf-read", {"device": "n", "size": 3}),
    ("ringbuf-write", {"device": "n", "data": "a"}),
    ("ringbuf-write", {"device": "r", "data": "!!!", "format": "base64"}),
    ("ringbuf-write", {"device": "r", "data": "a", "format": "hex"}),
    ("ringbuf-read", {"device": "r", "size": "3"}),
)


def ringbuf_session(prog):
    sock = "%s/rb-%s.sock" % (tmp, os.path.basename(prog))
    p = start(prog, "-chardev", "ringbuf,id=r,size=8", "-chardev", "memory,id=m",
              "-chardev", "null,id=n", "-qmp", "unix:%s,server=on,wait=off" % sock)
    q = Qmp(sock)
    q.cmd("qmp_capabilities")
    out = [(name, args, {k: v for k, v in request(q, name, args).items() if k != "id"})
           for name, args in RING_CASES]
    chardevs = {c["label"]: (c["filename"], c["frontend-open"])
                for c in q.cmd("query-chardev")["return"]}
    stop(p)
    return out, chardevs


vmm_ring, vmm_chardevs = ringbuf_session(vmm)
assert vmm_ring[1][2] == {"return": "lo world"}, vmm_ring[1]
assert vmm_chardevs.get("r") == ("ringbuf", False) and vmm_chardevs.get("m") == ("memory", False), \
    vmm_chardevs
if qemu:
    qemu_ring, qemu_chardevs = ringbuf_session(qemu)
    for mine, theirs in zip(vmm_ring, qemu_ring):
        assert mine == theirs, (mine, theirs)
    for label in ("r", "m", "n"):
        assert vmm_chardevs.get(label) == qemu_chardevs.get(label), (vmm_chardevs, qemu_chardevs)
for size in ("7", "x"):
    r = subprocess.run([vmm, "-machine", "none", "-nodefaults", "-chardev",
                        "ringbuf,id=r,size=" + size], capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "size" in r.stderr, (size, r.returncode, r.stderr)
assert "size of ringbuf chardev must be power of two" in subprocess.run(
    [vmm, "-machine", "none", "-chardev", "ringbuf,id=r,size=7"], capture_output=True,
    text=True, timeout=10).stderr

# HMP on a telnet monitor: a ringbuf behind -serial chardev:ID too
port = free_port()
p = start(vmm, "-chardev", "ringbuf,id=r,size=16", "-serial", "chardev:r", "-monitor",
          "telnet:127.0.0.1:%d,server=on,wait=off" % port)
s = connect(port)
read_until(s, b"(")
hmp = b""
for line in (b"ringbuf_write r a\\\\bz", b"ringbuf_read r 100", b"ringbuf_read r 100",
             b"ringbuf_read nosuch 1", b"ringbuf_read r 0"):
    s.sendall(line + b"\r\n")
    hmp += read_until(s, b"\n(", 10)
s.close()
stop(p)
hmp = hmp.replace(b"\r\n", b"\n")
for want in (b"\na\\\\\\\\bz\n", b"Error: Device 'nosuch' not found\n",
             b"Error: size must be greater than zero\n"):
    assert want in hmp, (want, hmp)
print("ringbuf: %d QMP answers as QEMU's, HMP ringbuf_read escapes" % len(vmm_ring))


# 6. -qmp stdio: the session on the process's stdin and stdout, as QEMU's.
def stdio_session(prog):
    p = subprocess.Popen([prog, "-machine", "none", "-nodefaults", "-display", "none", "-qmp",
                          "stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    lines = [{"execute": "qmp_capabilities", "id": 1},
             {"execute": "query-status", "arguments": {"x": 1}, "id": 2},
             {"execute": "no-such-command", "id": 3},
             {"execute": "quit", "id": 4}]
    out, _ = p.communicate("".join(json.dumps(x) + "\n" for x in lines).encode(), timeout=20)
    msgs = [json.loads(x) for x in out.decode().splitlines() if x.strip()]
    assert msgs and "QMP" in msgs[0], (prog, out)
    shown = []
    for m in msgs[1:]:
        if "event" in m:
            shown.append(("event", m["event"], m.get("data")))
        else:
            shown.append((m.get("id"), m.get("return"), m.get("error")))
    return p.returncode, shown


rc, vmm_stdio = stdio_session(vmm)
assert rc == 0 and len(vmm_stdio) >= 4, (rc, vmm_stdio)
assert vmm_stdio[0] == (1, {}, None) and vmm_stdio[1][2]["desc"] == "Parameter 'x' is unexpected", \
    vmm_stdio
if qemu:
    qrc, qemu_stdio = stdio_session(qemu)
    # the same messages (QEMU sends quit's SHUTDOWN before its reply, vmm after)
    assert (rc, sorted(map(repr, vmm_stdio))) == (qrc, sorted(map(repr, qemu_stdio))), \
        (vmm_stdio, qemu_stdio)
r = subprocess.run([vmm, "-machine", "none", "-qmp", "stdio"], stdin=subprocess.DEVNULL,
                   capture_output=True, text=True, timeout=10)
assert r.returncode != 0 and "stdio" in r.stderr, r  # the default serial has the terminal
print("-qmp stdio: %d messages as QEMU's" % len(vmm_stdio))


# 7. A client socket (server=off) for the monitor, as -chardev + -mon and
# as -monitor tcp:: connected at start-up, and with reconnect=1 dialled
# again after the peer hangs up, as QEMU does.
CLIENT_LINES = (("-chardev", "socket,id=c,host=127.0.0.1,port=%d,reconnect=1", "-mon",
                 "chardev=c,mode=readline"),
                ("-monitor", "tcp:127.0.0.1:%d,reconnect=1"))


def reconnect_sessions(prog, line):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(10)
    port = srv.getsockname()[1]
    p = start(prog, *[a % port if "%d" in a else a for a in line])
    answers = []
    for _ in range(2):
        t0 = time.time()
        s, _ = srv.accept()
        s.settimeout(5)
        banner = read_until(s, b"(", 5)
        s.sendall(b"info version\n")
        out = read_until(s, b"\n(", 5)
        s.close()
        answers.append((b"monitor" in banner, b"\n(" in out, time.time() - t0))
    stop(p)
    srv.close()
    return answers


for line in CLIENT_LINES:
    vmm_rc = reconnect_sessions(vmm, line)
    assert all(b and o for b, o, _ in vmm_rc) and vmm_rc[1][2] < 4, (line, vmm_rc)
    if qemu:
        qemu_rc = reconnect_sessions(qemu, line)
        assert [a[:2] for a in qemu_rc] == [a[:2] for a in vmm_rc], (line, qemu_rc, vmm_rc)
port = free_port()
r = subprocess.run([vmm, "-machine", "none", "-nodefaults", "-chardev",
                    "socket,id=c,host=127.0.0.1,port=%d" % port, "-mon", "chardev=c"],
                   capture_output=True, text=True, timeout=10)
want = "Failed to connect to '127.0.0.1:%d': Connection refused" % port
assert r.returncode != 0 and want in r.stderr, r
print("client socket: the monitor reconnected after %.1f s; no peer: %s" % (vmm_rc[1][2], want))
