/* Unit tests for the USB host controllers with empty root hubs: UHCI's
 * registers as uhci_hcd probes, resets, runs and suspends them; xHCI's
 * capabilities as xhci_hcd walks them, reset and run, the command ring
 * (No Op, Enable/Disable Slot, a device command, Link TRBs with a cycle
 * toggle) and its completion events, interrupts by INTA and MSI, empty
 * ports, and rings outside RAM; snapshots of both, loaded into a new
 * controller that goes on where the saved one stopped. No KVM. */
#include <check.h>
#include <time.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/usb/usb.h"
#include "tests/unit/devices/pc_host.h"
#include "tests/unit/devices/state_tree.h"

#define UHCI_DEVFN 0x0au /* 01.2 */
#define UHCI_IO 0xc000u
#define XHCI_DEVFN 0x18u /* 03.0 */
#define XHCI_BAR 0xfe000000u
#define GSI 11u

static struct fake_host t;
static struct pci_bus *pci;
static unsigned n_msi;
static uint32_t last_msi_data;

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	n_msi++;
	last_msi_data = data;
}

static int route(void *opaque, unsigned slot, unsigned pin)
{
	return GSI;
}

static void setup(void)
{
	test_host_init(&t);
	t.host.irq.msi = record_msi;
	n_msi = 0;
	pci = pci_bus_new(&t.host);
	ck_assert_ptr_nonnull(pci);
	pci_bus_set_route(pci, route, NULL);
}

static void teardown(void)
{
	pci_bus_free(pci);
	test_host_fini(&t);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};

	nanosleep(&ts, NULL);
}

/* ----------------------------------------------------------------- UHCI */

static struct uhci *uhci_up(void)
{
	struct uhci *u = uhci_new(&t.host, pci, UHCI_DEVFN);

	ck_assert_ptr_nonnull(u);
	pci_cfg_write(pci, UHCI_DEVFN, 0x20, 4, UHCI_IO); /* BAR 4 */
	pci_cfg_write(pci, UHCI_DEVFN, 0x04, 2, 0x5);	  /* I/O, bus master */
	return u;
}

START_TEST(uhci_identity_and_ports)
{
	struct uhci *u = uhci_up();
	unsigned ports = 0;

	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0, 4), 0x70208086);
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0x08, 4) >> 8, 0x0c0300);
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0x3d, 1), 4); /* INTD */
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0x60, 1), 0x10);
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0xc0, 2), 0x2000);
	/* BAR 4 sizes to 32 bytes of I/O */
	pci_cfg_write(pci, UHCI_DEVFN, 0x20, 4, 0xffffffffu);
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0x20, 4), 0xffffffe1u);
	pci_cfg_write(pci, UHCI_DEVFN, 0x20, 4, UHCI_IO);
	/* uhci_hcd's count: PORTSC registers with bit 7 set, up to the BAR's end */
	for (unsigned p = 0; p < 8; p++) {
		uint32_t sc = pio_in(&t, UHCI_IO + 0x10 + 2 * p, 2);

		if (!(sc & 0x80) || sc == 0xffff)
			break;
		ports++;
		ck_assert_uint_eq(sc & 0x1, 0); /* nothing connected */
	}
	ck_assert_uint_eq(ports, 2);
	/* the legacy register's write-1-to-clear bits never stick */
	pci_cfg_write(pci, UHCI_DEVFN, 0xc0, 2, 0x8f00);
	ck_assert_uint_eq(pci_cfg_read(pci, UHCI_DEVFN, 0xc0, 2), 0);
	uhci_free(u);
}
END_TEST

START_TEST(uhci_reset_run_halt)
{
	struct uhci *u = uhci_up();
	uint32_t f0, f1;

	pio_out(&t, UHCI_IO + 0x00, 2, 0x0002); /* HCRESET */
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x00, 2) & 0x2, 0);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x02, 2) & 0x20, 0x20); /* halted */
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x0c, 1), 0x40);
	pio_out(&t, UHCI_IO + 0x08, 4, 0x00123000);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x08, 4), 0x00123000);
	pio_out(&t, UHCI_IO + 0x06, 2, 0x100); /* halted: takes a frame number */
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x06, 2), 0x100);
	pio_out(&t, UHCI_IO + 0x00, 2, 0x00c1); /* RS | CF | MAXP */
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x02, 2) & 0x20, 0);
	f0 = pio_in(&t, UHCI_IO + 0x06, 2);
	sleep_ms(20);
	f1 = pio_in(&t, UHCI_IO + 0x06, 2);
	ck_assert_uint_ge(f1 - f0, 10);	   /* about one frame per millisecond */
	pio_out(&t, UHCI_IO + 0x06, 2, 0); /* running: ignored */
	ck_assert_uint_ge(pio_in(&t, UHCI_IO + 0x06, 2), f1);
	/* suspend as uhci_hcd does: EGSM | CF, Run/Stop clear; it must halt */
	pio_out(&t, UHCI_IO + 0x00, 2, 0x0048);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x02, 2) & 0x20, 0x20);
	f0 = pio_in(&t, UHCI_IO + 0x06, 2);
	sleep_ms(5);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x06, 2), f0); /* frozen */
	/* an empty port cannot be enabled; reset and suspend bits stick */
	pio_out(&t, UHCI_IO + 0x10, 2, 0x1204);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x10, 2), 0x1280);
	/* status bits clear by writing 1; no interrupt ever */
	pio_out(&t, UHCI_IO + 0x02, 2, 0xffff);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x02, 2), 0x20);
	ck_assert_uint_eq(t.raised[GSI], 0);
	uhci_free(u);
}
END_TEST

/* ----------------------------------------------------------------- xHCI */

#define OP 0x40u
#define RT 0x1000u
#define DB 0x2000u
#define ERST_GPA 0x10000u
#define EVRING_GPA 0x11000u
#define CMDRING_GPA 0x12000u
#define EV_TRBS 16u

static uint32_t xr(unsigned off)
{
	uint32_t v = 0;

	iobus_read(t.host.mmio, XHCI_BAR + off, &v, 4);
	return v;
}

static void xw(unsigned off, uint32_t v)
{
	iobus_write(t.host.mmio, XHCI_BAR + off, &v, 4);
}

static void xw64(unsigned off, uint64_t v)
{
	iobus_write(t.host.mmio, XHCI_BAR + off, &v, 8);
}

static void put_trb(uint64_t gpa, uint64_t param, uint32_t status, uint32_t control)
{
	memcpy(t.ram + gpa, &param, 8);
	memcpy(t.ram + gpa + 8, &status, 4);
	memcpy(t.ram + gpa + 12, &control, 4);
}

static void get_trb(uint64_t gpa, uint64_t *param, uint32_t *status, uint32_t *control)
{
	memcpy(param, t.ram + gpa, 8);
	memcpy(status, t.ram + gpa + 8, 4);
	memcpy(control, t.ram + gpa + 12, 4);
}

static struct xhci *xhci_up(unsigned p2, unsigned p3)
{
	struct xhci *x = xhci_new(&t.host, pci, XHCI_DEVFN, p2, p3);

	ck_assert_ptr_nonnull(x);
	pci_cfg_write(pci, XHCI_DEVFN, 0x10, 4, XHCI_BAR);
	pci_cfg_write(pci, XHCI_DEVFN, 0x04, 2, 0x6); /* memory, bus master */
	return x;
}

/* What xhci_hcd does before Run: reset, event ring, command ring. */
static void xhci_init_rings(void)
{
	xw(OP + 0x00, 0x2); /* HCRST */
	ck_assert_uint_eq(xr(OP + 0x00) & 0x2, 0);
	ck_assert_uint_eq(xr(OP + 0x04) & 0x801, 0x1); /* halted, CNR clear */
	xw(OP + 0x38, 64);			       /* MaxSlotsEn */
	put_trb(ERST_GPA, EVRING_GPA, EV_TRBS, 0);     /* ERST entry 0 */
	xw(RT + 0x28, 1);			       /* ERSTSZ */
	xw64(RT + 0x38, EVRING_GPA);		       /* ERDP */
	xw64(RT + 0x30, ERST_GPA);		       /* ERSTBA, low then high */
	xw64(OP + 0x18, CMDRING_GPA | 1);	       /* CRCR, RCS = 1 */
	xw(RT + 0x20, 0x2);			       /* IMAN.IE */
	xw(OP + 0x00, 0x5);			       /* RS | INTE */
	ck_assert_uint_eq(xr(OP + 0x04) & 0x1, 0);
}

START_TEST(xhci_capabilities)
{
	struct xhci *x = xhci_up(15, 3);
	unsigned ext, usb2 = 0, usb3 = 0;

	ck_assert_uint_eq(pci_cfg_read(pci, XHCI_DEVFN, 0, 4), 0x000d1b36);
	ck_assert_uint_eq(pci_cfg_read(pci, XHCI_DEVFN, 0x08, 4) >> 8, 0x0c0330);
	ck_assert_uint_eq(pci_cfg_read(pci, XHCI_DEVFN, 0x60, 1), 0x30);
	ck_assert_uint_ne(pci_cfg_read(pci, XHCI_DEVFN, 0x34, 1), 0); /* MSI */
	ck_assert_uint_eq(xr(0x00), 0x01000040);
	ck_assert_uint_eq(xr(0x04) >> 24, 18);	/* ports */
	ck_assert_uint_eq(xr(0x04) & 0xff, 64); /* slots */
	ck_assert_uint_eq(xr(0x14), DB);
	ck_assert_uint_eq(xr(0x18), RT);
	ck_assert_uint_eq(xr(OP + 0x08), 1); /* 4 KiB pages */
	/* walk the extended capabilities as xhci_hcd does */
	ext = (xr(0x10) >> 16) * 4;
	for (unsigned n = 0; ext && n < 8; n++) {
		uint32_t head = xr(ext);

		ck_assert_uint_eq(head & 0xff, 2); /* Supported Protocol */
		ck_assert_uint_eq(xr(ext + 4), 0x20425355);
		if (head >> 24 == 2)
			usb2 = xr(ext + 8);
		else if (head >> 24 == 3)
			usb3 = xr(ext + 8);
		ext = (head >> 8 & 0xff) ? ext + (head >> 8 & 0xff) * 4 : 0;
	}
	ck_assert_uint_eq(usb3 & 0xffff, 3 << 8 | 1);  /* ports 1-3 */
	ck_assert_uint_eq(usb2 & 0xffff, 15 << 8 | 4); /* ports 4-18 */
	/* every port: powered, nothing connected, RxDetect */
	for (unsigned p = 0; p < 18; p++)
		ck_assert_uint_eq(xr(OP + 0x400 + 0x10 * p), 1u << 9 | 5u << 5);
	xhci_free(x);
	ck_assert_ptr_null(xhci_new(&t.host, pci, XHCI_DEVFN, 16, 4));
	ck_assert_ptr_null(xhci_new(&t.host, pci, XHCI_DEVFN, 4, 0));
}
END_TEST

START_TEST(xhci_command_ring)
{
	struct xhci *x = xhci_up(4, 4);
	uint64_t p;
	uint32_t s, c;

	xhci_init_rings();
	put_trb(CMDRING_GPA + 0x00, 0, 0, 23u << 10 | 1);	       /* No Op */
	put_trb(CMDRING_GPA + 0x10, 0, 0, 9u << 10 | 1);	       /* Enable Slot */
	put_trb(CMDRING_GPA + 0x20, 0, 0, 11u << 10 | 1u << 24 | 1);   /* Address Device */
	put_trb(CMDRING_GPA + 0x30, CMDRING_GPA, 0, 6u << 10 | 2 | 1); /* Link, toggle */
	xw(DB, 0);
	get_trb(EVRING_GPA + 0x00, &p, &s, &c);
	ck_assert_uint_eq(p, CMDRING_GPA);
	ck_assert_uint_eq(s >> 24, 1); /* Success */
	ck_assert_uint_eq(c, 33u << 10 | 1);
	get_trb(EVRING_GPA + 0x10, &p, &s, &c);
	ck_assert_uint_eq(p, CMDRING_GPA + 0x10);
	ck_assert_uint_eq(s >> 24, 1);
	ck_assert_uint_eq(c, 1u << 24 | 33u << 10 | 1); /* slot 1 */
	get_trb(EVRING_GPA + 0x20, &p, &s, &c);
	ck_assert_uint_eq(s >> 24, 5); /* TRB Error: no device */
	get_trb(EVRING_GPA + 0x30, &p, &s, &c);
	ck_assert_uint_eq(c, 0);		     /* nothing more: the Link TRB is no command */
	ck_assert_uint_eq(xr(OP + 0x18) & 0x8, 0x8); /* CRR */
	ck_assert_uint_eq(xr(RT + 0x20) & 1, 1);     /* IMAN.IP */
	ck_assert_uint_eq(xr(OP + 0x04) & 0x8, 0x8); /* EINT */
	ck_assert_uint_eq(t.level[GSI], true);	     /* INTA: MSI is off */
	/* the handler: clear IP, move ERDP past three events, clear EHB */
	xw(RT + 0x20, 0x3);
	ck_assert_uint_eq(t.level[GSI], false);
	xw64(RT + 0x38, (EVRING_GPA + 0x30) | 0x8);
	ck_assert_uint_eq(xr(RT + 0x20) & 1, 0);
	/* after the toggle the guest's commands carry cycle 0 */
	put_trb(CMDRING_GPA + 0x00, 0, 0, 10u << 10 | 1u << 24); /* Disable Slot 1 */
	put_trb(CMDRING_GPA + 0x10, 0, 0, 10u << 10 | 1u << 24); /* again: not enabled */
	/* MSI now: the next event is a message, not INTA */
	pci_cfg_write(pci, XHCI_DEVFN, pci_cfg_read(pci, XHCI_DEVFN, 0x34, 1) + 2, 2, 1);
	xw(DB, 0);
	get_trb(EVRING_GPA + 0x30, &p, &s, &c);
	ck_assert_uint_eq(s >> 24, 1);
	ck_assert_uint_eq(c, 1u << 24 | 33u << 10 | 1);
	get_trb(EVRING_GPA + 0x40, &p, &s, &c);
	ck_assert_uint_eq(s >> 24, 11); /* Slot Not Enabled */
	ck_assert_uint_eq(n_msi, 1);
	ck_assert_uint_eq(t.level[GSI], false);
	xhci_free(x);
}
END_TEST

START_TEST(xhci_event_ring_wraps)
{
	struct xhci *x = xhci_up(4, 4);
	uint64_t p;
	uint32_t s, c;

	xhci_init_rings();
	/* 20 No Ops on a ring of 32 TRB slots: 20 events on a 16-TRB event
	 * ring that the handler drains as it goes */
	for (unsigned i = 0; i < 20; i++)
		put_trb(CMDRING_GPA + 16 * i, 0, 0, 23u << 10 | 1);
	for (unsigned i = 0; i < 20; i++) {
		put_trb(CMDRING_GPA + 16 * (i + 1), 0, 0, 0); /* not queued yet */
		xw(DB, 0);
		get_trb(EVRING_GPA + 16 * (i % EV_TRBS), &p, &s, &c);
		ck_assert_uint_eq(p, CMDRING_GPA + 16 * i);
		ck_assert_uint_eq(c & 1, i < EV_TRBS ? 1 : 0); /* the producer cycle flips */
		xw64(RT + 0x38, (EVRING_GPA + 16 * ((i + 1) % EV_TRBS)) | 0x8);
		put_trb(CMDRING_GPA + 16 * (i + 1), 0, 0, 23u << 10 | 1);
	}
	xhci_free(x);
}
END_TEST

START_TEST(xhci_ports_and_bad_rings)
{
	struct xhci *x = xhci_up(4, 4);
	unsigned port = OP + 0x400;

	/* reset on an empty port does nothing; change bits clear; power is
	 * the driver's to switch */
	xw(port, 1u << 4 | 1u << 9);
	ck_assert_uint_eq(xr(port), 1u << 9 | 5u << 5);
	xw(port, 0);
	ck_assert_uint_eq(xr(port) & (1u << 9), 0);
	xw(port, 1u << 9 | 1u << 25);
	ck_assert_uint_eq(xr(port), 1u << 9 | 5u << 5 | 1u << 25);
	ck_assert_uint_eq(xr(OP + 0x400 + 0x10 * 8), 0); /* past the last port */
	/* a command ring outside RAM: Host System Error, halted, no crash */
	xhci_init_rings();
	xw64(OP + 0x18, 0x7fff0000ull | 1); /* CRR is set: ignored */
	xw(OP + 0x00, 0);		    /* stop */
	xw(OP + 0x00, 0x2);		    /* reset */
	xw(OP + 0x38, 64);
	xw64(OP + 0x18, (uint64_t)TEST_RAM_SIZE | 1);
	xw(OP + 0x00, 0x5);
	xw(DB, 0);
	ck_assert_uint_eq(xr(OP + 0x04) & 0x5, 0x5); /* HSE | HCH */
	xw(OP + 0x00, 0x5);			     /* no restart before a reset */
	ck_assert_uint_eq(xr(OP + 0x04) & 0x1, 0x1);
	/* an event ring segment table outside RAM does the same */
	xw(OP + 0x00, 0x2);
	xw(RT + 0x28, 1);
	xw64(RT + 0x30, 0x7ffff000ull);
	ck_assert_uint_eq(xr(OP + 0x04) & 0x4, 0x4);
	xhci_free(x);
}
END_TEST

/* ------------------------------------------------------------ snapshots */

static void save_uhci(void *dev, struct state_writer *w)
{
	uhci_save(dev, w, "usb@0");
}

static int load_uhci(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return uhci_load(dev, r, "usb@0", e, elen);
}

static void save_xhci(void *dev, struct state_writer *w)
{
	xhci_save(dev, w, "usb@1");
}

static int load_xhci(void *dev, const struct state_reader *r, char *e, size_t elen)
{
	return xhci_load(dev, r, "usb@1", e, elen);
}

/* A running UHCI comes back running, its frame list base and frame
 * counter where they were; a port status no empty port has is refused. */
START_TEST(uhci_snapshot_round_trip)
{
	struct uhci *u = uhci_up();
	uint32_t frame;
	size_t len;
	void *blob, *bad;

	pio_out(&t, UHCI_IO + 0x08, 4, 0x00123000);
	pio_out(&t, UHCI_IO + 0x04, 2, 0x000f);
	pio_out(&t, UHCI_IO + 0x00, 2, 0x00c1);
	sleep_ms(5);
	blob = save_tree(save_uhci, u, &len);
	frame = pio_in(&t, UHCI_IO + 0x06, 2);
	uhci_free(u);
	u = uhci_up();
	pio_out(&t, UHCI_IO + 0x08, 4, 0);
	ck_assert_int_eq(load_tree(load_uhci, u, blob, len), 0);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x00, 2), 0x00c1);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x02, 2) & 0x20, 0); /* running */
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x04, 2), 0x000f);
	ck_assert_uint_eq(pio_in(&t, UHCI_IO + 0x08, 4), 0x00123000);
	ck_assert_uint_ge(pio_in(&t, UHCI_IO + 0x06, 2), frame - 1); /* goes on from there */
	bad = patched_copy(blob, len, "/devices/usb@0", "portsc", 0x00010001, 4);
	ck_assert_int_eq(load_tree(load_uhci, u, bad, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "not an empty port"));
	free(bad);
	free(blob);
	uhci_free(u);
}
END_TEST

/* An xHCI that ran commands comes back with its rings where they were:
 * the next command's completion lands in the next event slot with the
 * right cycle, and the slot enabled before the save stays taken. A
 * controller with other port counts refuses the node. */
START_TEST(xhci_snapshot_round_trip)
{
	struct xhci *x = xhci_up(4, 4);
	uint32_t cmd, mf, s_, c;
	uint64_t p;
	size_t len;
	void *blob;

	xhci_init_rings();
	put_trb(CMDRING_GPA + 0x00, 0, 0, 23u << 10 | 1); /* No Op */
	put_trb(CMDRING_GPA + 0x10, 0, 0, 9u << 10 | 1);  /* Enable Slot: 1 */
	xw(DB, 0);
	xw(RT + 0x20, 0x3); /* the handler: IP cleared, ERDP past both */
	xw64(RT + 0x38, (EVRING_GPA + 0x20) | 0x8);
	sleep_ms(2);
	cmd = xr(OP + 0x00);
	mf = xr(RT + 0x00);
	blob = save_tree(save_xhci, x, &len);
	xhci_free(x);
	x = xhci_up(4, 4);
	ck_assert_int_eq(load_tree(load_xhci, x, blob, len), 0);
	ck_assert_uint_eq(xr(OP + 0x00), cmd);
	ck_assert_uint_eq(xr(OP + 0x04) & 0x1, 0);	     /* running */
	ck_assert_uint_eq(xr(OP + 0x38), 64);		     /* MaxSlotsEn */
	ck_assert_uint_eq(xr(RT + 0x28), 1);		     /* ERSTSZ */
	ck_assert_uint_ge((xr(RT + 0x00) - mf) & 0x3fff, 0); /* counting */
	put_trb(CMDRING_GPA + 0x20, 0, 0, 9u << 10 | 1);     /* Enable Slot: 2 */
	xw(DB, 0);
	get_trb(EVRING_GPA + 0x20, &p, &s_, &c);
	ck_assert_uint_eq(p, CMDRING_GPA + 0x20);
	ck_assert_uint_eq(s_ >> 24, 1);
	ck_assert_uint_eq(c, 2u << 24 | 33u << 10 | 1);
	ck_assert_uint_eq(t.level[GSI], true);
	xhci_free(x);
	x = xhci_up(4, 3);
	ck_assert_int_eq(load_tree(load_xhci, x, blob, len), -1);
	ck_assert_ptr_nonnull(strstr(state_err, "8 ports, this controller has 7"));
	free(blob);
	xhci_free(x);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("usb");
	TCase *tc = tcase_create("usb");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, uhci_identity_and_ports);
	tcase_add_test(tc, uhci_reset_run_halt);
	tcase_add_test(tc, xhci_capabilities);
	tcase_add_test(tc, xhci_command_ring);
	tcase_add_test(tc, xhci_event_ring_wraps);
	tcase_add_test(tc, xhci_ports_and_bad_rings);
	tcase_add_test(tc, uhci_snapshot_round_trip);
	tcase_add_test(tc, xhci_snapshot_round_trip);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
