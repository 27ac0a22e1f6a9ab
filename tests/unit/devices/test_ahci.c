/* test_ahci.c — the ICH9 AHCI controller on a PCI bus of a fake host,
 * driven as a driver would: HBA reset, port start, commands built in
 * guest RAM (command list, tables, PRDTs), results read from the FIS
 * receive area, the task file and the interrupt registers. A disk on
 * port 0 and a CD-ROM drive on port 1, both on temporary raw images
 * whose 512-byte sector s byte i holds (s * 7 + i) & 0xff. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/storage/ahci.h"
#include "devices/storage/atapi.h"
#include "tests/unit/devices/pc_host.h"

#define DEVFN (3 << 3)
#define ABAR 0xfebf0000u
#define IDP 0xc040
#define GSI 11
#define DISK_SECTORS 1024u
#define CD_SECTORS 256u /* 512-byte sectors: 64 CD sectors */
#define CLB(p) (0x10000u + (p)*0x1000u)
#define FB(p) (CLB(p) + 0x400u)
#define CT(p, slot) (0x20000u + (p)*0x8000u + (slot)*0x400u)
#define BUF 0x40000u
#define OUTSIDE_RAM 0x10000000u

#define IS_DHRS 0x1u
#define IS_PSS 0x2u
#define IS_SDBS 0x8u
#define IS_TFES (1u << 30)

static struct fake_host t;
static struct pci_bus *bus;
static struct ahci *ahci;
static struct block_dev *disk;
static struct atapi *cd;
static char disk_path[64], cd_path[64];
static unsigned n_msi;

static int route(void *opaque, unsigned slot, unsigned pin)
{
	return GSI;
}

static void record_msi(void *opaque, uint64_t addr, uint32_t data)
{
	n_msi++;
}

static uint8_t pattern(uint64_t s, unsigned i)
{
	return (uint8_t)(s * 7 + i);
}

static struct block_dev *make_image(char *path, unsigned sectors, bool read_only)
{
	struct block_opts o = {.format = BLOCK_FORMAT_RAW, .read_only = read_only};
	uint8_t sec[512];
	char err[256];
	struct block_dev *b;
	int fd;

	strcpy(path, "/tmp/vmm-ahci-test-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	for (unsigned s = 0; s < sectors; s++) {
		for (unsigned i = 0; i < 512; i++)
			sec[i] = pattern(s, i);
		ck_assert_int_eq(write(fd, sec, 512), 512);
	}
	close(fd);
	o.path = path;
	b = block_open(&o, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	return b;
}

static uint32_t rd(unsigned off)
{
	uint32_t v = 0;

	iobus_read(t.host.mmio, ABAR + off, &v, 4);
	return v;
}

static void wr(unsigned off, uint32_t v)
{
	iobus_write(t.host.mmio, ABAR + off, &v, 4);
}

static uint32_t prd(unsigned p, unsigned off)
{
	return rd(0x100 + p * 0x80 + off);
}

static void pwr(unsigned p, unsigned off, uint32_t v)
{
	wr(0x100 + p * 0x80 + off, v);
}

static void setup(void)
{
	struct ahci_drive drives[AHCI_PORTS] = {{0}};

	ck_assert_int_eq(fake_host_init(&t, 4u << 20), 0);
	t.host.irq.msi = record_msi;
	n_msi = 0;
	disk = make_image(disk_path, DISK_SECTORS, false);
	cd = atapi_new(make_image(cd_path, CD_SECTORS, true));
	drives[0].disk = disk;
	drives[1].cdrom = cd;
	bus = pci_bus_new(&t.host);
	pci_bus_set_route(bus, route, NULL);
	ahci = ahci_new(&t.host, bus, DEVFN, drives);
	ck_assert_ptr_nonnull(ahci);
	pci_cfg_write(bus, DEVFN, 0x24, 4, ABAR);
	pci_cfg_write(bus, DEVFN, 0x20, 4, IDP);
	pci_cfg_write(bus, DEVFN, 0x04, 2, 0x7); /* I/O, memory, bus master */
}

static void teardown(void)
{
	ahci_free(ahci);
	pci_bus_free(bus);
	atapi_free(cd);
	block_close(disk);
	unlink(disk_path);
	unlink(cd_path);
	fake_host_fini(&t);
}

/* As Linux brings a port up: engine stopped, CLB/FB, FRE, interrupts
 * enabled, then ST. */
static void port_start(unsigned p)
{
	wr(0x04, 0x80000002); /* GHC: AE, IE */
	pwr(p, 0x00, CLB(p));
	pwr(p, 0x08, FB(p));
	pwr(p, 0x18, 0x16); /* FRE, POD, SUD */
	pwr(p, 0x10, 0xffffffff);
	pwr(p, 0x14, 0x7dc0007f);
	pwr(p, 0x18, 0x17); /* ST */
}

/* A command in slot with an H2D FIS and nprd PRD entries (addr, bytes). */
static void build(unsigned p, unsigned slot, const uint8_t fis[20], const uint32_t (*prds)[2],
		  unsigned nprd, bool write)
{
	uint8_t *ram = t.ram;
	uint32_t hdr[4] = {5 | (write ? 0x40u : 0) | nprd << 16, 0xdeadbeef, CT(p, slot), 0};

	memcpy(ram + CLB(p) + slot * 32, hdr, sizeof(hdr));
	memset(ram + CT(p, slot), 0, 0x80);
	memcpy(ram + CT(p, slot), fis, 20);
	for (unsigned i = 0; i < nprd; i++) {
		uint32_t e[4] = {prds[i][0], 0, 0, prds[i][1] - 1};

		memcpy(ram + CT(p, slot) + 0x80 + i * 16, e, sizeof(e));
	}
}

static void h2d(uint8_t fis[20], uint8_t cmd, uint64_t lba, uint16_t count)
{
	memset(fis, 0, 20);
	fis[0] = 0x27;
	fis[1] = 0x80;
	fis[2] = cmd;
	fis[4] = (uint8_t)lba;
	fis[5] = (uint8_t)(lba >> 8);
	fis[6] = (uint8_t)(lba >> 16);
	fis[7] = 0x40;
	fis[8] = (uint8_t)(lba >> 24);
	fis[12] = (uint8_t)count;
	fis[13] = (uint8_t)(count >> 8);
}

static uint32_t prdbc(unsigned p, unsigned slot)
{
	uint32_t v;

	memcpy(&v, t.ram + CLB(p) + slot * 32 + 4, 4);
	return v;
}

static void issue(unsigned p, unsigned slot)
{
	pwr(p, 0x38, 1u << slot);
	ck_assert_uint_eq(prd(p, 0x38) & (1u << slot), 0);
}

START_TEST(reset_state)
{
	ck_assert_uint_eq(pci_cfg_read(bus, DEVFN, 0, 4), 0x29228086);
	ck_assert_uint_eq(pci_cfg_read(bus, DEVFN, 0x08, 4) >> 8, 0x010601);
	ck_assert_uint_eq(rd(0x00) & 0x1f, AHCI_PORTS - 1);
	ck_assert_uint_ne(rd(0x00) & (1u << 31), 0);   /* 64-bit */
	ck_assert_uint_eq((rd(0x00) >> 8) & 0x1f, 31); /* 32 slots */
	ck_assert_uint_eq(rd(0x0c), 0x3f);
	ck_assert_uint_eq(rd(0x10), 0x00010000);
	ck_assert_uint_eq(rd(0x04), 0x80000000);
	/* the index/data pair in BAR 4 reaches the same registers */
	pio_out(&t, IDP + 0x10, 4, 0x0c);
	ck_assert_uint_eq(pio_in(&t, IDP + 0x14, 4), 0x3f);
	ck_assert_uint_eq(prd(0, 0x28), 0x113);
	ck_assert_uint_eq(prd(0, 0x24), 0x00000101);
	ck_assert_uint_eq(prd(1, 0x24), 0xeb140101);
	ck_assert_uint_eq(prd(2, 0x28), 0);
	/* HBA reset: IE and the port registers back to their reset values */
	port_start(0);
	ck_assert_uint_eq(rd(0x04), 0x80000002);
	wr(0x04, 1);
	ck_assert_uint_eq(rd(0x04), 0x80000000);
	ck_assert_uint_eq(prd(0, 0x00), 0);
	ck_assert_uint_eq(prd(0, 0x18) & 0x11, 0);
	ck_assert_uint_eq(prd(0, 0x28), 0x113);
	/* COMRESET: link down while DET=1, up again with the signature */
	pwr(0, 0x2c, 1);
	ck_assert_uint_eq(prd(0, 0x28), 0);
	pwr(0, 0x2c, 0);
	ck_assert_uint_eq(prd(0, 0x28), 0x113);
	ck_assert_uint_eq(prd(0, 0x20) & 0x88, 0);
}
END_TEST

START_TEST(port_start_stop)
{
	port_start(0);
	ck_assert_uint_eq(prd(0, 0x18) & 0xc011, 0xc011); /* CR, FR follow ST, FRE */
	pwr(0, 0x18, 0x16);
	ck_assert_uint_eq(prd(0, 0x18) & 0x8001, 0);
	ck_assert_uint_ne(prd(0, 0x18) & 0x4000, 0);
	/* commands issued while stopped do not run */
	pwr(0, 0x38, 1);
	ck_assert_uint_eq(prd(0, 0x38), 0);
}
END_TEST

START_TEST(identify_disk)
{
	uint8_t fis[20];
	uint32_t prds[1][2] = {{BUF, 512}};
	uint16_t id[256];

	port_start(0);
	h2d(fis, 0xec, 0, 0);
	build(0, 0, fis, prds, 1, false);
	issue(0, 0);
	memcpy(id, t.ram + BUF, sizeof(id));
	ck_assert_uint_eq(id[0], 0x0040);
	ck_assert_uint_eq(id[100], DISK_SECTORS);
	ck_assert_uint_ne(id[76] & 0x100, 0); /* NCQ */
	ck_assert_uint_eq(prdbc(0, 0), 512);
	ck_assert_uint_eq(t.ram[FB(0) + 0x20], 0x5f); /* PIO setup, E_Status */
	ck_assert_uint_eq(t.ram[FB(0) + 0x20 + 15], 0x50);
	ck_assert_uint_eq(t.ram[FB(0) + 0x40], 0x34);
	ck_assert_uint_eq(prd(0, 0x10) & (IS_DHRS | IS_PSS), IS_DHRS | IS_PSS);
	ck_assert_uint_eq(prd(0, 0x20), 0x50);
	ck_assert_uint_eq(rd(0x08), 1);
	ck_assert(t.level[GSI]);
	/* the driver clears the port's then the global interrupt */
	pwr(0, 0x10, 0xffffffff);
	wr(0x08, 1);
	ck_assert(!t.level[GSI]);
}
END_TEST

START_TEST(dma_read_write)
{
	uint8_t fis[20];
	/* 8 sectors over three uneven segments */
	uint32_t prds[3][2] = {{BUF, 1000}, {BUF + 0x2000, 24}, {BUF + 0x4000, 3072}};
	uint8_t sec[512];

	port_start(0);
	h2d(fis, 0x25, 100, 8);
	build(0, 3, fis, prds, 3, false);
	issue(0, 3);
	ck_assert_uint_eq(prd(0, 0x20) & 1, 0);
	ck_assert_uint_eq(prdbc(0, 3), 4096);
	for (unsigned i = 0; i < 1000; i++)
		ck_assert_uint_eq(t.ram[BUF + i], pattern(100 + i / 512, i % 512));
	for (unsigned i = 1000; i < 1024; i++)
		ck_assert_uint_eq(t.ram[BUF + 0x2000 + i - 1000], pattern(101, i % 512));
	for (unsigned i = 1024; i < 4096; i++)
		ck_assert_uint_eq(t.ram[BUF + 0x4000 + i - 1024], pattern(100 + i / 512, i % 512));
	/* 200 sectors into one 100 KiB segment: more than one bounce's worth */
	uint32_t big[1][2] = {{BUF + 0x20000, 200 * 512}};
	h2d(fis, 0x25, 300, 200);
	build(0, 5, fis, big, 1, false);
	issue(0, 5);
	ck_assert_uint_eq(prdbc(0, 5), 200 * 512);
	for (unsigned i = 0; i < 200 * 512; i += 509)
		ck_assert_uint_eq(t.ram[BUF + 0x20000 + i], pattern(300 + i / 512, i % 512));
	/* WRITE DMA (28-bit) of 2 sectors to 7, read back from the image */
	for (unsigned i = 0; i < 1024; i++)
		t.ram[BUF + 0x10000 + i] = (uint8_t)(i ^ 0x5a);
	uint32_t wprd[1][2] = {{BUF + 0x10000, 1024}};
	h2d(fis, 0xca, 7, 2);
	build(0, 4, fis, wprd, 1, true);
	issue(0, 4);
	ck_assert_uint_eq(prd(0, 0x20) & 1, 0);
	ck_assert_int_eq(block_read(disk, 8, sec, 1), 0);
	for (unsigned i = 0; i < 512; i++)
		ck_assert_uint_eq(sec[i], (uint8_t)((i + 512) ^ 0x5a));
}
END_TEST

START_TEST(ncq_read)
{
	uint8_t fis[20];
	uint32_t prds[1][2] = {{BUF, 2048}};

	port_start(0);
	h2d(fis, 0x60, 50, 0);
	fis[3] = 4;	  /* count in the features */
	fis[12] = 5 << 3; /* tag 5 */
	build(0, 5, fis, prds, 1, false);
	pwr(0, 0x34, 1u << 5);
	ck_assert_uint_eq(prd(0, 0x34), 1u << 5);
	issue(0, 5);
	ck_assert_uint_eq(prd(0, 0x34), 0);
	ck_assert_uint_eq(t.ram[FB(0) + 0x58], 0xa1);
	ck_assert_uint_eq(t.ram[FB(0) + 0x58 + 4], 1u << 5);
	ck_assert_uint_ne(prd(0, 0x10) & IS_SDBS, 0);
	for (unsigned i = 0; i < 2048; i++)
		ck_assert_uint_eq(t.ram[BUF + i], pattern(50 + i / 512, i % 512));
}
END_TEST

static void packet(unsigned slot, const uint8_t *cdb, uint32_t bytes)
{
	uint8_t fis[20];
	uint32_t prds[1][2] = {{BUF, bytes}};

	h2d(fis, 0xa0, 0, 0);
	fis[3] = 1; /* DMA */
	build(1, slot, fis, prds, 1, false);
	memcpy(t.ram + CT(1, slot) + 0x40, cdb, 12);
	issue(1, slot);
}

START_TEST(atapi_inquiry_read)
{
	uint8_t inquiry[12] = {0x12, 0, 0, 0, 36, 0};
	uint8_t read10[12] = {0x28, 0, 0, 0, 0, 3, 0, 0, 2, 0};
	uint8_t fis[20];
	uint32_t prds[1][2] = {{BUF, 512}};
	uint16_t id[256];

	port_start(1);
	h2d(fis, 0xa1, 0, 0);
	build(1, 0, fis, prds, 1, false);
	issue(1, 0);
	memcpy(id, t.ram + BUF, sizeof(id));
	ck_assert_uint_eq(id[0], 0x85c0);
	packet(1, inquiry, 36);
	ck_assert_uint_eq(prd(1, 0x20) & 1, 0);
	ck_assert_uint_eq(prdbc(1, 1), 36);
	ck_assert_uint_eq(t.ram[BUF] & 0x1f, 5); /* CD/DVD device */
	packet(2, read10, 4096);		 /* CD sectors 3 and 4 */
	ck_assert_uint_eq(prd(1, 0x20) & 1, 0);
	ck_assert_uint_eq(prdbc(1, 2), 4096);
	for (unsigned i = 0; i < 4096; i++)
		ck_assert_uint_eq(t.ram[BUF + i], pattern(12 + i / 512, i % 512));
	/* past the end of the disc: CHECK CONDITION, ILLEGAL REQUEST */
	read10[5] = 200;
	packet(3, read10, 4096);
	ck_assert_uint_eq(prd(1, 0x20) & 0xff, 0x41);
	ck_assert_uint_eq(prd(1, 0x20) >> 12, 5);
	ck_assert_uint_ne(prd(1, 0x10) & IS_TFES, 0);
}
END_TEST

/* One bad command: an error status on its port, nothing else broken. */
static void expect_error(uint8_t error_mask)
{
	ck_assert_uint_eq(prd(0, 0x20) & 0x01, 0x01);
	ck_assert_uint_ne((prd(0, 0x20) >> 8) & error_mask, 0);
	ck_assert_uint_ne(prd(0, 0x10) & IS_TFES, 0);
	pwr(0, 0x10, 0xffffffff);
}

START_TEST(bad_requests)
{
	uint8_t fis[20];
	uint32_t short_prd[1][2] = {{BUF, 1024}};
	uint32_t outside[1][2] = {{OUTSIDE_RAM, 4096}};
	uint32_t good[1][2] = {{BUF, 512}};

	port_start(0);
	h2d(fis, 0x25, 0, 8); /* 4 KiB into a 1 KiB table */
	build(0, 0, fis, short_prd, 1, false);
	issue(0, 0);
	expect_error(0x04);
	h2d(fis, 0x25, 0, 8); /* a buffer outside RAM */
	build(0, 1, fis, outside, 1, false);
	issue(0, 1);
	expect_error(0x04);
	h2d(fis, 0x35, 0, 8); /* no PRDT at all */
	build(0, 2, fis, NULL, 0, true);
	issue(0, 2);
	expect_error(0x04);
	h2d(fis, 0x25, DISK_SECTORS - 1, 2); /* past the end */
	build(0, 3, fis, good, 1, false);
	issue(0, 3);
	expect_error(0x10);
	h2d(fis, 0x25, 0, 1); /* a command table outside RAM */
	build(0, 4, fis, good, 1, false);
	memcpy(t.ram + CLB(0) + 4 * 32 + 8, &(uint32_t){OUTSIDE_RAM}, 4);
	issue(0, 4);
	expect_error(0x04);
	/* the port still works */
	h2d(fis, 0x25, 1, 1);
	build(0, 5, fis, good, 1, false);
	issue(0, 5);
	ck_assert_uint_eq(prd(0, 0x20) & 1, 0);
	ck_assert_uint_eq(t.ram[BUF + 3], pattern(1, 3));
}
END_TEST

START_TEST(msi_instead_of_intx)
{
	uint8_t fis[20];
	uint32_t prds[1][2] = {{BUF, 512}};
	unsigned cap = pci_cfg_read(bus, DEVFN, 0x34, 1);

	while (cap && pci_cfg_read(bus, DEVFN, cap, 1) != 0x05)
		cap = pci_cfg_read(bus, DEVFN, cap + 1, 1);
	ck_assert_uint_ne(cap, 0);
	pci_cfg_write(bus, DEVFN, cap + 4, 4, 0xfee00000);
	pci_cfg_write(bus, DEVFN, cap + 12, 2, 0x0041);
	pci_cfg_write(bus, DEVFN, cap + 2, 2, 1);
	port_start(0);
	h2d(fis, 0x25, 0, 1);
	build(0, 0, fis, prds, 1, false);
	issue(0, 0);
	ck_assert_uint_eq(n_msi, 1);
	ck_assert(!t.level[GSI]);
}
END_TEST

static Suite *ahci_suite(void)
{
	Suite *s = suite_create("ahci");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reset_state);
	tcase_add_test(tc, port_start_stop);
	tcase_add_test(tc, identify_disk);
	tcase_add_test(tc, dma_read_write);
	tcase_add_test(tc, ncq_read);
	tcase_add_test(tc, atapi_inquiry_read);
	tcase_add_test(tc, bad_requests);
	tcase_add_test(tc, msi_instead_of_intx);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return test_run_suite(ahci_suite());
}
