/* fuzz_state.c — the device-state tree reader (state/state.c) and the
 * devices' loaders on it: the input is a saved tree. Every input goes
 * through state_reader_open (fdt_check_full); an accepted tree is loaded
 * into a fresh 16550A, RTC, 8259A pair, edu, virtio-rng-pci (the
 * virtio-pci transport's loader: registers, MSI-X, queues against 2 MiB
 * of RAM), virtio-balloon-pci (held stats buffer, page map) and
 * virtio-serial-pci (ports, pending control messages and input),
 * pci-testdev, the USB controllers (piix3-usb-uhci as usb@0, qemu-xhci
 * as usb@1) and intel-iommu (intremap=on) under /devices, each device is
 * read through its ports, and what loaded is saved again and must load
 * back (a loaded device always holds a state its own loader accepts). */
#include <stdio.h>
#include <stdlib.h>

#include "devices/intc/i8259.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/isa/serial.h"
#include "devices/pci/pci.h"
#include "devices/testdev/edu.h"
#include "devices/testdev/pci_testdev.h"
#include "devices/timer/rtc.h"
#include "devices/usb/usb.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"
#include "tests/fake_host.h"
#include "tests/fuzz/fuzz.h"

static struct fake_host host;
static struct pci_bus *bus;

struct devs {
	struct serial *uart;
	struct rtc *rtc;
	struct i8259 *pic;
	struct virtio_rng *rng;
	struct edu *edu;
	struct virtio_balloon *balloon;
	struct virtio_console *serial;
	struct pci_testdev *pt;
	struct uhci *uhci;
	struct xhci *xhci;
	struct intel_iommu *iommu;
	bool uart_ok, rtc_ok, pic_ok, rng_ok, edu_ok, balloon_ok, serial_ok, pt_ok, uhci_ok,
		xhci_ok, iommu_ok;
};

/* as the unit tests' device, whose trees are the seeds */
static const struct virtio_console_port_opts ports[2] = {
	{.id = 0, .console = true},
	{.id = 1, .name = "org.test.0"},
};

static void devs_new(struct devs *d)
{
	*d = (struct devs){0};
	host.host.n_reset = 0; /* the freed devices' reset hooks */
	d->uart = serial_new(&host.host, SERIAL_COM1_BASE, SERIAL_COM1_IRQ, NULL);
	d->rtc = rtc_new(&host.host);
	d->pic = i8259_new(&host.host, NULL, NULL);
	d->rng = virtio_rng_new(
		&host.host, bus,
		&(struct virtio_rng_opts){
			.fd = -1, .max_bytes = 4096, .period_ms = 1000, .devfn = 3 << 3},
		NULL, 0);
	d->edu = edu_new(&host.host, bus, 4 << 3);
	d->balloon = virtio_balloon_new(&host.host, bus,
					&(struct virtio_balloon_opts){.devfn = 5 << 3}, NULL, 0);
	d->serial = virtio_console_new(&host.host, bus,
				       &(struct virtio_console_opts){6 << 3, 2, ports, 2}, NULL, 0);
	d->pt = pci_testdev_new(&host.host, bus, 7 << 3);
	d->uhci = uhci_new(&host.host, bus, 8 << 3);
	d->xhci = xhci_new(&host.host, bus, 9 << 3, 4, 4);
	/* off the bus: the others' DMA stays untranslated */
	d->iommu = intel_iommu_new(&host.host, NULL, &(struct intel_iommu_opts){true, false});
	if (!d->uart || !d->rtc || !d->pic || !d->rng || !d->edu || !d->balloon || !d->serial ||
	    !d->pt || !d->uhci || !d->xhci || !d->iommu)
		abort();
}

static void devs_free(struct devs *d)
{
	serial_free(d->uart);
	rtc_free(d->rtc);
	i8259_free(d->pic);
	virtio_rng_free(d->rng);
	edu_free(d->edu);
	virtio_balloon_free(d->balloon);
	virtio_console_free(d->serial);
	pci_testdev_free(d->pt);
	uhci_free(d->uhci);
	xhci_free(d->xhci);
	intel_iommu_free(d->iommu);
}

static void devs_load(struct devs *d, const struct state_reader *r)
{
	char err[256];

	d->uart_ok = serial_load(d->uart, r, err, sizeof(err)) == 0;
	d->rtc_ok = rtc_load(d->rtc, r, err, sizeof(err)) == 0;
	d->pic_ok = i8259_load(d->pic, r, err, sizeof(err)) == 0;
	d->rng_ok = virtio_pci_load(virtio_rng_transport(d->rng), r, "virtio-rng@0", err,
				    sizeof(err)) == 0;
	d->edu_ok = edu_load(d->edu, r, "edu@0", err, sizeof(err)) == 0;
	d->balloon_ok = virtio_pci_load(virtio_balloon_transport(d->balloon), r,
					"virtio-balloon@0", err, sizeof(err)) == 0;
	d->serial_ok = virtio_pci_load(virtio_console_transport(d->serial), r, "virtio-serial@0",
				       err, sizeof(err)) == 0;
	d->pt_ok = pci_testdev_load(d->pt, r, "pci-testdev@0", err, sizeof(err)) == 0;
	d->uhci_ok = uhci_load(d->uhci, r, "usb@0", err, sizeof(err)) == 0;
	d->xhci_ok = xhci_load(d->xhci, r, "usb@1", err, sizeof(err)) == 0;
	d->iommu_ok = intel_iommu_load(d->iommu, r, err, sizeof(err)) == 0;
}

/* The virtio devices that loaded, saved under their names: 0, or -1. */
static int save_virtio(struct devs *d, struct state_writer *w, char *err, size_t errlen)
{
	if (d->rng_ok && virtio_pci_save(virtio_rng_transport(d->rng), w, "virtio-rng@0", err,
					 errlen) < 0)
		return -1;
	if (d->balloon_ok && virtio_pci_save(virtio_balloon_transport(d->balloon), w,
					     "virtio-balloon@0", err, errlen) < 0)
		return -1;
	if (d->serial_ok && virtio_pci_save(virtio_console_transport(d->serial), w,
					    "virtio-serial@0", err, errlen) < 0)
		return -1;
	return 0;
}

/* Every port of the three devices, and the PIC's INTA cycle. */
static void devs_poke(struct devs *d)
{
	uint32_t v;

	for (unsigned round = 0; round < 18; round++)
		for (uint16_t port = 0; port < 8; port++)
			iobus_read(host.host.pio, SERIAL_COM1_BASE + port, &v, 1);
	iobus_read(host.host.pio, 0x71, &v, 1); /* the loaded index */
	for (uint8_t idx = 0; idx < 0x80; idx++) {
		iobus_write(host.host.pio, 0x70, &idx, 1);
		iobus_read(host.host.pio, 0x71, &v, 1);
	}
	for (unsigned i = 0; i < 4; i++) {
		iobus_read(host.host.pio, i < 2 ? 0x20 + i : 0xa0 + i - 2, &v, 1);
		if (i8259_intr(d->pic))
			i8259_ack(d->pic);
	}
	for (unsigned off = 0; off < INTEL_IOMMU_SIZE; off += 4)
		iobus_read(host.host.mmio, INTEL_IOMMU_BASE + off, &v, 4);
}

/* Save what loaded; loading it into fresh devices must succeed. */
static void resave(struct devs *d)
{
	struct state_writer *w = state_writer_new();
	struct state_reader r, devices;
	char err[256];
	struct devs again;
	size_t len;
	void *blob;

	if (!w)
		abort();
	state_begin(w, "devices", 1);
	if (d->uart_ok)
		serial_save(d->uart, w);
	if (d->rtc_ok)
		rtc_save(d->rtc, w);
	if (d->pic_ok)
		i8259_save(d->pic, w);
	if (d->edu_ok)
		edu_save(d->edu, w, "edu@0");
	if (d->pt_ok)
		pci_testdev_save(d->pt, w, "pci-testdev@0");
	if (d->uhci_ok)
		uhci_save(d->uhci, w, "usb@0");
	if (d->xhci_ok)
		xhci_save(d->xhci, w, "usb@1");
	if (d->iommu_ok)
		intel_iommu_save(d->iommu, w);
	if (save_virtio(d, w, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_state: %s\n", err);
		abort();
	}
	state_end(w);
	if (state_writer_finish(w, &blob, &len, err, sizeof(err)) < 0 ||
	    state_reader_open(&r, blob, len, err, sizeof(err)) < 0 ||
	    state_reader_sub(&r, "/devices", &devices, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_state: %s\n", err);
		abort();
	}
	devs_free(d); /* the ports are free for the second set */
	devs_new(&again);
	devs_load(&again, &devices);
	if (again.uart_ok != d->uart_ok || again.rtc_ok != d->rtc_ok || again.pic_ok != d->pic_ok ||
	    again.rng_ok != d->rng_ok || again.edu_ok != d->edu_ok ||
	    again.balloon_ok != d->balloon_ok || again.serial_ok != d->serial_ok ||
	    again.pt_ok != d->pt_ok || again.uhci_ok != d->uhci_ok || again.xhci_ok != d->xhci_ok ||
	    again.iommu_ok != d->iommu_ok)
		abort();
	devs_free(&again);
	state_reader_close(&r);
	free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_reader r, devices;
	char err[256];
	struct devs d;

	if (!host.ram && (fake_host_init(&host, 2 << 20) < 0 || !(bus = pci_bus_new(&host.host))))
		abort();
	if (state_reader_open(&r, data, size, err, sizeof(err)) < 0)
		return 0;
	if (state_reader_sub(&r, "/devices", &devices, err, sizeof(err)) == 0) {
		devs_new(&d);
		devs_load(&d, &devices);
		devs_poke(&d);
		resave(&d);
	}
	state_reader_close(&r);
	return 0;
}
