# vmm/ — the build/vmm program in three parts:
#   vmm/cli/      the command line: struct vmm_config, the option table and
#                 its parsers, the -cpu models (libcli.a, on its own so the
#                 unit tests and the fuzz target link it without a machine)
#   vmm/control/  the control plane: HMP monitor, QMP, gdbstub, listeners
#   vmm/          the machine: board, vCPU loop, irqchip modes, boot,
#                 chardevs, runstate, sandbox
# The control plane and the machine form libvmm.a.
cli_SRCS := $(wildcard vmm/cli/*.c)
$(eval $(call static_lib,cli,$(cli_SRCS),$(JANSSON_CFLAGS)))
vmm_SRCS := $(filter-out vmm/main.c,$(wildcard vmm/*.c vmm/control/*.c))
$(eval $(call static_lib,vmm,$(vmm_SRCS),$(JANSSON_CFLAGS)))
# the NICs' user networking: libusernet (netstack, libslirp)
VMM_NET_LIBS := libusernet.a libnetstack.a
# What a program built on the machine links, in link order.
VMM_LIBS = libvmm.a libcli.a libfirmware.a libdevices.a libbackends.a libwlan.a libregdb.a $(VMM_NET_LIBS) libkvm.a
VMM_LDLIBS = $(LZ4_LIBS) $(JANSSON_LIBS) $(SLIRP_LIBS) $$(WLAN_LDLIBS) $(SECCOMP_LIBS)
$(eval $(call program,vmm,vmm/main.c,$(VMM_LIBS),$(VMM_LDLIBS)))
$(eval $(call unit_test,vmm_cli_net,tests/unit/vmm/test_cli_net.c,libcli.a,$(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli,tests/unit/vmm/test_cli.c,libcli.a,$(JANSSON_LIBS)))
# the help verbs, --help against the option table, -smp and APIC IDs
$(eval $(call unit_test,vmm_cli_help,tests/unit/vmm/test_cli_help.c,libcli.a,$(JANSSON_LIBS)))
INTEG_TESTS += tests/integration/core-hello.sh
KVM_TESTS += tests/integration/core-hello.sh
BENCHES += bench/core-startup.sh
KVM_BENCHES += bench/core-startup.sh
INTEG_TESTS += tests/integration/core-monitor.sh
KVM_TESTS += tests/integration/core-monitor.sh
INTEG_TESTS += tests/integration/core-debug.sh
KVM_TESTS += tests/integration/core-debug.sh
$(eval $(call unit_test,vmm_monitor,tests/unit/vmm/test_monitor.c,$(VMM_LIBS),$(VMM_LDLIBS)))
$(eval $(call unit_test,vmm_qmp_args,tests/unit/vmm/test_qmp_args.c,$(VMM_LIBS),$(VMM_LDLIBS)))
# getfd/closefd names and the fd: URI parameter
$(eval $(call unit_test,vmm_qmp_fds,tests/unit/vmm/test_qmp_fds.c,$(VMM_LIBS),$(VMM_LDLIBS)))
# chardev-add / chardev-remove: backends, bad arguments, busy chardevs.
$(eval $(call unit_test,vmm_qmp_chardev,tests/unit/vmm/test_qmp_chardev.c,$(VMM_LIBS),$(VMM_LDLIBS)))
BENCHES += bench/core-pio.sh
KVM_BENCHES += bench/core-pio.sh
BENCHES += bench/core-mmio.sh
KVM_BENCHES += bench/core-mmio.sh
$(eval $(call unit_test,vmm_iret,tests/unit/vmm/test_iret.c vmm/kvm_pvm_iret.c,,))
INTEG_TESTS += tests/integration/migrate.sh
KVM_TESTS += tests/integration/migrate.sh
# ... with virtio-blk (qcow2), virtio-net on user networking and virtio-rng
INTEG_TESTS += tests/integration/migrate-virtio.sh
KVM_TESTS += tests/integration/migrate-virtio.sh
# a guest's NAT'd and hostfwd TCP connections across a unix: live
# migration (the host sockets passed along), QEMU as the reference
INTEG_TESTS += tests/integration/migrate-usernet.sh
KVM_TESTS += tests/integration/migrate-usernet.sh
# auto-converge: a guest dirtying faster than the migration, vmm and QEMU
INTEG_TESTS += tests/integration/migrate-converge.sh
KVM_TESTS += tests/integration/migrate-converge.sh
# live migrations back and forth between two processes, a busy 2-vCPU
# guest with a shared qcow2 disk and a transfer through hostfwd, a save
# and restore, every kernel_irqchip mode, QEMU too:
# make check-linux (nested, the 20 migrations alone outlast 15 minutes)
LINUX_TESTS += tests/integration/migrate-pingpong.sh
# a guest in a loop of counted port writes, saved and restored 5 times
# in each kernel_irqchip mode: no write repeated (KVM's I/O completion)
INTEG_TESTS += tests/integration/migrate-exits.sh
KVM_TESTS += tests/integration/migrate-exits.sh
# RAM at a guest's full speed (the kit's mem-dirty, ring 3): idle, 100 MB/s
# dirtying, save and restore; vmm, ASan and QEMU
INTEG_TESTS += tests/integration/migrate-kit.sh
KVM_TESTS += tests/integration/migrate-kit.sh
# virtio-balloon at a guest's full speed (the kit's balloon payload, ring 3):
# 256 MiB inflated leave the VMM's RSS, deflated pages come back zeroed;
# vmm, ASan and QEMU
INTEG_TESTS += tests/integration/balloon-kit.sh
KVM_TESTS += tests/integration/balloon-kit.sh
# ... with virtio-balloon (target, stats polling) and virtio-serial (a port open, data both ways)
INTEG_TESTS += tests/integration/migrate-devices.sh
KVM_TESTS += tests/integration/migrate-devices.sh
# ... after a disk and a NIC were hot-plugged, restored by a command line in another order
INTEG_TESTS += tests/integration/migrate-hotplug.sh
KVM_TESTS += tests/integration/migrate-hotplug.sh
# a guest whose VT-d unit translates its SATA disk's DMA and remaps its
# interrupts, saved and restored (vmm and QEMU)
INTEG_TESTS += tests/integration/migrate-iommu.sh
KVM_TESTS += tests/integration/migrate-iommu.sh
# the migration stream's framing (header, zero pages, truncation)
$(eval $(call unit_test,vmm_migration_stream,tests/unit/vmm/test_migration_stream.c vmm/migration_stream.c vmm/migration_prefault.c,,))
# the return path: the source waits for the destination's reply
$(eval $(call unit_test,vmm_migration_rp,tests/unit/vmm/test_migration_rp.c vmm/migration_stream.c vmm/migration_prefault.c,,))
# return-path against a stand-in destination, vmm to vmm (QEMU too)
INTEG_TESTS += tests/integration/migrate-return-path.sh
KVM_TESTS += tests/integration/migrate-return-path.sh
INTEG_TESTS += tests/integration/control-exit.sh
KVM_TESTS += tests/integration/control-exit.sh
$(eval $(call unit_test,vmm_cli_control,tests/unit/vmm/test_cli_control.c,libcli.a,$(JANSSON_LIBS)))
INTEG_TESTS += tests/integration/control-qmp.sh
KVM_TESTS += tests/integration/control-qmp.sh
INTEG_TESTS += tests/integration/control-gdb.sh
KVM_TESTS += tests/integration/control-gdb.sh
# QEMU's -cpu models and switches, and the tests' -cpu wrapper.
INTEG_TESTS += tests/integration/cpu-models.sh
# inputs checked before KVM, -smp errors and the help verbs against QEMU (no guest)
INTEG_TESTS += tests/integration/cli-qemu.sh
# libvirt 9.0 manages a vmm guest (two Linux boots: minutes where the
# guest's ring 0 is emulated, so with the Linux tests)
INTEG_TESTS += tests/integration/libvirt-probe.sh
# virsh attach-device / detach-device --live of a guest-agent channel
# (chardev-add with getfd, device_add virtserialport), on the kit's guest
INTEG_TESTS += tests/integration/libvirt-channel-hotplug.sh
KVM_TESTS += tests/integration/libvirt-channel-hotplug.sh
# virt-install's own q35 and pc domains, through libvirt's command line:
# every option and device taken (QEMU parses the same lines)
INTEG_TESTS += tests/integration/virt-install.sh
# character devices and strict QMP, beside QEMU (-machine none, no KVM)
INTEG_TESTS += tests/integration/control-chardev.sh
LINUX_TESTS += tests/integration/libvirt.sh
# virt-install's q35 and pc domains through libvirt's whole life cycle (QEMU too)
LINUX_TESTS += tests/integration/libvirt-virt-install.sh
# virsh save/restore, managedsave/start through the migration stream (QEMU too)
LINUX_TESTS += tests/integration/libvirt-save.sh
# virsh migrate --live between two libvirtds: native, --p2p, --p2p --tunnelled (QEMU too)
LINUX_TESTS += tests/integration/libvirt-migrate.sh
$(eval $(call unit_test,vmm_cli_libvirt,tests/unit/vmm/test_cli_libvirt.c,libcli.a,$(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli_rng,tests/unit/vmm/test_cli_rng.c,libcli.a,$(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli_vserial,tests/unit/vmm/test_cli_vserial.c,libcli.a,$(JANSSON_LIBS)))
$(eval $(call unit_test,vmm_cli_balloon,tests/unit/vmm/test_cli_balloon.c,libcli.a,$(JANSSON_LIBS)))
# pvpanic in the Linux guest: the DSDT's QEMU0001, a panic -> GUEST_PANICKED, status 4
LINUX_TESTS += tests/integration/linux-pvpanic.sh
# gdb against the Linux guest: break start_kernel, bt, info registers, detach
LINUX_TESTS += tests/integration/linux-gdb.sh
# The CPU models; the kvm_pvm host workaround's decoder and IRET.
$(eval $(call unit_test,vmm_cpuid,tests/unit/vmm/test_cpuid.c,libcli.a,))
$(eval $(call unit_test,vmm_insn,tests/unit/vmm/test_insn.c vmm/kvm_pvm_insn_decode.c,,))
# The exit counters.
$(eval $(call unit_test,vmm_exit_stats,tests/unit/vmm/test_exit_stats.c,$(VMM_LIBS),$(VMM_LDLIBS)))
# live pre-copy: passes, the final pass's device pages, throttle, cancel
$(eval $(call unit_test,vmm_migration_ram,tests/unit/vmm/test_migration_ram.c vmm/migration_ram.c vmm/migration_stream.c vmm/migration_prefault.c,,))
