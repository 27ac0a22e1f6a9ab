/* ide_rig.h — the rig of the PIIX3 IDE unit tests (test_ide.c: ATA
 * commands through the ports; test_ide_dma.c: the bus-master DMA engine):
 * the IDE function on a PCI bus of a pc_host.h test host, one disk on a
 * temporary raw image whose sector s byte i holds (s * 7 + i) & 0xff, and
 * helpers that drive the task file like a driver would. Header-only, like
 * pc_host.h, so each test program gets its own copy. */
#ifndef TEST_IDE_RIG_H
#define TEST_IDE_RIG_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/storage/ide.h"
#include "tests/unit/devices/pc_host.h"

#define DISK_SECTORS 2048u
#define CMD 0x1f0
#define CTL 0x3f6
#define BM 0xc000
#define PRD_GPA 0x10000
#define BUF_GPA 0x20000

struct rig {
	struct fake_host t;
	struct pci_bus *bus;
	struct ide *ide;
	struct block_dev *disk;
	char path[64];
};

/* Sector s, byte i of the image holds (s * 7 + i) & 0xff. */
static inline uint8_t pattern(uint64_t s, unsigned i)
{
	return (uint8_t)(s * 7 + i);
}

static inline void rig_up(struct rig *r, bool read_only)
{
	struct block_opts o = {0};
	uint8_t sec[512];
	char err[256];
	int fd;

	test_host_init(&r->t);
	strcpy(r->path, "/tmp/vmm-ide-test-XXXXXX");
	fd = mkstemp(r->path);
	ck_assert_int_ge(fd, 0);
	for (unsigned s = 0; s < DISK_SECTORS; s++) {
		for (unsigned i = 0; i < 512; i++)
			sec[i] = pattern(s, i);
		ck_assert_int_eq(write(fd, sec, 512), 512);
	}
	close(fd);
	o.path = r->path;
	o.read_only = read_only;
	r->disk = block_open(&o, err, sizeof(err));
	ck_assert_msg(r->disk != NULL, "%s", err);
	r->bus = pci_bus_new(&r->t.host);
	struct block_dev *disks[IDE_MAX_DRIVES] = {r->disk, NULL, NULL, NULL};
	r->ide = ide_new(&r->t.host, r->bus, disks);
	ck_assert_ptr_nonnull(r->ide);
	/* BAR 4 at 0xc000, I/O decode on (as SeaBIOS sets it up) */
	pci_cfg_write(r->bus, 0x09, 0x20, 4, BM);
	pci_cfg_write(r->bus, 0x09, 0x04, 2, 0x05);
}

static inline void rig_down(struct rig *r)
{
	ide_free(r->ide);
	pci_bus_free(r->bus);
	block_close(r->disk);
	unlink(r->path);
	test_host_fini(&r->t);
}

static inline uint8_t status(struct rig *r)
{
	return (uint8_t)pio_in(&r->t, CMD + 7, 1);
}

static inline void task_lba28(struct rig *r, uint32_t lba, uint8_t count)
{
	pio_out(&r->t, CMD + 6, 1, 0xe0 | ((lba >> 24) & 0xf));
	pio_out(&r->t, CMD + 2, 1, count);
	pio_out(&r->t, CMD + 3, 1, lba & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 8) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 16) & 0xff);
}

static inline void task_lba48(struct rig *r, uint64_t lba, uint16_t count)
{
	pio_out(&r->t, CMD + 6, 1, 0x40);
	pio_out(&r->t, CMD + 2, 1, count >> 8);
	pio_out(&r->t, CMD + 3, 1, (lba >> 24) & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 32) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 40) & 0xff);
	pio_out(&r->t, CMD + 2, 1, count & 0xff);
	pio_out(&r->t, CMD + 3, 1, lba & 0xff);
	pio_out(&r->t, CMD + 4, 1, (lba >> 8) & 0xff);
	pio_out(&r->t, CMD + 5, 1, (lba >> 16) & 0xff);
}

/* Issue a command with the DMA engine stopped, as a driver leaves it
 * between transfers. */
static inline void command(struct rig *r, uint8_t cmd)
{
	pio_out(&r->t, BM, 1, 0);
	pio_out(&r->t, CMD + 7, 1, cmd);
}

static inline void read_words(struct rig *r, uint16_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		w[i] = (uint16_t)pio_in(&r->t, CMD, 2);
}

static inline void expect_sector(const uint8_t *buf, uint64_t s)
{
	for (unsigned i = 0; i < 512; i++)
		ck_assert_msg(buf[i] == pattern(s, i), "sector %llu byte %u", (unsigned long long)s,
			      i);
}

static inline void file_sector(struct rig *r, uint64_t s, uint8_t *out)
{
	int fd = open(r->path, O_RDONLY);

	ck_assert_int_eq(pread(fd, out, 512, (off_t)(s * 512)), 512);
	close(fd);
}

static inline void expect_abort(struct rig *r, uint8_t err)
{
	ck_assert_uint_eq(status(r) & 0x89, 0x01); /* ERR, not BSY/DRQ */
	ck_assert_uint_eq(pio_in(&r->t, CMD + 1, 1), err);
}

static inline void prd(struct rig *r, unsigned i, uint32_t addr, uint32_t len, bool eot)
{
	uint8_t *e = r->t.ram + PRD_GPA + 8 * i;

	io_data_put(e, 4, addr);
	io_data_put(e + 4, 4, (len & 0xffff) | (eot ? 0x80000000u : 0));
}

static inline void dma_go(struct rig *r, uint32_t table, bool to_mem)
{
	pio_out(&r->t, BM + 4, 4, table);
	pio_out(&r->t, BM + 2, 1, 0x06); /* clear INT, ERR */
	pio_out(&r->t, BM, 1, to_mem ? 0x09 : 0x01);
}

#endif
