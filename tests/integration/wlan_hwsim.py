"""wlan_hwsim.py — hwsim generic-netlink messages and the wlan-medium
daemon's sockets for the wlan-*.sh tests: a third encoder, independent of
the medium's (wlan/hwsim_msg.c) and the kit's (tests/guest/wlan.c)."""
import socket
import struct
import time

CMD_FRAME, CMD_TX_INFO, CMD_ADD_MAC = 2, 3, 7
A_RECEIVER, A_TRANSMITTER, A_FRAME, A_FLAGS, A_RX_RATE, A_SIGNAL = 1, 2, 3, 4, 5, 6
A_TX_INFO, A_COOKIE, A_FREQ = 7, 8, 19
STAT_ACK = 4
BCAST = b"\xff" * 6


def hw(n):
    return bytes([0x42, 0, 0, 0, n, 0])


def perm(n):
    return bytes([0x02, 0, 0, 0, n, 0])


def attr(t, data):
    a = struct.pack("<HH", 4 + len(data), t) + data
    return a + b"\0" * (-len(a) % 4)


def message(cmd, attrs):
    body = struct.pack("<BBH", cmd, 1, 0) + b"".join(attrs)
    return struct.pack("<IHHII", 16 + len(body), 0x1d, 0, 0, 0) + body


def frame_msg(radio, fc0, to, freq, cookie):
    f = bytes([fc0, 0, 0, 0]) + to + perm(radio) + perm(radio) + b"\0\0" + b"\xaa" * 8
    return message(CMD_FRAME, [attr(A_TRANSMITTER, hw(radio)), attr(A_FRAME, f),
                               attr(A_FLAGS, struct.pack("<I", 1)),
                               attr(A_FREQ, struct.pack("<I", freq)),
                               attr(A_TX_INFO, bytes([0, 1, 255, 0, 255, 0, 255, 0])),
                               attr(A_COOKIE, struct.pack("<Q", cookie))])


def add_mac_msg(radio):
    return message(CMD_ADD_MAC, [attr(A_TRANSMITTER, hw(radio)), attr(A_RECEIVER, perm(radio))])


def parse(msg):
    """(cmd, {attr type: bytes}) of one message."""
    length = struct.unpack_from("<I", msg)[0]
    assert length == len(msg), (length, len(msg))
    cmd, attrs, off = msg[16], {}, 20
    while off + 4 <= length:
        alen, t = struct.unpack_from("<HH", msg, off)
        assert alen >= 4 and off + alen <= length, (alen, off, length)
        attrs[t] = msg[off + 4:off + alen]
        off += (alen + 3) & ~3
    return cmd, attrs


def connect(path, secs=5):
    end = time.time() + secs
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.time() > end:
                raise
            time.sleep(0.05)


class Vm:
    """A VM's end of the daemon's socket: length-prefixed messages."""

    def __init__(self, path):
        self.s = connect(path)
        self.s.settimeout(0.3)
        self.buf = b""

    def send(self, msg):
        self.s.sendall(struct.pack("<I", len(msg)) + msg)

    def receive(self, secs=0.3):
        """Every message that arrives within secs, parsed."""
        out, end = [], time.time() + secs
        while time.time() < end:
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            self.buf += data
            while len(self.buf) >= 4:
                n = struct.unpack_from("<I", self.buf)[0]
                if len(self.buf) < 4 + n:
                    break
                out.append(parse(self.buf[4:4 + n]))
                self.buf = self.buf[4 + n:]
        return out


class Control:
    """The daemon's control socket: a line in, the answer up to the prompt."""
    PROMPT = b"(wlan-medium) "

    def __init__(self, path):
        self.s = connect(path)
        self.s.settimeout(10)
        self.buf = b""
        self.answer()

    def answer(self):
        while self.PROMPT not in self.buf:
            data = self.s.recv(65536)
            if not data:
                raise EOFError("control socket closed")
            self.buf += data
        out, _, self.buf = self.buf.partition(self.PROMPT)
        return out.decode()

    def cmd(self, line):
        self.s.sendall(line.encode() + b"\n")
        return self.answer()
