/* Unit tests for the command-line table (vmm/cli/cli.c). */
#include <check.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "vmm/cli/cli.h"

static struct vmm_config cfg;
static char err[512];

static int parse(const char *a1, const char *a2, const char *a3)
{
	char *argv[] = {"vmm", (char *)a1, (char *)a2, (char *)a3, NULL};
	int argc = 1 + !!a1 + !!a2 + !!a3;

	err[0] = 0;
	return cli_parse(argc, argv, &cfg, err, sizeof(err));
}

START_TEST(memory_sizes)
{
	ck_assert_int_eq(parse("-m", "512", NULL), 0);
	ck_assert_uint_eq(cfg.ram_size, 512ull << 20);
	ck_assert_int_eq(parse("-m", "512M", NULL), 0);
	ck_assert_uint_eq(cfg.ram_size, 512ull << 20);
	ck_assert_int_eq(parse("-m", "2G", NULL), 0);
	ck_assert_uint_eq(cfg.ram_size, 2ull << 30);
	ck_assert_int_eq(parse("--m", "5G", NULL), 0);
	ck_assert_uint_eq(cfg.ram_size, 5ull << 30);
	ck_assert_int_eq(parse(NULL, NULL, NULL), 0);
	ck_assert_uint_eq(cfg.ram_size, 128ull << 20);
}
END_TEST

START_TEST(bad_values_name_the_option)
{
	ck_assert_int_eq(parse("-m", "abc", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-m:"));
	ck_assert_int_eq(parse("-m", "1X", NULL), -1);
	ck_assert_int_eq(parse("-m", "0", NULL), -1);
	ck_assert_int_eq(parse("-smp", "x", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-smp:"));
	ck_assert_int_eq(parse("-smp", "4x", NULL), -1);
	ck_assert_int_eq(parse("-serial", "tcp:1", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-serial:"));
	ck_assert_int_eq(parse("-device", "e1000", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-device:"));
	ck_assert_int_eq(parse("-device", "isa-debug-exit,iobase=zz", NULL), -1);
	ck_assert_int_eq(parse("-kernel", NULL, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "requires an argument"));
	ck_assert_int_eq(parse("-frobnicate", NULL, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-frobnicate"));
	ck_assert_int_eq(parse("-serial", "stdio", "-monitor"), -1);
	ck_assert_int_eq(parse("-kernel", "", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "-kernel:"));
	/* an empty kernel command line is a command line, as in QEMU */
	ck_assert_int_eq(parse("-append", "", NULL), 0);
	ck_assert_str_eq(cfg.append, "");
}
END_TEST

START_TEST(smp_and_devices)
{
	ck_assert_int_eq(parse("-smp", "4", NULL), 0);
	ck_assert_uint_eq(cfg.smp, 4);
	ck_assert_int_eq(parse("-smp", "cpus=2,sockets=2", NULL), 0);
	ck_assert_uint_eq(cfg.smp, 2);
	ck_assert_int_eq(parse("-device", "isa-debug-exit,iobase=0xf4,iosize=4", NULL), 0);
	ck_assert_uint_eq(cfg.n_devices, 1);
	ck_assert_uint_eq(cfg.devices[0].iobase, 0xf4);
	ck_assert_uint_eq(cfg.devices[0].iosize, 4);
}
END_TEST

START_TEST(chardevs)
{
	ck_assert_int_eq(parse("-serial", "file:/tmp/x", NULL), 0);
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_FILE);
	ck_assert_str_eq(cfg.serial[0].path, "/tmp/x");
	ck_assert_int_eq(parse("-monitor", "unix:/tmp/m.sock,server,nowait", NULL), 0);
	ck_assert_int_eq(cfg.monitor.kind, CHARDEV_UNIX);
	ck_assert_str_eq(cfg.monitor.path, "/tmp/m.sock");
	ck_assert(!cfg.monitor.wait);
	/* the default serial is the stdio mux */
	ck_assert_int_eq(cfg.serial[0].kind, CHARDEV_MON_STDIO);
	ck_assert_int_eq(parse("-serial", "unix:/tmp/s", NULL), -1); /* not a server */
	ck_assert_int_eq(parse("-monitor", "mon:stdio", NULL), -1);
}
END_TEST

START_TEST(flags)
{
	char *argv[] = {"vmm", "-nographic", "-no-reboot", "-S", "-name", "guest=t1", "--version", NULL};

	ck_assert_int_eq(cli_parse(7, argv, &cfg, err, sizeof(err)), 0);
	ck_assert(cfg.nographic && cfg.no_reboot && cfg.start_paused && cfg.version);
	ck_assert_str_eq(cfg.name, "t1");
}
END_TEST

START_TEST(cpu_models)
{
	ck_assert_int_eq(parse(NULL, NULL, NULL), 0);
	ck_assert_int_eq(cfg.cpu.model, CPU_MODEL_HOST);
	ck_assert_int_eq(parse("-cpu", "kvm64", NULL), 0);
	ck_assert_int_eq(cfg.cpu.model, CPU_MODEL_KVM64);
	ck_assert_int_eq(parse("-cpu", "host,-xsave,+popcnt", NULL), 0);
	ck_assert_int_eq(cfg.cpu.model, CPU_MODEL_HOST);
	ck_assert_uint_eq(cfg.cpu.nsw, 2);
	ck_assert(!cfg.cpu.sw[0].on && cfg.cpu.sw[1].on);
	ck_assert_int_eq(parse("--cpu", "vmm", NULL), 0);
	ck_assert_int_eq(cfg.cpu.model, CPU_MODEL_BASELINE);
	ck_assert_int_eq(parse("-cpu", "qemu64,+x2apic,+tsc-deadline", NULL), 0);
	ck_assert_int_eq(cfg.cpu.model, CPU_MODEL_QEMU64);
}
END_TEST

START_TEST(cpu_bad_values)
{
	const char *bad[] = {"pentium9", "host,xsav", "host,+nosuchfeat", "kvm64,+",
			     "max,x2apic=maybe"};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(parse("-cpu", bad[i], NULL), -1);
		ck_assert_ptr_eq(strstr(err, "-cpu: "), err);
		ck_assert_ptr_null(strstr(err + 1, "-cpu:")); /* named once */
		ck_assert_ptr_null(strchr(err, '\n'));
	}
	ck_assert_int_eq(parse("-cpu", NULL, NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "requires an argument"));
}
END_TEST

/* cli_parse on a NULL-terminated list of arguments. */
static int parse_args(const char *const *args)
{
	char *argv[24] = {"vmm"};
	int argc = 1;

	while (*args && argc < 23)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	err[0] = 0;
	return cli_parse(argc, argv, &cfg, err, sizeof(err));
}

START_TEST(disk_options)
{
	const char *hdx[] = {"-hda", "a.img", "-hdb", "b.img", "-hdc", "c.img", "-hdd", "d.img",
			     "-snapshot", NULL};
	const char *drives[] = {"-drive", "file=x.img,format=raw,if=ide,index=2,readonly=on",
				"-drive", "file=y.img,cache=unsafe,format=qcow2,file.locking=off",
				"-drive", "file=z.img", NULL};

	ck_assert_int_eq(parse_args(hdx), 0);
	ck_assert_str_eq(cfg.drives[0].file, "a.img");
	ck_assert_str_eq(cfg.drives[3].file, "d.img");
	ck_assert(cfg.snapshot);
	ck_assert(!cfg.drives[0].read_only);
	/* -drive without index takes the first free slot, as QEMU */
	ck_assert_int_eq(parse_args(drives), 0);
	ck_assert_str_eq(cfg.drives[2].file, "x.img");
	ck_assert(cfg.drives[2].read_only);
	ck_assert_int_eq(cfg.drives[2].format, DRIVE_FORMAT_RAW);
	ck_assert_str_eq(cfg.drives[0].file, "y.img");
	ck_assert_int_eq(cfg.drives[0].cache, DRIVE_CACHE_UNSAFE);
	ck_assert_int_eq(cfg.drives[0].format, DRIVE_FORMAT_QCOW2);
	ck_assert(cfg.drives[0].no_lock);
	ck_assert_str_eq(cfg.drives[1].file, "z.img");
	ck_assert_int_eq(cfg.drives[1].format, DRIVE_FORMAT_AUTO);
	ck_assert(!cfg.drives[1].no_lock);
	ck_assert(!cfg.snapshot);
	ck_assert_int_eq(parse("-drive", "file=w.img,cache=none", NULL), 0);
	ck_assert_int_eq(cfg.drives[0].cache, DRIVE_CACHE_NONE);
	ck_assert_int_eq(parse("-boot", "order=dc", NULL), 0);
	ck_assert_str_eq(cfg.boot_order, "dc");
	ck_assert_int_eq(parse("-boot", "n", NULL), 0);
	ck_assert_str_eq(cfg.boot_order, "n");
	ck_assert_int_eq(parse(NULL, NULL, NULL), 0);
	ck_assert_ptr_null(cfg.boot_order);
}
END_TEST

START_TEST(virtio_disks)
{
	const char *args[] = {"-drive", "file=v.img,if=virtio,cache=directsync,aio=threads", "-drive",
			      "file=n.img,if=none,id=d0,readonly=on,aio=io_uring", "-device",
			      "virtio-blk-pci,drive=d0,bootindex=2,serial=SN1,addr=04.1,num-queues=4",
			      "-hda", "i.img", NULL};

	ck_assert_int_eq(parse_args(args), 0);
	ck_assert_uint_eq(cfg.n_vdrives, 2);
	ck_assert_uint_eq(cfg.n_vblk, 2);
	ck_assert_str_eq(cfg.vdrives[0].file, "v.img");
	ck_assert_str_eq(cfg.vdrives[0].id, "virtio0"); /* QEMU's name */
	ck_assert_int_eq(cfg.vdrives[0].cache, DRIVE_CACHE_DIRECTSYNC);
	ck_assert_int_eq(cfg.vdrives[0].aio, DRIVE_AIO_THREADS);
	ck_assert_int_eq(cfg.vdrives[1].aio, DRIVE_AIO_IO_URING);
	ck_assert_uint_eq(cfg.vblk[0].drive, 0);
	ck_assert_int_eq(cfg.vblk[0].bootindex, -1);
	ck_assert_int_eq(cfg.vblk[0].devfn, -1);
	ck_assert(cfg.vdrives[1].read_only);
	ck_assert_uint_eq(cfg.vblk[1].drive, 1);
	ck_assert_int_eq(cfg.vblk[1].bootindex, 2);
	ck_assert_int_eq(cfg.vblk[1].devfn, 4 << 3 | 1);
	ck_assert_uint_eq(cfg.vblk[1].num_queues, 4);
	ck_assert_str_eq(cfg.vblk[1].serial, "SN1");
	ck_assert_str_eq(cfg.drives[0].file, "i.img"); /* IDE untouched */
	/* the -device may come before its -drive, as in QEMU */
	ck_assert_int_eq(parse("-device", "virtio-blk-pci,drive=late", NULL), -1);
	{
		const char *late[] = {"-device", "virtio-blk-pci,drive=late,addr=0x1f", "-drive",
				      "file=l.img,if=none,id=late", NULL};

		ck_assert_int_eq(parse_args(late), 0);
		ck_assert_int_eq(cfg.vblk[0].devfn, 31 << 3);
	}
}
END_TEST

START_TEST(sata_devices)
{
	const char *args[] = {"-device", "ahci,id=sata0,addr=0x5", "-drive",
			      "file=a.img,if=none,id=d0,format=raw", "-device",
			      "ide-hd,drive=d0,bus=sata0.0,bootindex=1", "-device",
			      "ide-cd,bus=sata0.3,id=cd0", "-drive", "file=c.iso,if=none,id=c1",
			      "-device", "ide-cd,drive=c1,bus=ide.1,unit=0", NULL};

	ck_assert_msg(parse_args(args) == 0, "%s", err);
	ck_assert_uint_eq(cfg.n_ahci, 1);
	ck_assert_str_eq(cfg.ahci[0].id, "sata0");
	ck_assert_int_eq(cfg.ahci[0].devfn, 5 << 3);
	ck_assert_uint_eq(cfg.n_sata, 3);
	ck_assert_int_eq(cfg.sata[0].drive, 0);
	ck_assert_uint_eq(cfg.sata[0].ahci, 0);
	ck_assert_uint_eq(cfg.sata[0].port, 0);
	ck_assert(!cfg.sata[0].cdrom);
	ck_assert_int_eq(cfg.sata[1].drive, -1); /* an empty CD-ROM drive */
	ck_assert_uint_eq(cfg.sata[1].port, 3);
	ck_assert(cfg.sata[1].cdrom);
	/* bus=ide.1,unit=0: the IDE's secondary master, as -cdrom */
	ck_assert_str_eq(cfg.drives[2].file, "c.iso");
	ck_assert(cfg.drives[2].cdrom);
	ck_assert_int_eq(parse("-device", "ich9-ahci", NULL), 0);
	ck_assert_str_eq(cfg.ahci[0].id, "ahci0");
	/* q35: bus=ide.N is the ich9-ahci's port N, as QEMU and libvirt's
	 * sata0-0-N have it; ide.1 is not PIIX3's secondary channel there */
	{
		const char *q35[] = {"-machine", "q35",
				     "-drive",	 "file=c.iso,if=none,id=c1",
				     "-device",	 "ide-cd,drive=c1,bus=ide.1",
				     "-device",	 "ide-cd,bus=ide.3",
				     NULL};
		const char *port5[] = {"-machine", "q35", "-device", "ide-cd,bus=ide.5", NULL};
		const char *port6[] = {"-machine", "q35", "-device", "ide-cd,bus=ide.6", NULL};
		const char *unit1[] = {"-machine", "q35", "-device", "ide-cd,bus=ide.0,unit=1",
				       NULL};

		ck_assert_msg(parse_args(q35) == 0, "%s", err);
		ck_assert_str_eq(cfg.drives[1].file, "c.iso");
		ck_assert(cfg.drives[1].cdrom);
		ck_assert(!cfg.drives[2].cdrom);
		ck_assert(cfg.drives[3].cdrom);
		ck_assert_msg(parse_args(port5) == 0, "%s", err); /* six ports */
		ck_assert(cfg.drives[5].cdrom);
		ck_assert_int_eq(parse_args(port6), -1);
		ck_assert_ptr_nonnull(strstr(err, "ide.0 to ide.5"));
		ck_assert_int_eq(parse_args(unit1), -1);
		ck_assert_int_eq(parse("-device", "ide-cd,bus=ide.2", NULL), -1);
	}
	/* write-cache=off on the IDE bus: the slot's writeback becomes
	 * writethrough (an AHCI port's drive turns at open, board_ahci.c) */
	{
		const char *wc[] = {"-drive", "file=a.img,if=none,id=d0,cache=writeback", "-device",
				    "ide-hd,drive=d0,bus=ide.0,write-cache=off", NULL};

		ck_assert_msg(parse_args(wc) == 0, "%s", err);
		ck_assert_int_eq(cfg.drives[0].cache, DRIVE_CACHE_WRITETHROUGH);
		ck_assert_int_eq(cfg.sata[0].write_cache, 0);
		ck_assert_int_eq(cli_device_cache(DRIVE_CACHE_DIRECTSYNC, 1), DRIVE_CACHE_NONE);
		ck_assert_int_eq(cli_device_cache(DRIVE_CACHE_UNSAFE, 0), DRIVE_CACHE_UNSAFE);
		ck_assert_int_eq(cli_device_cache(DRIVE_CACHE_NONE, -1), DRIVE_CACHE_NONE);
	}
	/* refused: an unknown controller, a port past 5, a missing drive, a port twice */
	{
		const char *bad[][7] = {
			{"-device", "ahci,id=s", "-device", "ide-cd,bus=t.0", NULL},
			{"-device", "ahci,id=s", "-device", "ide-cd,bus=s.6", NULL},
			{"-device", "ahci,id=s", "-device", "ide-hd,drive=nope,bus=s.0", NULL},
			{"-device", "ahci,id=s", "-device", "ide-cd,bus=s.1", "-device", "ide-cd,bus=s.1",
			 NULL},
			{"-device", "ide-hd,bus=s.0", NULL},
			{"-drive", "file=a.img,if=none,id=d0", "-device",
			 "ide-hd,drive=d0,bus=ide.0,write-cache=maybe", NULL},
		};

		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ck_assert_msg(parse_args(bad[i]) == -1, "case %u accepted", i);
	}
}
END_TEST

START_TEST(disk_option_errors)
{
	static const struct {
		const char *args[8];
		const char *msg;
	} bad[] = {
		{{"-hda", "a.img", "-drive", "file=b.img,index=0"},
		 "IDE index 0 is already taken by 'a.img'"},
		{{"-hda", "a.img", "-hda", "b.img"}, "already taken"},
		{{"-drive", "file=a,index=4"},
		 "IDE index 4: the PC's IDE has 4 drives (index 0 to 3)"},
		{{"-drive", "file=a,index=6"}, "index must be 0 to 5"},
		{{"-drive", "file=a,index=x"}, "index must be 0 to 5"},
		{{"-drive", "index=1"}, "needs file=PATH"},
		{{"-drive", "file=a,format=vmdk"}, "unsupported format 'vmdk'"},
		{{"-drive", "file=a,file.locking=maybe"}, "file.locking must be on, off or auto"},
		{{"-drive", "file=a,if=scsi"}, "unsupported if 'scsi'"},
		{{"-drive", "file=a,readonly=yes"}, "readonly must be on or off"},
		{{"-drive", "file=a,cache=fast"}, "unknown cache mode 'fast'"},
		{{"-drive", "file=a,aio=native"}, "unknown aio mode 'native' (threads, io_uring)"},
		{{"-drive", "file=a,bus=1"}, "unknown parameter 'bus'"},
		{{"-drive", "file=a,junk"}, "expected key=value"},
		{{"-drive", "file="}, "empty file name"},
		{{"-hda", "a", "-hdb", "b", "-hdc", "c", "-hdd"}, "requires an argument"},
		{{"-device", "virtio-blk-pci"}, "needs drive=ID"},
		{{"-device", "virtio-blk-pci,drive=d9"}, "no -drive if=none,id=d9"},
		{{"-drive", "file=a,if=virtio", "-device", "virtio-blk-pci,drive=virtio0"},
		 "no -drive if=none,id=virtio0"},
		{{"-drive", "file=a,if=none"}, "if=none needs id="},
		{{"-drive", "file=a,if=none,id=x", "-drive", "file=b,if=none,id=x"},
		 "Duplicate ID 'x' for drive"},
		{{"-drive", "file=a,if=virtio,index=1"}, "index= is for if=ide"},
		{{"-drive", "file=a,if=none,id=d", "-device", "virtio-blk-pci,drive=d,addr=1"},
		 "invalid addr '1'"},
		{{"-drive", "file=a,if=none,id=d", "-device", "virtio-blk-pci,drive=d,addr=20"},
		 "invalid addr '20'"},
		{{"-drive", "file=a,if=none,id=d", "-device",
		  "virtio-blk-pci,drive=d,num-queues=0"},
		 "invalid num-queues"},
		{{"-drive", "file=a,if=none,id=d", "-device",
		  "virtio-blk-pci,drive=d,serial=123456789012345678901"},
		 "invalid serial"},
		{{"-drive", "file=a,if=none,id=d", "-device", "virtio-blk-pci,drive=d", "-device",
		  "virtio-blk-pci,drive=d"},
		 "drive 'd' is already in use"},
		{{"-boot", "order=x"}, "invalid boot device 'x'"},
		{{"-boot", "order="}, "invalid boot order"},
	};
	const char *full[] = {"-hda", "a", "-hdb", "b", "-hdc", "c", "-hdd", "d",
			      "-drive", "file=e", NULL};
	/* q35: ich9-ahci's six ports; the seventh drive has no place */
	const char *q35_full[] = {"-M",	    "q35",    "-hda",	"a",	  "-hdb",   "b",
				  "-hdc",   "c",      "-hdd",	"d",	  "-drive", "file=e",
				  "-drive", "file=f", "-drive", "file=g", NULL};
	const char *q35_five[] = {"-M", "q35", "-drive", "file=f,index=5", NULL};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse_args(bad[i].args) == -1, "%s accepted", bad[i].args[1]);
		ck_assert_msg(strstr(err, bad[i].msg), "'%s': got '%s'", bad[i].msg, err);
		ck_assert_ptr_null(strchr(err, '\n'));
	}
	ck_assert_int_eq(parse_args(full), -1);
	ck_assert_ptr_nonnull(strstr(err, "the PC's IDE has 4 drives"));
	ck_assert_int_eq(parse_args(q35_full), -1);
	ck_assert_ptr_nonnull(strstr(err, "no free IDE slot"));
	ck_assert_msg(parse_args(q35_five) == 0, "%s", err);
	ck_assert_str_eq(cfg.drives[5].file, "f");
}
END_TEST

START_TEST(machine_irqchip_modes)
{
	ck_assert_int_eq(parse(NULL, NULL, NULL), 0);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_ON);
	ck_assert(!cfg.no_pit);
	ck_assert_int_eq(parse("-machine", "kernel_irqchip=split", NULL), 0);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_SPLIT);
	ck_assert_int_eq(parse("-machine", "pc,accel=kvm,kernel_irqchip=off,pit=off", NULL), 0);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_OFF);
	ck_assert(cfg.no_pit);
	ck_assert_int_eq(parse("--machine", "type=pc,kernel_irqchip=on,pit=on", NULL), 0);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_ON);
	ck_assert(!cfg.no_pit);
	ck_assert_int_eq(parse("-M", "pc,kernel_irqchip=split", NULL), 0);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_SPLIT);
	ck_assert_int_eq(parse("-machine", "kernel_irqchip=half", NULL), -1);
	ck_assert_str_eq(err, "-machine: kernel_irqchip must be on, split or off, not 'half'");
	ck_assert_int_eq(parse("-machine", "pit=maybe", NULL), -1);
	ck_assert_str_eq(err, "-machine: pit must be on or off, not 'maybe'");
	/* q35 boots firmware too; -hda is a disk on its ICH9 AHCI */
	static const char *const q35_ide[] = {"-M", "pc-q35-7.2", "-hda", "disk.img", NULL};

	ck_assert_int_eq(parse("-machine", "q35", NULL), 0);
	ck_assert(cfg.q35);
	ck_assert_int_eq(parse_args(q35_ide), 0);
	ck_assert_str_eq(cfg.drives[0].file, "disk.img");
	ck_assert_int_eq(parse("-machine", "q36", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "unsupported 'q36'"));
	ck_assert_int_eq(parse("-machine", "accel=tcg", NULL), -1);
	ck_assert_ptr_nonnull(strstr(err, "KVM only"));
}
END_TEST

/* -M q35 with intel-iommu and edu, as kvm-unit-tests pass them */
START_TEST(q35_and_iommu)
{
	const char *kut[] = {"-kernel", "x.flat", "-M", "q35,kernel-irqchip=split", "-device",
			     "intel-iommu,intremap=on,eim=off", "-device", "edu", NULL};
	const char *no_q35[] = {"-kernel", "x", "-device", "intel-iommu", NULL};
	const char *ir_on[] = {"-kernel", "x", "-M", "q35", "-device", "intel-iommu,intremap=on",
			       NULL};
	const char *eim[] = {"-kernel", "x", "-M", "q35", "-device", "intel-iommu,eim=on", NULL};
	const char *bad[] = {"-kernel", "x", "-M", "q35", "-device", "intel-iommu,aw-bits=48",
			     NULL};
	const char *dflt[] = {"-kernel", "x", "-M", "type=pc-q35-7.2,kernel_irqchip=off", "-device",
			      "intel-iommu,intremap=on", "-device", "edu,addr=05.0", NULL};

	ck_assert_int_eq(parse_args(kut), 0);
	ck_assert(cfg.q35);
	ck_assert_int_eq(cfg.irqchip, IRQCHIP_SPLIT);
	ck_assert(cfg.iommu.present && cfg.iommu.intremap && !cfg.iommu.eim);
	ck_assert_int_eq(cfg.devices[0].kind, DEVICE_EDU);
	ck_assert_int_eq(cfg.devices[0].devfn, -1);
	ck_assert_int_eq(parse_args(dflt), 0);
	ck_assert(cfg.iommu.eim); /* QEMU's eim=auto: on with intremap */
	ck_assert_int_eq(cfg.devices[0].devfn, 5 << 3);
	ck_assert_int_eq(parse_args(no_q35), -1);
	ck_assert_ptr_nonnull(strstr(err, "needs -machine q35"));
	ck_assert_int_eq(parse_args(ir_on), -1); /* kernel_irqchip=on by default */
	ck_assert_ptr_nonnull(strstr(err, "kernel_irqchip=split"));
	ck_assert_int_eq(parse_args(eim), -1);
	ck_assert_ptr_nonnull(strstr(err, "eim=on cannot be selected without intremap=on"));
	ck_assert_int_eq(parse_args(bad), -1);
	ck_assert_ptr_nonnull(strstr(err, "unsupported property 'aw-bits'"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli");
	TCase *tc = tcase_create("cli");

	tcase_add_test(tc, memory_sizes);
	tcase_add_test(tc, bad_values_name_the_option);
	tcase_add_test(tc, smp_and_devices);
	tcase_add_test(tc, chardevs);
	tcase_add_test(tc, flags);
	tcase_add_test(tc, cpu_models);
	tcase_add_test(tc, cpu_bad_values);
	tcase_add_test(tc, disk_options);
	tcase_add_test(tc, sata_devices);
	tcase_add_test(tc, disk_option_errors);
	tcase_add_test(tc, virtio_disks);
	tcase_add_test(tc, machine_irqchip_modes);
	tcase_add_test(tc, q35_and_iommu);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
