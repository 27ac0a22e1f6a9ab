"""libvirt_probe.py — libvirt 9.0's capability probe against vmm, without
libvirt and without KVM: the command line it runs (-machine none,
-daemonize, -pidfile, -qmp), the QMP it sends (tests/shared/libvirt's
recorded sequence), the answers it cannot do without, and garbage in
every argument of every command (vmm answers and stays up)."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from qmp_client import Qmp

vmm = os.environ.get("VMM", "build/vmm")
tmp = tempfile.mkdtemp()
sock, pidfile = tmp + "/qmp.sock", tmp + "/vmm.pid"

# libvirt's probe: the foreground process returns once the socket listens
# and the pidfile exists.
r = subprocess.run([vmm, "-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
                    "none,accel=kvm:tcg", "-qmp", "unix:%s,server=on,wait=off" % sock,
                    "-pidfile", pidfile, "-daemonize"], capture_output=True, timeout=30)
assert r.returncode == 0, r
assert os.path.exists(sock) and os.path.exists(pidfile), os.listdir(tmp)
pid = int(open(pidfile).read())
q = Qmp(sock)
assert q.greeting["QMP"]["version"]["qemu"]["major"] >= 5, q.greeting


def ok(name, **args):
    rep = q.cmd(name, **args)
    assert "return" in rep, (name, args, rep)
    return rep["return"]


def err(name, cls, **args):
    rep = q.cmd(name, **args)
    assert rep.get("error", {}).get("class") == cls, (name, args, rep)


# What libvirt 9.0 sends, in its order; these must all succeed.
ok("qmp_capabilities")
v = ok("query-version")["qemu"]
assert (v["major"], v["minor"]) >= (4, 2), v
assert ok("query-target")["arch"] == "x86_64"
schema = ok("query-qmp-schema")
commands = [c["name"] for c in ok("query-commands")]
kvm = ok("query-kvm")
assert kvm["present"] == os.access("/dev/kvm", os.R_OK | os.W_OK), kvm
types = {t["name"] for t in ok("qom-list-types")}
for t in ("isa-serial", "virtio-blk-pci", "virtio-net-pci", "pc-i440fx-7.2-machine",
          "none-machine", "kvm-accel", "memory-backend-ram"):
    assert t in types, t
assert "tcg-accel" not in types  # no TCG: libvirt refuses type='qemu'
props = {p["name"] for p in ok("device-list-properties", typename="virtio-blk-pci")}
assert {"drive", "bootindex"} <= props, props
err("device-list-properties", "DeviceNotFound", typename="virtio-scsi-pci")
# q35 domains: without pcie-root-port libvirt asks for ioh3420 instead
assert {"pcie-root-port", "ich9-ahci", "ide-hd", "ide-cd", "qemu-xhci", "virtio-serial-pci",
        "virtio-balloon-pci"} <= types, types
# without disable-legacy on virtio-balloon-pci libvirt takes vmm's virtio
# devices for conventional PCI and asks q35 domains for a DMI-to-PCI bridge
for dev in ("virtio-balloon-pci", "virtio-blk-pci", "virtio-net-pci", "virtio-serial-pci"):
    props = {p["name"] for p in ok("device-list-properties", typename=dev)}
    assert "disable-legacy" in props, (dev, props)
# ... and the non-transitional names make libvirt put them on root ports
for dev in ("virtio-blk-pci", "virtio-net-pci", "virtio-rng-pci", "virtio-serial-pci",
            "virtio-balloon-pci"):
    assert dev + "-non-transitional" in types, (dev, types)
# <pm> (virt-install writes suspend-to-mem/disk off) needs disable_s3/_s4
for pm in ("PIIX4_PM", "ICH9-LPC"):
    props = {p["name"] for p in ok("device-list-properties", typename=pm)}
    assert {"disable_s3", "disable_s4"} <= props, (pm, props)
# libvirt 9.0 crashes if these two are errors
assert ok("qom-list-properties", typename="memory-backend-file") == []
assert isinstance(ok("qom-list-properties", typename="none-machine"), list)
machines = ok("query-machines")
pc = [m for m in machines if m.get("alias") == "pc"]
assert pc and pc[0]["name"].startswith("pc-i440fx-") and pc[0]["default-ram-id"] == "pc.ram"
# libvirt refuses a q35 domain (virt-install's default) unless it is listed
q35 = [m for m in machines if m.get("alias") == "q35"]
assert q35 and q35[0]["name"] == "pc-q35-7.2" and not q35[0]["is-default"], machines
# vmm's default model is host (vmm/cli.c), named as QEMU names CPU types
assert pc[0]["default-cpu-type"] == "host-x86_64-cpu", pc[0]
err("query-tpm-models", "CommandNotFound")
opts = {o["option"] for o in ok("query-command-line-options")}
assert "machine" in opts and "sandbox" not in opts, opts
caps = ok("query-migrate-capabilities")
assert {"capability": "events", "state": False} in caps, caps
# libvirt's native migration needs return-path on both sides
assert {"capability": "return-path", "state": False} in caps, caps

# The schema describes exactly vmm's commands, and each one's arguments.
by_name = {e["name"]: e for e in schema}
schema_cmds = sorted(e["name"] for e in schema if e["meta-type"] == "command")
assert schema_cmds == sorted(commands), (schema_cmds, commands)
for c in commands:
    assert by_name[by_name[c]["arg-type"]]["meta-type"] == "object", c
hmp_args = by_name[by_name["human-monitor-command"]["arg-type"]]["members"]
assert {"name": "command-line", "type": "str"} in hmp_args, hmp_args
for ev in ("STOP", "RESUME", "SHUTDOWN", "RESET", "POWERDOWN"):
    assert by_name[ev]["meta-type"] == "event", ev

# No guest behind -machine none: actions say so instead of crashing.
for c in ("stop", "cont", "system_reset", "system_powerdown"):
    err(c, "GenericError")
err("human-monitor-command", "GenericError", **{"command-line": "info registers"})
assert ok("query-status")["status"] == "prelaunch"
assert ok("query-cpus-fast") == [] and ok("query-block") == []
assert ok("query-named-block-nodes", flat=True) == [] and ok("query-jobs") == []
assert ok("qom-list", path="/machine/peripheral") == []
err("qom-list", "DeviceNotFound", path="/nowhere")
ok("migrate-set-capabilities", capabilities=[{"capability": "events", "state": True}])
ok("migrate-set-capabilities", capabilities=[{"capability": "return-path", "state": True}])
caps = ok("query-migrate-capabilities")
assert {"capability": "events", "state": True} in caps, caps
assert {"capability": "return-path", "state": True} in caps, caps
err("migrate-set-capabilities", "GenericError",
    capabilities=[{"capability": "postcopy-ram", "state": True}])
err("migrate-set-capabilities", "GenericError",
    capabilities=[{"capability": "return-path", "state": "yes"}])
ok("migrate-set-capabilities", capabilities=[{"capability": "return-path", "state": False}])
assert {"capability": "return-path", "state": False} in ok("query-migrate-capabilities")
# virsh migrate --auto-converge: the capability and its parameters
ok("migrate-set-capabilities", capabilities=[{"capability": "auto-converge", "state": True}])
assert {"capability": "auto-converge", "state": True} in ok("query-migrate-capabilities")
ok("migrate-set-parameters", **{"cpu-throttle-initial": 30, "cpu-throttle-increment": 5,
                                "max-cpu-throttle": 90})
par = ok("query-migrate-parameters")
assert (par["cpu-throttle-initial"], par["cpu-throttle-increment"], par["max-cpu-throttle"]) == \
    (30, 5, 90), par
err("migrate-set-parameters", "GenericError", **{"max-cpu-throttle": 100})
err("migrate-set-parameters", "GenericError", **{"cpu-throttle-initial": 0})
assert ok("query-migrate-parameters")["max-cpu-throttle"] == 90

# libvirt kills the probe with SIGTERM: a clean exit, the pidfile gone.
os.kill(pid, signal.SIGTERM)
for _ in range(600):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    time.sleep(0.05)
else:
    sys.exit("FAIL: vmm did not exit on SIGTERM")
assert not os.path.exists(pidfile), "pidfile left behind"

# Garbage in every argument of every command: an answer, never a crash.
# In the foreground this time, so sanitizer reports (ASan builds) show.
sock = tmp + "/qmp2.sock"
p = subprocess.Popen([vmm, "-machine", "none", "-nodefaults", "-qmp",
                      "unix:%s,server=on,wait=off" % sock], stderr=subprocess.PIPE)
q = Qmp(sock)
q.cmd("qmp_capabilities")
junk = [None, 5, -1, 1.5, True, "", "x" * 5000, [], [1, [2]], {}, {"a": {"b": []}}]
arg_names = {"path", "typename", "implements", "abstract", "option", "flat",
             "capabilities", "command-line", "cpu-index", "bogus"}
for c in commands:
    if c in ("quit", "qmp_capabilities"):
        continue
    for a in arg_names:
        for j in junk:
            rep = q.cmd(c, **{a: j})
            assert "return" in rep or "error" in rep, (c, a, j, rep)
assert p.poll() is None, "vmm died"
p.send_signal(signal.SIGTERM)
_, stderr = p.communicate(timeout=30)
stderr = stderr.decode(errors="replace")
assert p.returncode == 0 and "Sanitizer" not in stderr and "runtime error" not in stderr, \
    (p.returncode, stderr[-2000:])
print("ok: probe sequence, schema = commands, -machine none refuses actions, "
      "%d junk requests answered, SIGTERM exit" % (len(commands) * len(arg_names) * len(junk)))
