# tests/ — unit suites (libcheck) live in tests/unit/<library>/, integration
# tests in tests/integration/. Each library's module.mk may also add its own.
# The nested runner itself (VMM_TEST_NESTED=always on a few tests): runs on
# every machine, so the path for machines without /dev/kvm stays tested.
INTEG_TESTS += tests/integration/nested-runner.sh
# Where one KVM test goes on a host whose KVM emulates ring 0 (kvm_pvm):
# place.sh's decision table, and every `# needs: native ring 0` mark on a
# script the build runs.
INTEG_TESTS += tests/integration/nested-place.sh
# The guest tests' blocking waits on a console (wait-output.inc.sh).
INTEG_TESTS += tests/integration/wait-output.sh
# The rooms' include arrows (README's "Where things are"), checked on
# every tracked C file.
INTEG_TESTS += tests/integration/include-arrows.sh
# -sandbox: vmm plus test-only monitor commands that break the
# allow-list; sandbox.sh also runs a representative set of tests sandboxed.
$(eval $(call program,tests/vmm-test,vmm/main.c tests/integration/sandbox_hooks.c,$(VMM_LIBS),$(VMM_LDLIBS)))
INTEG_TESTS += tests/integration/sandbox.sh
KVM_TESTS += tests/integration/sandbox.sh
# Durable disks: IDE and virtio-blk flushes reach fdatasync,
# cache= modes, SIGKILL after a flush, no write past the end.
INTEG_TESTS += tests/integration/disk-durable.sh
KVM_TESTS += tests/integration/disk-durable.sh
# make demo: its Debian-kernel guest, scripted, and the no-KVM preflight.
INTEG_TESTS += tests/integration/demo.sh
KVM_TESTS += tests/integration/demo.sh
# A real distribution end to end: Debian 12 (scripts/debian-disk.sh) from
# -hda through SeaBIOS to systemd, DHCP, both power-offs, a qcow2 overlay,
# QEMU as the reference: make check-linux (the disk takes ~8 min to build,
# and nested, where vmm reaches DEBIAN-READY in 206-355 s per boot at host
# load 7-14, the three boots take ~15-20 min).
LINUX_TESTS += tests/integration/debian-disk.sh
# An installer-style ISO of Debian's kernel that mounts its own medium
# (make check; 101 s nested), QEMU as the reference.
INTEG_TESTS += tests/integration/debian-iso.sh
KVM_TESTS += tests/integration/debian-iso.sh
# No global symbol in two libraries (the linker would silently bind one).
INTEG_TESTS += tests/integration/lib-symbols.sh
