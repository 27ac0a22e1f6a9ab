"""linux_net_peer.py — the host side of the Linux guest network tests
(linux-net.inc.sh) and bench/virtio-net-tcp.sh:

  send ADDR PORT FILE   accept one connection, send FILE, wait for the
                        peer to close; prints "SENT bytes seconds"
  sink ADDR PORT        accept one connection, read to EOF; prints
                        "SINK sha256 bytes seconds"
  get HOST PORT PATH    HTTP GET through the host's loopback; prints the
                        body, or "GET-ERROR reason" and exits 1
  mon SOCK CMD...       each CMD to a HMP monitor (vmm's or QEMU's) on a
                        unix socket; prints the output of each

A listener is ready when its "LISTEN" line is printed. seconds run from
accept to the last byte."""
import hashlib
import http.client
import socket
import sys
import time


def listen(addr, port):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(1)
    print("LISTEN", addr, port, flush=True)
    conn, _ = s.accept()
    return conn


def send(addr, port, path):
    conn = listen(addr, port)
    t0 = time.time()
    n = 0
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 16)
            if not block:
                break
            conn.sendall(block)
            n += len(block)
    conn.shutdown(socket.SHUT_WR)
    while conn.recv(4096):  # until the guest's side closes too
        pass
    print("SENT %d %.3f" % (n, time.time() - t0), flush=True)


def sink(addr, port):
    conn = listen(addr, port)
    t0 = time.time()
    h = hashlib.sha256()
    n = 0
    while True:
        block = conn.recv(1 << 18)
        if not block:
            break
        h.update(block)
        n += len(block)
    print("SINK %s %d %.3f" % (h.hexdigest(), n, time.time() - t0), flush=True)


def get(host, port, path):
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=20)
        c.request("GET", path)
        r = c.getresponse()
        sys.stdout.write(r.read().decode(errors="replace"))
    except (OSError, http.client.HTTPException) as e:
        print("GET-ERROR", e)
        sys.exit(1)


def mon(path, cmds):
    s = socket.socket(socket.AF_UNIX)
    for _ in range(600):
        try:
            s.connect(path)
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("monitor socket %s never appeared" % path)
    s.settimeout(20)
    buf = b""

    def until_prompt():
        nonlocal buf
        # QEMU's HMP echoes the command line with terminal escapes; vmm's
        # does not: both end an answer with their prompt.
        while b"(vmm) " not in buf and b"(qemu) " not in buf:
            data = s.recv(4096)
            if not data:
                sys.exit("monitor closed")
            buf += data
        i = buf.find(b"(vmm) ") if b"(vmm) " in buf else buf.find(b"(qemu) ")
        out, buf = buf[:i], buf[buf.index(b") ", i) + 2:]
        return out.decode(errors="replace")

    until_prompt()
    for cmd in cmds:
        s.sendall(cmd.encode() + b"\n")
        print(until_prompt(), flush=True)


if __name__ == "__main__":
    what, args = sys.argv[1], sys.argv[2:]
    if what == "send":
        send(*args)
    elif what == "sink":
        sink(*args)
    elif what == "get":
        get(*args)
    elif what == "mon":
        mon(args[0], args[1:])
    else:
        sys.exit("usage: see the docstring")
