"""core_mon.py — a client for vmm's HMP monitor on a unix socket, shared by
the core-*.sh integration tests: connect(path) waits for the socket and
eats the banner; cmd(text) sends one command and returns its output (the
text before the next "(vmm) " prompt)."""
import socket
import sys
import time

PROMPT = b"(vmm) "
_sock = None
_buf = b""


def until_prompt():
    global _buf
    while PROMPT not in _buf:
        data = _sock.recv(4096)
        if not data:
            sys.exit("monitor closed")
        _buf += data
    out, _, _buf = _buf.partition(PROMPT)
    return out.decode()


def connect(path):
    """Connect (retrying for 60 s: a loaded nested host) and return the banner."""
    global _sock
    for _ in range(1200):
        try:
            _sock = socket.socket(socket.AF_UNIX)
            _sock.connect(path)
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("monitor socket never appeared")
    _sock.settimeout(10)
    return until_prompt()


def cmd(text):
    _sock.sendall(text.encode() + b"\n")
    return until_prompt()


def send(text):
    """Send without waiting for the prompt (cont before the guest exits)."""
    _sock.sendall(text.encode() + b"\n")
