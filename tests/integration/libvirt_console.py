"""libvirt_console.py URI DOMAIN LOG TIMEOUT [MARKER [COMMAND]] — `virsh
console` on a pty, as a person would run it: wait for the guest's marker
(the test guest's VMM-GUEST-READY unless given), type a command (an echo,
or COMMAND followed by one) and wait for its answer, then leave with
Ctrl-]. Everything virsh printed goes to LOG. Exit 0, or 1 with the
reason."""
import os
import pty
import select
import sys
import time

uri, domain, log_path, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
marker = sys.argv[5].encode() if len(sys.argv) > 5 else b"VMM-GUEST-READY"
command = sys.argv[6] + "; " if len(sys.argv) > 6 else ""
pid, fd = pty.fork()
if pid == 0:
    os.execvp("virsh", ["virsh", "-c", uri, "console", domain, "--force"])

seen = b""
log = open(log_path, "wb")


def wait_for(text, limit):
    global seen
    deadline = time.time() + limit
    while text not in seen:
        left = deadline - time.time()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], min(left, 1.0))
        if not r:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            return False
        if not data:
            return False
        seen += data
        log.write(data)
        log.flush()
    return True


def finish(status, why):
    try:
        os.write(fd, b"\x1d")  # Ctrl-]: virsh console detaches
    except OSError:
        pass
    time.sleep(0.5)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    print(why)
    sys.exit(status)


t0 = time.time()
if not wait_for(marker, timeout):
    finish(1, "FAIL: no %s on the console after %d s" % (marker.decode(), timeout))
print("console: guest ready after %.0f s" % (time.time() - t0))
time.sleep(1)
# Typed through the pty: checks the input direction too.
os.write(fd, (command + "echo VMM-CONSOLE-$((6*7))\r").encode())
if not wait_for(b"VMM-CONSOLE-42", 120):
    finish(1, "FAIL: the guest's shell did not answer through the console")
finish(0, "console: marker seen, the shell answered")
