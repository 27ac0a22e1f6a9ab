/* board.c — the PC board: every device, created in init order (kvmtool
 * style). Add a device with one line here and its constructor in
 * its header (devices/KIND/NAME.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/isa/acpi_pm.h"
#include "devices/isa/debug_exit.h"
#include "devices/isa/debugcon.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/fw_cfg.h"
#include "devices/isa/i8042.h"
#include "devices/isa/isa_empty.h"
#include "devices/isa/port80.h"
#include "devices/isa/port92.h"
#include "devices/isa/pvpanic.h"
#include "devices/isa/serial.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "devices/storage/atapi.h"
#include "devices/storage/ide.h"
#include "devices/testdev/edu.h"
#include "devices/testdev/pc_testdev.h"
#include "devices/testdev/pci_testdev.h"
#include "devices/timer/rtc.h"
#include "devices/virtio/virtio.h"
#include "firmware/firmware.h"
#include "vmm/chardev.h"
#include "vmm/control/monitor.h"
#include "vmm/exit_stats.h"
#include "vmm/machine.h"
#include "vmm/vserial.h"

static const uint16_t com_base[CLI_MAX_SERIALS] = {0x3f8, 0x2f8, 0x3e8, 0x2e8};
static const unsigned com_irq[CLI_MAX_SERIALS] = {4, 3, 4, 3};

/* serial <-> chardev glue */
static void uart_out(void *opaque, const uint8_t *buf, size_t len)
{
	chardev_write(opaque, buf, len);
}

static void uart_rx_ready(void *opaque)
{
	chardev_rx_ready(opaque);
}

static size_t uart_can_receive(void *opaque)
{
	return serial_can_receive(opaque);
}

static void uart_receive(void *opaque, const uint8_t *buf, size_t len)
{
	serial_receive(opaque, buf, len);
}

static void quit_from_mux(void *opaque)
{
	machine_host_quit(opaque, "host-ui");
}

/* -serial N's host end, labelled serialN as in QEMU unless -chardev named it. */
static struct chardev *new_serial_chardev(struct machine *m, unsigned i, char *err, size_t errlen)
{
	struct chardev_spec spec = m->cfg->serial[i];

	if (!spec.id[0])
		snprintf(spec.id, sizeof(spec.id), "serial%u", i);
	return chardev_new(&spec, m->host.loop, err, errlen);
}

static int add_serials(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_serial; i++) {
		const struct chardev_spec *spec = &m->cfg->serial[i];
		struct char_backend be;
		struct chardev_frontend fe;

		if (spec->kind == CHARDEV_NONE)
			continue;
		m->serial_chr[i] = new_serial_chardev(m, i, err, errlen);
		if (!m->serial_chr[i])
			return -1;
		be = (struct char_backend){uart_out, uart_rx_ready, m->serial_chr[i]};
		m->serial[i] = serial_new(&m->host, com_base[i], com_irq[i], &be);
		if (!m->serial[i]) {
			snprintf(err, errlen, "serial port %u: cannot register", i);
			return -1;
		}
		fe = (struct chardev_frontend){uart_can_receive, uart_receive, NULL, m->serial[i]};
		chardev_add_frontend(m->serial_chr[i], &fe);
		chardev_set_quit(m->serial_chr[i], quit_from_mux, m);
		if (spec->kind == CHARDEV_MON_STDIO && !m->monitor[1])
			m->monitor[1] = monitor_new(m, m->serial_chr[i]);
		chardev_start(m->serial_chr[i]);
	}
	return 0;
}

static void debug_exit_fn(void *opaque, int status)
{
	machine_request_exit(opaque, status);
}

/* ACPI S5 from the guest (Linux `poweroff`): a clean exit with status 0. */
static void acpi_poweroff_fn(void *opaque)
{
	machine_guest_shutdown(opaque, "guest-shutdown");
}

static void pvpanic_fn(void *opaque, unsigned events)
{
	machine_guest_panic(opaque, events);
}

static void guest_reset_fn(void *opaque)
{
	machine_request_reset(opaque);
}

/* A -chardev ringbuf (or null) no -serial or -mon took still exists, as
 * in QEMU: ringbuf-write and ringbuf-read reach it, query-chardev lists it. */
static int add_spare_ringbufs(struct machine *m, char *err, size_t errlen)
{
	const struct control_config *c = &m->cfg->control;

	for (unsigned i = 0; i < c->n_chardevs; i++) {
		const struct chardev_def *d = &c->chardevs[i];

		if (d->used || !d->is_serial_backend ||
		    (d->spec.kind != CHARDEV_RINGBUF && d->spec.kind != CHARDEV_NULL))
			continue;
		m->spare_chr[i] = chardev_new(&d->spec, m->host.loop, err, errlen);
		if (!m->spare_chr[i])
			return -1;
	}
	return 0;
}

struct chardev *board_find_chardev(struct machine *m, const char *id)
{
	const struct control_config *c = &m->cfg->control;

	char label[16];

	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++) {
		snprintf(label, sizeof(label), "serial%u", i); /* query-chardev's name */
		if (m->serial_chr[i] && (m->cfg->serial[i].id[0] ? !strcmp(m->cfg->serial[i].id, id)
								 : !strcmp(label, id)))
			return m->serial_chr[i];
	}
	if (m->monitor_chr && m->cfg->monitor.id[0] && !strcmp(m->cfg->monitor.id, id))
		return m->monitor_chr;
	for (unsigned i = 0; i < c->n_chardevs; i++)
		if (m->spare_chr[i] && !strcmp(c->chardevs[i].id, id))
			return m->spare_chr[i];
	for (unsigned i = 0; i < CLI_MAX_VSERPORTS; i++) {
		const char *port_label;
		struct chardev *chr = vmm_vserial_chardev(m->vserial, i, &port_label);

		if (chr && !strcmp(port_label, id))
			return chr;
	}
	return NULL;
}

static int add_monitor(struct machine *m, char *err, size_t errlen)
{
	const struct chardev_spec *spec = &m->cfg->monitor;

	if (add_spare_ringbufs(m, err, errlen) < 0)
		return -1;
	if (!m->cfg->monitor_given || spec->kind == CHARDEV_NONE)
		return 0;
	m->monitor_chr = chardev_new(spec, m->host.loop, err, errlen);
	if (!m->monitor_chr)
		return -1;
	m->monitor[0] = monitor_new(m, m->monitor_chr);
	chardev_start(m->monitor_chr);
	return 0;
}

/* -machine none: the host ends QEMU still opens there (a pty announced,
 * a socket listening) with no serial port behind them, and the monitor. */
int board_init_none(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_serial && i < CLI_MAX_SERIALS; i++) {
		const struct chardev_spec *spec = &m->cfg->serial[i];

		if (spec->kind == CHARDEV_NONE || spec->kind == CHARDEV_MON_STDIO)
			continue;
		m->serial_chr[i] = new_serial_chardev(m, i, err, errlen);
		if (!m->serial_chr[i])
			return -1;
		chardev_start(m->serial_chr[i]);
	}
	return add_monitor(m, err, errlen);
}

/* How a drive's image opens, for the board and for the preflight check:
 * a CD-ROM's medium read-only and without an overlay (nothing is written). */
void drive_block_opts(const struct drive_spec *d, bool snapshot, struct block_opts *o)
{
	*o = (struct block_opts){
		.path = d->file,
		.read_only = d->read_only || d->cdrom,
		.snapshot = snapshot && !d->cdrom,
		.cache = (enum block_cache)d->cache,
		.format = (enum block_format)d->format,
		.no_lock = d->no_lock,
	};
}

static int open_disks(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		const struct drive_spec *d = &m->cfg->drives[i];
		struct block_opts o;
		char why[256];

		drive_block_opts(d, m->cfg->snapshot, &o);
		if (d->cdrom) {
			struct block_dev *medium = NULL;

			if (d->file && !(medium = block_open(&o, why, sizeof(why)))) {
				snprintf(err, errlen, "CD-ROM %u (%s): %s", i, d->file, why);
				return -1;
			}
			m->cdroms[i] = atapi_new(medium);
			if (!m->cdroms[i]) {
				block_close(medium);
				snprintf(err, errlen, "CD-ROM %u: out of memory", i);
				return -1;
			}
			continue;
		}
		if (!d->file)
			continue;
		o.inactive = m->cfg->incoming != NULL; /* until the stream is in */
		m->disks[i] = block_open(&o, why, sizeof(why));
		if (!m->disks[i]) {
			snprintf(err, errlen, "disk %u (%s): %s", i, d->file, why);
			return -1;
		}
	}
	return 0;
}

struct pci_bus *board_device_bus(struct machine *m, const char *bus)
{
	int i = bus[0] ? cli_find_root_port(m->cfg, bus) : -1;

	return i >= 0 && m->root_ports[i] ? pcie_root_port_bus(m->root_ports[i]) : m->pci;
}

/* -device pcie-root-port: on the root bus, before the devices behind them. */
static int add_root_ports(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_root_ports; i++) {
		const struct root_port_spec *s = &m->cfg->root_ports[i];
		int devfn = s->devfn >= 0 ? s->devfn : pci_bus_free_slot(m->pci);
		struct pcie_root_port_opts o = {(uint8_t)devfn, (uint8_t)s->chassis,
						(uint16_t)s->slot, (uint8_t)s->port, s->multifunction};

		m->root_ports[i] = devfn >= 0 ? pcie_root_port_new(&m->host, m->pci, &o) : NULL;
		if (!m->root_ports[i]) {
			snprintf(err, errlen, "pcie-root-port %s: its PCI slot is taken", s->id);
			return -1;
		}
	}
	return 0;
}

/* Presence detect of each root port's slot, once its device is there. */
static void update_root_port_slots(struct machine *m)
{
	for (unsigned i = 0; i < m->cfg->n_root_ports; i++)
		pcie_root_port_update_slot(m->root_ports[i]);
}

/* -drive if=virtio and -device virtio-blk-pci: those with addr= first,
 * so the others fill the slots left. */
int board_add_virtio_blk(struct machine *m, unsigned i, char *err, size_t errlen)
{
	const struct virtio_blk_spec *v = &m->cfg->vblk[i];
	const struct drive_spec *d = &m->cfg->vdrives[v->drive];
	struct block_opts o;
	struct virtio_blk_opts vo = {NULL,     v->serial[0] ? v->serial : NULL,
				     v->num_queues, v->devfn,
				     d->id,    (enum block_aio_mode)d->aio};
	char why[256];

	drive_block_opts(d, m->cfg->snapshot, &o);
	o.cache = (enum block_cache)cli_device_cache(d->cache, v->write_cache);
	o.inactive = m->cfg->incoming != NULL; /* until the stream is in */
	m->vdisks[i] = block_open(&o, why, sizeof(why));
	if (!m->vdisks[i]) {
		snprintf(err, errlen, "drive %s (%s): %s", d->id, d->file, why);
		return -1;
	}
	vo.disk = m->vdisks[i];
	m->vblk[i] = virtio_blk_new(&m->host, board_device_bus(m, v->bus), &vo, why, sizeof(why));
	if (!m->vblk[i]) {
		snprintf(err, errlen, "drive %s: %s", d->id, why);
		return -1;
	}
	return 0;
}

static int add_virtio_disks(struct machine *m, char *err, size_t errlen)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < m->cfg->n_vblk; i++)
			if ((m->cfg->vblk[i].devfn >= 0) == (pass == 0) &&
			    board_add_virtio_blk(m, i, err, errlen) < 0)
				return -1;
	return 0;
}

/* -device piix3-usb-uhci / qemu-xhci, -usb: at addr= or the first
 * free slot. */
static int add_usb_controller(struct machine *m, unsigned i, const struct device_spec *d,
			      char *err, size_t errlen)
{
	bool uhci = d->kind == DEVICE_USB_UHCI;
	struct pci_bus *bus = board_device_bus(m, d->bus);
	int devfn = d->devfn >= 0 ? d->devfn : pci_bus_free_slot(bus);

	if (devfn >= 0 && uhci)
		m->uhci[i] = uhci_new(&m->host, bus, (uint8_t)devfn);
	else if (devfn >= 0)
		m->xhci[i] = xhci_new(&m->host, bus, (uint8_t)devfn, d->usb_p2, d->usb_p3);
	if (devfn < 0 || (uhci ? !m->uhci[i] : !m->xhci[i])) {
		snprintf(err, errlen, "-device %s: its PCI slot is taken",
			 uhci ? "piix3-usb-uhci" : "qemu-xhci");
		return -1;
	}
	return 0;
}

/* -device virtio-rng-pci: each device reads its own copy of its
 * rng-random file's fd (cli_resolve_rng opened it), or getrandom(2); so
 * the object can go (object-del) once no device uses it. */
int board_add_virtio_rng(struct machine *m, unsigned i, char *err, size_t errlen)
{
	const struct rng_config *rc = &m->cfg->rng;
	const struct rng_dev_spec *d = &rc->devs[i];
	int src = d->object >= 0 ? rc->objects[d->object].fd : -1;
	struct virtio_rng_opts o = {src >= 0 ? fcntl(src, F_DUPFD_CLOEXEC, 0) : -1, d->max_bytes,
				    d->period_ms, d->devfn};
	char why[256];

	if (src >= 0 && o.fd < 0) {
		snprintf(err, errlen, "-device virtio-rng-pci: cannot duplicate its source");
		return -1;
	}
	m->rng[i] = virtio_rng_new(&m->host, board_device_bus(m, d->bus), &o, why, sizeof(why));
	if (!m->rng[i]) {
		if (o.fd >= 0)
			close(o.fd);
		snprintf(err, errlen, "-device virtio-rng-pci: %s", why);
		return -1;
	}
	return 0;
}

static int add_virtio_rngs(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->rng.n_devs; i++)
		if (board_add_virtio_rng(m, i, err, errlen) < 0)
			return -1;
	return 0;
}

/* The debug console writes straight to a file descriptor. */
static int open_debugcon(struct machine *m, char *err, size_t errlen)
{
	const struct chardev_spec *spec = &m->cfg->debugcon;
	int fd = -1;

	/* Without -debugcon the port is absent (see add_absent_ports), as
	 * in QEMU: SeaBIOS then sees no 0xe9 and skips its ~2400 log exits. */
	if (!m->cfg->debugcon_given)
		return 0;
	if (spec->kind == CHARDEV_FILE) {
		fd = open(spec->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(err, errlen, "-debugcon: cannot open %s: %m", spec->path);
			return -1;
		}
	} else if (spec->kind == CHARDEV_STDIO) {
		fd = STDOUT_FILENO;
	}
	m->debugcon_fd = fd;
	m->debugcon = debugcon_new(&m->host, fd);
	if (!m->debugcon) {
		snprintf(err, errlen, "cannot register the debug console");
		return -1;
	}
	return 0;
}

/* -device intel-iommu: before the devices whose DMA and MSIs it sees. With
 * intremap and the split irqchip, the I/O APIC routes KVM keeps (for the
 * level-triggered EOIs) are the remapped messages. */
static int add_iommu(struct machine *m, char *err, size_t errlen)
{
	const struct iommu_spec *s = &m->cfg->iommu;
	struct intel_iommu_opts o = {s->intremap, s->eim};

	if (!s->present)
		return 0;
	m->iommu = intel_iommu_new(&m->host, m->pci, &o);
	if (!m->iommu) {
		snprintf(err, errlen, "intel-iommu: cannot register its registers at %#llx",
			 INTEL_IOMMU_BASE);
		return -1;
	}
	if (m->ic && s->intremap)
		intel_iommu_set_ir_changed(m->iommu, irqchip_ir_changed, m->ic);
	return 0;
}

/* -machine pc: i440FX host bridge, PIIX3 at 00:01.0, its IDE at 00:01.1. */
static int add_i440fx_chipset(struct machine *m)
{
	m->i440fx = m->pci ? i440fx_new(&m->host, m->pci, &m->mem_map) : NULL;
	m->piix3 = m->i440fx ? piix3_new(&m->host, m->pci) : NULL;
	m->ide = m->piix3 ? ide_new_with_cdroms(&m->host, m->pci, m->disks, m->cdroms) : NULL;
	machine_cdrom_wire(m);
	return m->ide ? 0 : -1;
}

/* -machine q35: the Q35 MCH (with the ECAM window), the ICH9 LPC bridge
 * in charge of the ACPI PM block, and the SMBus controller. */
static int add_q35_chipset(struct machine *m)
{
	m->i440fx = m->pci ? q35_mch_new(&m->host, m->pci, &m->mem_map) : NULL;
	m->lpc = m->i440fx ? ich9_lpc_new(&m->host, m->pci, m->acpi_pm) : NULL;
	m->smbus = m->lpc ? ich9_smbus_new(&m->host, m->pci) : NULL;
	return m->smbus ? 0 : -1;
}

/* PCI host and ISA bridges, IDE with the -hda/-drive disks, fw_cfg for
 * SeaBIOS, the CMOS bytes it reads and the 0x402 debug console. */
static int add_pc_platform(struct machine *m, char *err, size_t errlen)
{
	struct pc_fw_config fw = {
		.ram_size = m->cfg->ram_size,
		.ncpus = m->ncpus,
		.apic_ids = m->apic_ids,
		.e820 = &m->e820,
		.boot_order = m->cfg->boot_order,
		.nographic = true,
		.boot_strict = m->cfg->lv.boot_strict,
		.uuid = m->cfg->lv.has_uuid ? m->cfg->lv.uuid : NULL,
		.acpi = !m->cfg->lv.no_acpi,
		.q35 = m->cfg->q35,
		.no_s3 = m->cfg->lv.no_s3,
		.pvpanic_port = boot_pvpanic_port(m->cfg),
		.dmar = boot_dmar_flags(&m->cfg->iommu),
	};

	if (fw.boot_order && boot_order_check(fw.boot_order, err, errlen) < 0)
		return -1;
	if (open_disks(m, err, errlen) < 0)
		return -1;
	m->pci = pci_bus_new(&m->host);
	if (m->pci)
		pci_bus_set_reset(m->pci, guest_reset_fn, m);
	if (m->cfg->q35 ? add_q35_chipset(m) < 0 : add_i440fx_chipset(m) < 0) {
		snprintf(err, errlen, "cannot create the PCI chipset devices");
		return -1;
	}
	for (unsigned i = CLI_MAX_DRIVES; i-- > 0;)
		if (m->cdroms[i]) /* -boot d: the first CD-ROM drive */
			fw.cdrom_slot = i + 1;
	/* q35's built-in ICH9 AHCI at 00:1f.2 holds the -hda..-hdd/-cdrom
	 * drives on ports 0-3, where QEMU's q35 puts them */
	if (m->cfg->q35 && board_add_ich9_ahci(m, 0x1f << 3 | 2, err, errlen) < 0)
		return -1;
	if (add_iommu(m, err, errlen) < 0 || add_root_ports(m, err, errlen) < 0 ||
	    board_add_ahcis(m, err, errlen) < 0 || add_virtio_disks(m, err, errlen) < 0 ||
	    board_add_nics(m, err, errlen) < 0 || vmm_wlan_init(m, err, errlen) < 0 ||
	    add_virtio_rngs(m, err, errlen) < 0 || vmm_vserial_init(m, err, errlen) < 0 ||
	    vmm_balloon_init(m, err, errlen) < 0)
		return -1;
	update_root_port_slots(m);
	machine_hotplug_wire(m);
	board_bootindex_paths(m);
	fw.bootindex_paths = m->bootindex_paths;
	m->fw_cfg = fw_cfg_new(&m->host);
	if (!m->fw_cfg) {
		snprintf(err, errlen, "cannot create the fw_cfg device");
		return -1;
	}
	if (pc_fw_cfg_setup(m->fw_cfg, &fw, err, errlen) < 0)
		return -1;
	pc_cmos_setup(m->rtc, &fw);
	m->port92 = port92_new(&m->host, guest_reset_fn, m);
	m->dma = dma8237_new(&m->host);
	if (!m->port92 || !m->dma) {
		snprintf(err, errlen, "cannot register port 0x92 or the DMA controllers");
		return -1;
	}
	return open_debugcon(m, err, errlen);
}

/* Ports firmware probes where this PC has nothing: claimed last and
 * quietly, so a configured device (-device isa-debug-exit on one of them)
 * keeps its port. */
static void add_absent_ports(struct machine *m)
{
	static const struct {
		uint16_t base, len;
		const char *name;
	} absent[] = {
		{0x378, 8, "lpt1 (absent)"},
		{0x278, 8, "lpt2 (absent)"},
		/* the x87 error latch (clear busy, reset): Linux writes them */
		{0xf0, 2, "fpu latch (absent)"},
		/* the floppy controller, around IDE's 0x3f6 */
		{0x3f0, 6, "fdc (absent)"},
		{0x3f7, 1, "fdc (absent)"},
	};

	for (unsigned i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		isa_empty_new(m->host.pio, absent[i].base, absent[i].len, absent[i].name);
	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++)
		if (!m->serial[i])
			isa_empty_new(m->host.pio, com_base[i], 8, "com (absent)");
	if (!m->debugcon)
		isa_empty_new(m->host.pio, 0x402, 1, "debugcon (absent)");
	/* no VGA: Linux's real-mode setup saves and restores the text screen */
	isa_empty_new(m->host.mmio, 0xa0000, 0x20000, "vga (absent)");
}

/* ------------------------------------------------ info pci, info block */

void board_info_pci(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	size_t n;
	char *buf;

	if (!m->pci)
		return;
	n = pci_bus_info(m->pci, NULL, 0) + 1;
	buf = malloc(n);
	if (!buf)
		return;
	pci_bus_info(m->pci, buf, n);
	fputs(buf, out);
	free(buf);
}

/* QEMU's wording of a cache mode. */
static const char *cache_mode(enum block_cache c)
{
	switch (c) {
	case BLOCK_CACHE_WRITETHROUGH: return "writethrough";
	case BLOCK_CACHE_UNSAFE: return "writeback, ignore flushes";
	case BLOCK_CACHE_NONE: return "writeback, direct";
	case BLOCK_CACHE_DIRECTSYNC: return "direct";
	default: return "writeback";
	}
}

static void print_block(FILE *out, const char *node, struct block_dev *b, const char *attached,
			bool snapshot)
{
	struct block_stats s;

	block_get_stats(b, &s);
	fprintf(out, "%s: %s (%s%s%s)\n", node, block_path(b), block_format_name(b),
		block_read_only(b) ? ", read-only" : "", snapshot ? ", snapshot" : "");
	fprintf(out, "    Attached to:      %s\n", attached);
	fprintf(out, "    Cache mode:       %s\n", cache_mode(block_cache_mode(b)));
	if (block_backing_file(b))
		fprintf(out, "    Backing file:     %s (chain depth: %u)\n", block_backing_file(b),
			block_backing_depth(b));
	fprintf(out, "    Size:             %llu bytes\n",
		(unsigned long long)block_sectors(b) * BLOCK_SECTOR_SIZE);
	fprintf(out,
		"    Requests:         rd_operations=%llu wr_operations=%llu flush_operations=%llu "
		"discard_operations=%llu failed_operations=%llu rd_bytes=%llu wr_bytes=%llu\n\n",
		(unsigned long long)s.rd_ops, (unsigned long long)s.wr_ops,
		(unsigned long long)s.flush_ops, (unsigned long long)s.discard_ops,
		(unsigned long long)s.failed_ops, (unsigned long long)s.rd_bytes,
		(unsigned long long)s.wr_bytes);
}

void board_info_block(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	char node[32], at[64];

	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		if (!m->disks[i])
			continue;
		print_block(out, machine_ide_name(m, i, false, node, sizeof(node)), m->disks[i],
			    machine_ide_attachment(m, i, at, sizeof(at)), m->cfg->snapshot);
	}
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++)
		if (m->cdroms[i])
			hmp_cdrom_info(m, i, out);
	for (unsigned i = 0; i < m->cfg->n_vblk; i++) {
		uint8_t devfn;

		if (!m->vblk[i])
			continue;
		devfn = virtio_pci_devfn(virtio_blk_transport(m->vblk[i]));
		snprintf(at, sizeof(at), "virtio-blk-pci (00:%02x.%x)", devfn >> 3, devfn & 7);
		print_block(out, m->cfg->vdrives[m->cfg->vblk[i].drive].id, m->vdisks[i], at,
			    m->cfg->snapshot);
	}
}

int board_init(struct machine *m, char *err, size_t errlen)
{
	exit_stats_init();
	m->i8042 = i8042_new(&m->host, guest_reset_fn, m);
	if (port80_new(&m->host) < 0 || !m->i8042) {
		snprintf(err, errlen, "cannot register legacy ports");
		return -1;
	}
	m->rtc = rtc_new(&m->host);
	if (!m->rtc) {
		snprintf(err, errlen, "cannot create the CMOS RTC");
		return -1;
	}
	rtc_set_pc_config(m->rtc, m->layout.below_4g, m->layout.above_4g, m->ncpus);
	/* The FADT built by firmware/acpi.c points the guest here. */
	m->acpi_pm = acpi_pm_new(&m->host, ACPI_PM_BASE, ACPI_S5_SLP_TYP, acpi_poweroff_fn, m);
	if (!m->acpi_pm) {
		snprintf(err, errlen, "cannot create the ACPI PM block");
		return -1;
	}
	acpi_pm_set_sleep(m->acpi_pm, ACPI_S3_SLP_TYP, machine_guest_suspend, m);
	rtc_set_alarm_fn(m->rtc, machine_rtc_alarm, m);
	if (add_pc_platform(m, err, errlen) < 0)
		return -1;
	if (add_serials(m, err, errlen) < 0 || add_monitor(m, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < m->cfg->n_devices; i++) {
		const struct device_spec *d = &m->cfg->devices[i];

		if (d->kind == DEVICE_PC_TESTDEV) {
			m->pc_testdev = m->pc_testdev ? m->pc_testdev : pc_testdev_new(&m->host, m->pci);
			if (!m->pc_testdev) {
				snprintf(err, errlen, "-device pc-testdev: its ports are taken");
				return -1;
			}
			continue;
		}
		if (d->kind == DEVICE_EDU) {
			m->edu[i] = edu_new(&m->host, m->pci, d->devfn);
			if (!m->edu[i]) {
				snprintf(err, errlen, "-device edu: its PCI slot is taken");
				return -1;
			}
			continue;
		}
		if (d->kind == DEVICE_PCI_TESTDEV) {
			m->pci_testdev[i] = pci_testdev_new(&m->host, m->pci, d->devfn);
			if (!m->pci_testdev[i]) {
				snprintf(err, errlen, "-device pci-testdev: its PCI slot is taken");
				return -1;
			}
			continue;
		}
		if (d->kind == DEVICE_USB_UHCI || d->kind == DEVICE_USB_XHCI) {
			if (add_usb_controller(m, i, d, err, errlen) < 0)
				return -1;
			continue;
		}
		if (d->kind == DEVICE_PVPANIC) {
			m->pvpanic = pvpanic_new(&m->host, d->iobase, pvpanic_fn, m);
			if (!m->pvpanic) {
				snprintf(err, errlen, "-device pvpanic: port %#x is taken", d->iobase);
				return -1;
			}
			continue;
		}
		m->debug_exit[i] = debug_exit_new(&m->host, d->iobase, d->iosize, debug_exit_fn, m);
		if (!m->debug_exit[i]) {
			snprintf(err, errlen, "-device isa-debug-exit: port %#x is taken", d->iobase);
			return -1;
		}
	}
	add_absent_ports(m);
	m->board_ready = true;
	return 0;
}
