"""qmp_client.py — a minimal QMP client for vmm's tests (socket + json).

Qmp(path_or_addr) connects (retrying), reads the greeting (.greeting);
cmd(name, **args) sends one request with an id and returns the reply
dict (with "return" or "error"), collecting any events that arrive in
between; events(name, timeout) waits for an event; raw(bytes) sends
bytes as they are."""
import json
import socket
import sys
import time


class Qmp:
    def __init__(self, where, timeout=10):
        self.sock = self._connect(where)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.pending = []   # events received, not yet claimed
        self.next_id = 0
        self.greeting = self.read()

    @staticmethod
    def _connect(where):
        for _ in range(1200):
            try:
                if isinstance(where, tuple):
                    s = socket.create_connection(where)
                else:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(where)
                return s
            except OSError:
                time.sleep(0.05)
        sys.exit("QMP socket %r never appeared" % (where,))

    def read(self):
        """The next JSON message (one per line)."""
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("QMP connection closed")
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def raw(self, data):
        self.sock.sendall(data)

    def reply(self):
        """The next non-event message; events go to self.pending."""
        while True:
            msg = self.read()
            if "event" in msg:
                self.pending.append(msg)
            else:
                return msg

    def cmd(self, name, **args):
        self.next_id += 1
        req = {"execute": name, "id": self.next_id}
        if args:
            req["arguments"] = args
        self.raw(json.dumps(req).encode() + b"\n")
        r = self.reply()
        assert r.get("id") == self.next_id, (req, r)
        return r

    def ok(self, name, **args):
        r = self.cmd(name, **args)
        assert "return" in r, (name, r)
        return r["return"]

    def event(self, name, timeout=30):
        deadline = time.time() + timeout
        while True:
            for i, ev in enumerate(self.pending):
                if ev["event"] == name:
                    return self.pending.pop(i)
            if time.time() > deadline:
                raise TimeoutError("no %s event (have %s)" % (name, [e["event"] for e in self.pending]))
            self.sock.settimeout(max(0.1, deadline - time.time()))
            try:
                msg = self.read()
            except socket.timeout:
                continue
            assert "event" in msg, msg
            self.pending.append(msg)

    def close(self):
        self.sock.close()
