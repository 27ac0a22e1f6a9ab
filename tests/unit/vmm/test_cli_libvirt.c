/* Unit tests for the options libvirt 9.0 puts on its command lines
 * (vmm/cli/cli_libvirt.c and the hooks in cli.c, cli_control.c): the whole
 * command line it built for a minimal domain (virtio disk, user NIC, pty
 * console), the capability probe's line, and what is refused. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "tests/unit/vmm/cli_args.h"
#include "vmm/cli/cli.h"

static struct vmm_config cfg;
static char err[512];

static int parse(const char *const *args)
{
	return cli_parse_list(args, &cfg, err, sizeof(err));
}

#define PARSE(...) parse((const char *const[]){__VA_ARGS__, NULL})

/* tests/shared/libvirt: libvirt 9.0's line with JSON -device/-netdev/-object. */
#define LIBVIRT_LINE                                                                               \
	"-name", "guest=mini,debug-threads=on", "-S", "-object",                                   \
		"{\"qom-type\":\"secret\",\"id\":\"masterKey0\",\"format\":\"raw\",\"file\":"      \
		"\"/var/lib/libvirt/qemu/domain-1-mini/master-key.aes\"}",                         \
		"-machine", "pc-i440fx-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram",     \
		"-accel", "kvm", "-m", "256", "-object",                                           \
		"{\"qom-type\":\"memory-backend-ram\",\"id\":\"pc.ram\",\"size\":268435456}",      \
		"-overcommit", "mem-lock=off", "-smp", "1,sockets=1,cores=1,threads=1", "-uuid",   \
		"73037727-5bfb-463a-8962-d6e02c1e0ded", "-display", "none", "-no-user-config",     \
		"-nodefaults", "-chardev", "socket,id=charmonitor,fd=28,server=on,wait=off",       \
		"-mon", "chardev=charmonitor,id=monitor,mode=control", "-rtc", "base=utc",         \
		"-no-shutdown", "-no-acpi", "-boot", "strict=on", "-kernel", "/srv/vmlinuz",       \
		"-initrd", "/srv/initrd.img", "-append", "console=ttyS0 panic=-1", "-blockdev",    \
		"{\"driver\":\"file\",\"filename\":\"/srv/disk.raw\",\"node-name\":\"libvirt-1-"   \
		"storage\",\"auto-read-only\":true,\"discard\":\"unmap\"}",                        \
		"-blockdev",                                                                       \
		"{\"node-name\":\"libvirt-1-format\",\"read-only\":false,\"driver\":\"raw\","      \
		"\"file\":\"libvirt-1-storage\"}",                                                 \
		"-device",                                                                         \
		"{\"driver\":\"virtio-blk-pci\",\"bus\":\"pci.0\",\"addr\":\"0x3\",\"drive\":"     \
		"\"libvirt-1-format\",\"id\":\"virtio-disk0\",\"bootindex\":1}",                   \
		"-netdev", "{\"type\":\"user\",\"id\":\"hostnet0\"}", "-device",                   \
		"{\"driver\":\"virtio-net-pci\",\"netdev\":\"hostnet0\",\"id\":\"net0\",\"mac\":"  \
		"\"52:54:00:e6:6d:0c\",\"bus\":\"pci.0\",\"addr\":\"0x2\"}",                       \
		"-chardev", "pty,id=charserial0", "-device",                                       \
		"{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\","       \
		"\"index\":0}",                                                                    \
		"-audiodev", "{\"id\":\"audio1\",\"driver\":\"none\"}", "-msg", "timestamp=on"

START_TEST(libvirt_command_line)
{
	const struct drive_spec *d;

	ck_assert_msg(PARSE(LIBVIRT_LINE) == 0, "%s", err);
	ck_assert_str_eq(cfg.name, "mini");
	ck_assert(cfg.start_paused);
	ck_assert_uint_eq(cfg.ram_size, 256ull << 20);
	ck_assert(cfg.lv.no_dump_guest_core && !cfg.lv.mem_lock);
	ck_assert(cfg.lv.no_acpi && cfg.lv.boot_strict && cfg.nodefaults);
	ck_assert(cfg.lv.has_uuid);
	ck_assert_uint_eq(cfg.lv.uuid[0], 0x73);
	ck_assert_uint_eq(cfg.lv.uuid[15], 0xed);
	/* the disk: file node under a raw node, the device names the raw node */
	ck_assert_uint_eq(cfg.n_vblk, 1);
	ck_assert_int_eq(cfg.vblk[0].bootindex, 1);
	ck_assert_int_eq(cfg.vblk[0].devfn, 3 << 3);
	ck_assert_str_eq(cfg.vblk[0].id, "virtio-disk0");
	d = &cfg.vdrives[cfg.vblk[0].drive];
	ck_assert_str_eq(d->file, "/srv/disk.raw");
	ck_assert_str_eq(d->id, "libvirt-1-format");
	ck_assert_str_eq(d->node_file, "libvirt-1-storage");
	ck_assert(!d->read_only);
	/* the console: COM1 on a pty labelled with libvirt's alias */
	ck_assert_uint_eq(cfg.n_serial, 1);
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_PTY);
	ck_assert_str_eq(cfg.serial[0].id, "charserial0");
	/* the NIC, and no default one */
	ck_assert_uint_eq(cfg.n_nics, 1);
	ck_assert_str_eq(cfg.nics[0].id, "net0");
	ck_assert_uint_eq(cfg.nics[0].mac[5], 0x0c);
	/* the monitor on libvirt's inherited socket */
	ck_assert_uint_eq(cfg.control.n_qmp, 1);
	ck_assert_int_eq(cfg.control.qmp[0].kind, LISTEN_FD);
	ck_assert_int_eq(cfg.control.qmp[0].fd, 28);
}
END_TEST

START_TEST(probe_command_line)
{
	ck_assert_msg(PARSE("-S", "-no-user-config", "-nodefaults", "-nographic", "-machine",
			    "none,accel=kvm:tcg", "-qmp", "unix:/tmp/q.sock,server=on,wait=off",
			    "-pidfile", "/tmp/q.pid", "-daemonize") == 0,
		      "%s", err);
	ck_assert(cfg.lv.machine_none);
	ck_assert_uint_eq(cfg.n_serial, 0); /* -nodefaults: nothing on stdio */
	ck_assert(cfg.control.daemonize);
	ck_assert_int_eq(PARSE("-machine", "pc"), 0);
	ck_assert(!cfg.lv.machine_none);
	ck_assert_uint_eq(cfg.n_serial, 1); /* the default mon:stdio */
}
END_TEST

/* libvirt's USB controllers: piix3-usb-uhci beside the PIIX3 (pc),
 * qemu-xhci with 15 + 15 ports (q35's default); -usb and usb=on add
 * QEMU's piix3-usb-uhci at 01.2, once. */
START_TEST(usb_controllers)
{
	ck_assert_int_eq(PARSE("-device",
			       "{\"driver\":\"piix3-usb-uhci\",\"id\":\"usb\",\"bus\":\"pci.0\","
			       "\"addr\":\"0x1.0x2\"}",
			       "-device",
			       "{\"driver\":\"qemu-xhci\",\"p2\":15,\"p3\":15,\"id\":\"usb1\","
			       "\"bus\":\"pci.0\",\"addr\":\"0x5\"}"),
			 0);
	ck_assert_uint_eq(cfg.n_devices, 2);
	ck_assert_int_eq(cfg.devices[0].kind, DEVICE_USB_UHCI);
	ck_assert_int_eq(cfg.devices[0].devfn, 1 << 3 | 2);
	ck_assert_int_eq(cfg.devices[1].kind, DEVICE_USB_XHCI);
	ck_assert_int_eq(cfg.devices[1].devfn, 5 << 3);
	ck_assert_uint_eq(cfg.devices[1].usb_p2, 15);
	ck_assert_uint_eq(cfg.devices[1].usb_p3, 15);
	ck_assert_int_eq(PARSE("-device", "qemu-xhci"), 0);
	ck_assert_uint_eq(cfg.devices[0].usb_p2, 4); /* QEMU's defaults */
	ck_assert_uint_eq(cfg.devices[0].usb_p3, 4);
	ck_assert_int_eq(cfg.devices[0].devfn, -1);
	ck_assert_int_eq(PARSE("-usb", "-machine", "pc,usb=on"), 0);
	ck_assert_uint_eq(cfg.n_devices, 1);
	ck_assert_int_eq(cfg.devices[0].kind, DEVICE_USB_UHCI);
	ck_assert_int_eq(cfg.devices[0].devfn, 1 << 3 | 2);
	ck_assert_int_eq(PARSE("-machine", "pc,usb=off"), 0);
	ck_assert_uint_eq(cfg.n_devices, 0);
	ck_assert_int_eq(PARSE("-device", "qemu-xhci,p2=0"), -1);
	ck_assert_ptr_nonnull(strstr(err, "invalid p2 '0'"));
	ck_assert_int_eq(PARSE("-device", "qemu-xhci,p3=16"), -1);
	ck_assert_int_eq(PARSE("-device", "qemu-xhci,streams=maybe"), -1);
	ck_assert_int_eq(PARSE("-device", "piix3-usb-uhci,bus=pci.1"), -1);
	ck_assert_int_eq(PARSE("-device", "piix3-usb-uhci,masterbus=usb.0"), -1);
	ck_assert_int_eq(PARSE("-device", "piix3-usb-uhci,addr=1.8"), -1);
}
END_TEST

/* libvirt's q35 spelling: root ports on pcie.0 (one per function of
 * slot 2), devices on them by id with addr 0, others on pcie.0 */
START_TEST(q35_root_ports)
{
	const struct root_port_spec *rp;

	ck_assert_msg(PARSE("-machine", "pc-q35-7.2,usb=off", "-m", "256", "-device",
			    "{\"driver\":\"pcie-root-port\",\"port\":16,\"chassis\":1,\"id\":"
			    "\"pci.1\",\"bus\":\"pcie.0\",\"multifunction\":true,\"addr\":\"0x2\"}",
			    "-device",
			    "{\"driver\":\"pcie-root-port\",\"port\":17,\"chassis\":2,\"id\":"
			    "\"pci.2\",\"bus\":\"pcie.0\",\"addr\":\"0x2.0x1\"}",
			    "-device",
			    "{\"driver\":\"virtio-rng-pci\",\"id\":\"rng0\",\"bus\":\"pci.2\","
			    "\"addr\":\"0x0\"}",
			    "-device",
			    "{\"driver\":\"virtio-rng-pci\",\"id\":\"rng1\",\"bus\":\"pcie.0\","
			    "\"addr\":\"0x5\"}") == 0,
		      "%s", err);
	ck_assert(cfg.q35);
	ck_assert_uint_eq(cfg.n_root_ports, 2);
	rp = &cfg.root_ports[0];
	ck_assert_str_eq(rp->id, "pci.1");
	ck_assert_int_eq(rp->devfn, 2 << 3);
	ck_assert_uint_eq(rp->port, 16);
	ck_assert_uint_eq(rp->chassis, 1);
	ck_assert(rp->multifunction);
	ck_assert_int_eq(cfg.root_ports[1].devfn, 2 << 3 | 1);
	ck_assert(!cfg.root_ports[1].multifunction);
	ck_assert_str_eq(cfg.rng.devs[0].bus, "pci.2");
	ck_assert_int_eq(cfg.rng.devs[0].devfn, 0);
	ck_assert_str_eq(cfg.rng.devs[1].bus, "");
	/* a bus nobody defined, a port off q35, a port without id */
	ck_assert_int_eq(PARSE("-M", "q35", "-device", "virtio-rng-pci,bus=pci.7,addr=0"), -1);
	ck_assert_ptr_nonnull(strstr(err, "bus 'pci.7' not found"));
	ck_assert_int_eq(PARSE("-device", "pcie-root-port,id=pci.1"), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs -machine q35"));
	ck_assert_int_eq(PARSE("-M", "q35", "-device", "pcie-root-port,port=1"), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs id="));
}
END_TEST

/* virt-install's globals: no S3, no S4 (pc's PIIX4_PM, q35's ICH9-LPC) */
START_TEST(pm_globals)
{
	ck_assert_int_eq(
		PARSE("-global", "PIIX4_PM.disable_s3=1", "-global", "PIIX4_PM.disable_s4=1"), 0);
	ck_assert(cfg.lv.no_s3);
	ck_assert_int_eq(PARSE("-M", "q35", "-global", "ICH9-LPC.disable_s3=0", "-global",
			       "ICH9-LPC.disable_s4=1"),
			 0);
	ck_assert(!cfg.lv.no_s3);
	ck_assert_int_eq(PARSE("-global", "PIIX4_PM.disable_s3=2"), -1);
	ck_assert_int_eq(PARSE("-global", "PIIX4_PM.acpi-root-pci-hotplug=off"), -1);
	ck_assert_ptr_nonnull(strstr(err, "unsupported 'PIIX4_PM.acpi-root-pci-hotplug=off'"));
}
END_TEST

START_TEST(refused_with_a_reason)
{
	ck_assert_int_eq(PARSE("-accel", "tcg"), -1);
	ck_assert_ptr_nonnull(strstr(err, "KVM only"));
	ck_assert_int_eq(PARSE("-machine", "pc,accel=tcg"), -1);
	ck_assert_int_eq(PARSE("-machine", "q35,usb=on", "-kernel", "k"), -1);
	ck_assert_ptr_nonnull(strstr(err, "no ICH9 USB"));
	ck_assert_int_eq(PARSE("-audiodev", "pa,id=a"), -1);
	ck_assert_ptr_nonnull(strstr(err, "no sound card"));
	ck_assert_int_eq(PARSE("-display", "gtk"), -1);
	ck_assert_int_eq(PARSE("-rtc", "base=localtime"), -1);
	ck_assert_int_eq(PARSE("-overcommit", "cpu-pm=on"), -1);
	ck_assert_int_eq(PARSE("-uuid", "not-a-uuid"), -1);
	ck_assert_int_eq(PARSE("-uuid", "73037727-5bfb-463a-8962-d6e02c1e0dez"), -1);
	ck_assert_int_eq(PARSE("-object", "memory-backend-file,id=m,size=1G,mem-path=/x"), -1);
	ck_assert_int_eq(PARSE("-machine", "memory-backend=nope"), -1);
	ck_assert_ptr_nonnull(strstr(err, "no -object memory-backend-ram,id=nope"));
	ck_assert_int_eq(PARSE("-m", "128", "-object", "memory-backend-ram,id=r,size=268435456",
			       "-machine", "memory-backend=r"),
			 -1);
	ck_assert_int_eq(PARSE("-blockdev", "{\"driver\":\"vmdk\",\"node-name\":\"v\"}"), -1);
	ck_assert_ptr_nonnull(strstr(err, "driver 'vmdk'"));
	ck_assert_int_eq(PARSE("-blockdev", "{\"driver\":\"qcow2\",\"node-name\":\"q\"}"), -1);
	ck_assert_ptr_nonnull(strstr(err, "qcow2: file= must name"));
	ck_assert_int_eq(
		PARSE("-blockdev", "{\"driver\":\"raw\",\"node-name\":\"r\",\"file\":\"x\"}"), -1);
	ck_assert_int_eq(PARSE("-blockdev", "{\"driver\":\"file\",\"node-name\":\"f\"}"), -1);
	ck_assert_int_eq(PARSE("-blockdev", "{\"driver\":"), -1);
	ck_assert_ptr_nonnull(strstr(err, "invalid JSON"));
	ck_assert_int_eq(PARSE("-blockdev", "{\"driver\":\"file\",\"node-name\":\"f\","
					    "\"filename\":\"/x\",\"x-frob\":1}"),
			 -1);
	ck_assert_int_eq(PARSE("-device", "{\"driver\":\"virtio-gpu-pci\",\"id\":\"g\"}"), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown device 'virtio-gpu-pci'"));
	ck_assert_int_eq(PARSE("-device", "{\"driver\":[1]}"), -1);
	ck_assert_int_eq(PARSE("-device", "{\"driver\":\"isa-serial\",\"chardev\":\"a,b\"}"), -1);
	ck_assert_int_eq(PARSE("-device", "[]"), -1);
	ck_assert_int_eq(PARSE("-device", "isa-serial,chardev=none"), -1);
	ck_assert_int_eq(PARSE("-chardev", "pty,id=p", "-device", "isa-serial,chardev=p", "-device",
			       "isa-serial,chardev=p"),
			 -1);
	ck_assert_int_eq(PARSE("-chardev", "socket,id=s,path=/tmp/s,server=on", "-device",
			       "isa-serial,chardev=s"),
			 -1);
}
END_TEST

/* libvirt's non-transitional virtio models: each virtio device takes the
 * transport switches that say "modern only", and refuses the opposite. */
START_TEST(virtio_transport_switches)
{
	static const char *const devs[] = {
		"virtio-blk-pci,drive=d", "virtio-net-pci,netdev=n", "virtio-rng-pci",
		"virtio-balloon-pci",	  "virtio-serial-pci",
	};
	char on[128], off[128], modern_off[128];

	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(on, sizeof(on), "%s,disable-legacy=on,disable-modern=off", devs[i]);
		snprintf(off, sizeof(off), "%s,disable-legacy=off", devs[i]);
		snprintf(modern_off, sizeof(modern_off), "%s,disable-modern=on", devs[i]);
		ck_assert_msg(PARSE("-drive", "if=none,id=d,file=/d.img", "-netdev", "user,id=n",
				    "-device", on) == 0,
			      "%s: %s", devs[i], err);
		ck_assert_int_eq(PARSE("-drive", "if=none,id=d,file=/d.img", "-netdev", "user,id=n",
				       "-device", off),
				 -1);
		ck_assert_msg(strstr(err, "disable-legacy"), "%s: %s", devs[i], err);
		ck_assert_int_eq(PARSE("-drive", "if=none,id=d,file=/d.img", "-netdev", "user,id=n",
				       "-device", modern_off),
				 -1);
	}
	/* libvirt's model='virtio-non-transitional' on an emulator that lists them */
	ck_assert_msg(PARSE("-drive", "if=none,id=d,file=/d.img", "-device",
			    "virtio-blk-pci-non-transitional,drive=d", "-device",
			    "virtio-balloon-pci-non-transitional", "-device",
			    "virtio-serial-pci-non-transitional") == 0,
		      "%s", err);
	ck_assert_uint_eq(cfg.n_vblk, 1);
	ck_assert(cfg.balloon.present);
	ck_assert_int_eq(PARSE("-device", "virtio-rng-pci-transitional"), -1);
	ck_assert_ptr_nonnull(strstr(err, "modern only"));
	ck_assert_msg(PARSE("-device", "{\"driver\":\"virtio-rng-pci\",\"id\":\"rng0\","
				       "\"disable-legacy\":\"on\",\"disable-modern\":false}") == 0,
		      "%s", err);
}
END_TEST

START_TEST(key_value_spellings)
{
	/* the same without JSON, as libvirt writes it for older emulators */
	ck_assert_msg(PARSE("-blockdev", "driver=file,filename=/d.img,node-name=f,cache.direct=on",
			    "-blockdev", "driver=raw,node-name=r,file=f,read-only=on", "-device",
			    "virtio-blk-pci,drive=r,id=disk", "-chardev", "file,id=c,path=/tmp/out",
			    "-device", "isa-serial,chardev=c,index=1", "-boot",
			    "order=c,strict=off", "-overcommit", "mem-lock=on", "-machine",
			    "dump-guest-core=on") == 0,
		      "%s", err);
	ck_assert(cfg.vdrives[0].read_only);
	ck_assert_int_eq(cfg.vdrives[0].cache, DRIVE_CACHE_NONE);
	ck_assert_int_eq(cfg.serial[1].kind, CHARDEV_FILE);
	ck_assert_str_eq(cfg.serial[1].path, "/tmp/out");
	ck_assert_str_eq(cfg.boot_order, "c");
	ck_assert(!cfg.lv.boot_strict && cfg.lv.mem_lock && !cfg.lv.no_dump_guest_core);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_libvirt");
	TCase *tc = tcase_create("cli_libvirt");

	tcase_add_test(tc, libvirt_command_line);
	tcase_add_test(tc, probe_command_line);
	tcase_add_test(tc, q35_root_ports);
	tcase_add_test(tc, refused_with_a_reason);
	tcase_add_test(tc, usb_controllers);
	tcase_add_test(tc, pm_globals);
	tcase_add_test(tc, key_value_spellings);
	tcase_add_test(tc, virtio_transport_switches);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
