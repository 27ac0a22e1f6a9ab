/* test_atapi.c — the ATAPI CD-ROM drive (devices/storage/atapi.c) through the
 * PIIX3 IDE registers (ide_atapi.c), as a driver talks to it: the
 * signature, IDENTIFY PACKET DEVICE, every MMC command vmm answers, sense
 * data, UNIT ATTENTION after a change, the empty drive, the tray lock,
 * byte count limits, bad CDBs, reads past the end, PIO and DMA. The drive
 * is the primary master; its medium is the rig's pattern image, so CD
 * sector L byte j is pattern(4 L + j / 512, j % 512). */
#include "tests/unit/devices/ide_rig.h"

#include "devices/storage/atapi.h"
#include "tests/unit/check_run.h"

#define CD_SECTORS (DISK_SECTORS / 4)

struct cd {
	struct rig r;
	struct atapi *a;
};

static struct block_dev *open_image(struct cd *c)
{
	struct block_opts o = {.path = c->r.path, .read_only = true};
	char err[256];
	struct block_dev *b = block_open(&o, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s", err);
	return b;
}

/* The rig's image and bus, with a CD-ROM drive (empty or not) in place
 * of its disk. */
static void cd_up(struct cd *c, bool with_medium)
{
	struct block_dev *disks[IDE_MAX_DRIVES] = {NULL};
	struct atapi *cds[IDE_MAX_DRIVES] = {NULL};

	rig_up(&c->r, true);
	ide_free(c->r.ide);
	c->a = atapi_new(with_medium ? open_image(c) : NULL);
	cds[0] = c->a;
	c->r.ide = ide_new_with_cdroms(&c->r.t.host, c->r.bus, disks, cds);
	ck_assert_ptr_nonnull(c->r.ide);
	pci_cfg_write(c->r.bus, 0x09, 0x20, 4, BM);
	pci_cfg_write(c->r.bus, 0x09, 0x04, 2, 0x05);
}

static void cd_down(struct cd *c)
{
	ide_free(c->r.ide);
	c->r.ide = NULL;
	atapi_free(c->a);
	pci_bus_free(c->r.bus);
	block_close(c->r.disk);
	unlink(c->r.path);
	test_host_fini(&c->r.t);
}

static uint8_t reg(struct cd *c, unsigned off)
{
	return (uint8_t)pio_in(&c->r.t, CMD + off, 1);
}

/* PACKET with this CDB (12 bytes), byte count limit and DMA flag. */
static void packet(struct cd *c, const uint8_t *cdb, uint16_t limit, bool dma)
{
	pio_out(&c->r.t, CMD + 6, 1, 0xa0);
	pio_out(&c->r.t, CMD + 1, 1, dma);
	pio_out(&c->r.t, CMD + 4, 1, limit & 0xff);
	pio_out(&c->r.t, CMD + 5, 1, limit >> 8);
	command(&c->r, 0xa0);
	ck_assert_uint_eq(reg(c, 7) & 0x88, 0x08); /* DRQ for the packet */
	ck_assert_uint_eq(reg(c, 2) & 3, 1);	   /* CoD */
	for (unsigned i = 0; i < 12; i += 2)
		pio_out(&c->r.t, CMD, 2, cdb[i] | cdb[i + 1] << 8);
}

/* The data-in phase by PIO: every DRQ block's size checked against the
 * limit; the bytes read. Ends with the status phase checked. */
static unsigned pio_in_all(struct cd *c, uint8_t *buf, unsigned max, unsigned limit)
{
	unsigned total = 0;

	while (reg(c, 7) & 0x08) {
		unsigned n = reg(c, 4) | reg(c, 5) << 8;

		ck_assert_uint_eq(reg(c, 2) & 3, 2); /* IO, data */
		ck_assert_uint_gt(n, 0);
		ck_assert_uint_le(n, limit);
		ck_assert_uint_le(total + n, max);
		for (unsigned i = 0; i < n; i += 2) {
			uint16_t w = (uint16_t)pio_in(&c->r.t, CMD, 2);

			buf[total + i] = (uint8_t)w;
			if (i + 1 < n)
				buf[total + i + 1] = (uint8_t)(w >> 8);
		}
		total += n;
	}
	ck_assert_uint_eq(reg(c, 2) & 3, 3); /* status phase */
	return total;
}

/* Run a command: 0 and the reply in buf (*len), or the ATA error register. */
static uint8_t run(struct cd *c, const uint8_t *cdb, uint8_t *buf, unsigned max, unsigned *len)
{
	unsigned n = 0;

	packet(c, cdb, 0xfffe, false);
	if (!(reg(c, 7) & 0x01))
		n = pio_in_all(c, buf, max, 0xfffe);
	if (len)
		*len = n;
	return reg(c, 7) & 0x01 ? reg(c, 1) : 0;
}

/* REQUEST SENSE: key << 16 | ASC << 8 | ASCQ. */
static uint32_t sense(struct cd *c)
{
	uint8_t cdb[12] = {0x03, 0, 0, 0, 18}, s[18];
	unsigned n;

	ck_assert_uint_eq(run(c, cdb, s, sizeof(s), &n), 0);
	ck_assert_uint_eq(n, 18);
	ck_assert_uint_eq(s[0], 0x70);
	return (uint32_t)(s[2] & 0x0f) << 16 | s[12] << 8 | s[13];
}

/* A command that must fail with this sense. */
static void expect_check(struct cd *c, const uint8_t *cdb, uint32_t want)
{
	uint8_t buf[64];

	ck_assert_uint_eq(run(c, cdb, buf, sizeof(buf), NULL), (want >> 16) << 4 | 0x04);
	ck_assert_uint_eq(reg(c, 2) & 3, 3);
	ck_assert_uint_eq(sense(c), want);
}

static void expect_cd_sector(const uint8_t *buf, uint64_t lba)
{
	for (unsigned q = 0; q < 4; q++)
		expect_sector(buf + 512 * q, 4 * lba + q);
}

static void clear_unit_attention(struct cd *c)
{
	uint8_t tur[12] = {0};

	run(c, tur, NULL, 0, NULL);
}

START_TEST(signature_and_identify_packet)
{
	struct cd c;
	uint16_t id[256];
	unsigned raised;

	cd_up(&c, true);
	ck_assert_uint_eq(reg(&c, 4), 0x14);
	ck_assert_uint_eq(reg(&c, 5), 0xeb);
	/* IDENTIFY DEVICE: refused, with the signature for the driver */
	pio_out(&c.r.t, CMD + 4, 1, 0);
	command(&c.r, 0xec);
	expect_abort(&c.r, 0x04);
	ck_assert_uint_eq(reg(&c, 4), 0x14);
	ck_assert_uint_eq(reg(&c, 5), 0xeb);
	/* ATA reads are refused too */
	command(&c.r, 0x20);
	expect_abort(&c.r, 0x04);
	command(&c.r, 0xa1);
	ck_assert_uint_eq(status(&c.r) & 0x89, 0x08);
	raised = c.r.t.raised[14];
	read_words(&c.r, id, 256);
	ck_assert_uint_eq(c.r.t.raised[14], raised); /* no interrupt at the end */
	ck_assert_uint_eq(id[0], 0x85c0);
	ck_assert_uint_eq(id[49] & 0x0300, 0x0300);
	ck_assert_uint_eq((id[255] & 0xff), 0xa5);
	ck_assert_uint_eq(status(&c.r) & 0x88, 0);
	cd_down(&c);
}
END_TEST

START_TEST(inquiry_and_allocation_length)
{
	struct cd c;
	uint8_t cdb[12] = {0x12, 0, 0, 0, 96}, buf[128];
	unsigned n;

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, cdb, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 36);
	ck_assert_uint_eq(buf[0], 0x05);
	ck_assert_uint_eq(buf[1], 0x80);
	ck_assert(!memcmp(buf + 8, "VMM     ", 8));
	cdb[4] = 5;
	ck_assert_uint_eq(run(&c, cdb, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 5);
	cdb[1] = 1; /* vital product data: none */
	expect_check(&c, cdb, 0x052400);
	cd_down(&c);
}
END_TEST

START_TEST(unknown_opcode_and_sense)
{
	struct cd c;
	uint8_t cdb[12] = {0xff}, tur[12] = {0};

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, cdb, NULL, 0, NULL), 0x54);
	ck_assert_uint_eq(reg(&c, 7) & 0x89, 0x01);
	ck_assert_uint_eq(sense(&c), 0x052000);
	ck_assert_uint_eq(sense(&c), 0); /* REQUEST SENSE clears it */
	cdb[0] = 0x2a; /* WRITE(10): a CD-ROM has none */
	expect_check(&c, cdb, 0x052000);
	ck_assert_uint_eq(run(&c, tur, NULL, 0, NULL), 0);
	cd_down(&c);
}
END_TEST

START_TEST(read_capacity_and_reads)
{
	struct cd c;
	uint8_t cap[12] = {0x25}, rd[12] = {0x28, 0, 0, 0, 0, 3, 0, 0, 2};
	uint8_t rd12[12] = {0xa8, 0, 0, 0, 0x01, 0xfe, 0, 0, 0, 2};
	static uint8_t buf[4 * 2048];
	unsigned n;

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, cap, buf, 8, &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(buf[2] << 8 | buf[3], CD_SECTORS - 1);
	ck_assert_uint_eq(buf[6] << 8 | buf[7], 2048);
	ck_assert_uint_eq(run(&c, rd, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 2 * 2048);
	expect_cd_sector(buf, 3);
	expect_cd_sector(buf + 2048, 4);
	/* READ(12) of the last two sectors */
	ck_assert_uint_eq(run(&c, rd12, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 2 * 2048);
	expect_cd_sector(buf + 2048, CD_SECTORS - 1);
	/* one past the end, and a start past the end */
	rd12[9] = 3;
	expect_check(&c, rd12, 0x052100);
	rd[2] = 0xff;
	expect_check(&c, rd, 0x052100);
	/* zero sectors: no data, success */
	rd[2] = 0;
	rd[8] = 0;
	ck_assert_uint_eq(run(&c, rd, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 0);
	cd_down(&c);
}
END_TEST

START_TEST(byte_count_limit)
{
	struct cd c;
	uint8_t rd[12] = {0x28, 0, 0, 0, 0, 7, 0, 0, 3};
	static uint8_t buf[3 * 2048];
	unsigned n;

	cd_up(&c, true);
	/* an odd limit is rounded down: 1001 -> 1000-byte DRQ blocks */
	packet(&c, rd, 1001, false);
	n = pio_in_all(&c, buf, sizeof(buf), 1000);
	ck_assert_uint_eq(n, 3 * 2048);
	for (unsigned i = 0; i < 3; i++)
		expect_cd_sector(buf + 2048 * i, 7 + i);
	/* 0: the largest */
	packet(&c, rd, 0, false);
	ck_assert_uint_eq(reg(&c, 4) | reg(&c, 5) << 8, 3 * 2048);
	n = pio_in_all(&c, buf, sizeof(buf), 0xfffe);
	ck_assert_uint_eq(n, 3 * 2048);
	/* a new command abandons a transfer half done */
	packet(&c, rd, 2048, false);
	for (unsigned i = 0; i < 100; i++)
		pio_in(&c.r.t, CMD, 2);
	rd[8] = 1;
	packet(&c, rd, 2048, false);
	n = pio_in_all(&c, buf, sizeof(buf), 2048);
	ck_assert_uint_eq(n, 2048);
	expect_cd_sector(buf, 7);
	/* reading the data port with nothing to transfer gives zeros */
	ck_assert_uint_eq(pio_in(&c.r.t, CMD, 2), 0);
	cd_down(&c);
}
END_TEST

START_TEST(dma_read)
{
	struct cd c;
	uint8_t rd[12] = {0x28, 0, 0, 0, 0, 9, 0, 0, 2}, inq[12] = {0x12, 0, 0, 0, 36};

	cd_up(&c, true);
	prd(&c.r, 0, BUF_GPA, 3000, false);
	prd(&c.r, 1, BUF_GPA + 3000, 1096, true);
	packet(&c, rd, 0, true);
	ck_assert_uint_eq(reg(&c, 7) & 0x08, 0x08);
	c.r.t.raised[14] = 0;
	dma_go(&c.r, PRD_GPA, true);
	ck_assert_uint_eq(c.r.t.raised[14], 1);
	ck_assert_uint_eq(pio_in(&c.r.t, BM + 2, 1) & 0x07, 0x04);
	ck_assert_uint_eq(reg(&c, 7) & 0x89, 0);
	ck_assert_uint_eq(reg(&c, 2) & 3, 3);
	expect_cd_sector(c.r.t.ram + BUF_GPA, 9);
	expect_cd_sector(c.r.t.ram + BUF_GPA + 2048, 10);
	/* a reply by DMA; the table is longer than it */
	prd(&c.r, 0, BUF_GPA, 512, true);
	packet(&c, inq, 0, true);
	dma_go(&c.r, PRD_GPA, true);
	ck_assert_uint_eq(c.r.t.ram[BUF_GPA], 0x05);
	ck_assert_uint_eq(reg(&c, 7) & 0x89, 0);
	/* a table shorter than the data: ABRT */
	prd(&c.r, 0, BUF_GPA, 1024, true);
	packet(&c, rd, 0, true);
	dma_go(&c.r, PRD_GPA, true);
	ck_assert_uint_eq(reg(&c, 7) & 0x01, 0x01);
	/* the engine the wrong way: ABRT, nothing written */
	memset(c.r.t.ram + BUF_GPA, 0x5a, 4096);
	prd(&c.r, 0, BUF_GPA, 4096, true);
	packet(&c, rd, 0, true);
	dma_go(&c.r, PRD_GPA, false);
	ck_assert_uint_eq(reg(&c, 7) & 0x01, 0x01);
	ck_assert_uint_eq(c.r.t.ram[BUF_GPA], 0x5a);
	cd_down(&c);
}
END_TEST

START_TEST(mode_sense)
{
	struct cd c;
	uint8_t ms[12] = {0x5a, 0, 0x2a, 0, 0, 0, 0, 0, 255}, lock[12] = {0x1e, 0, 0, 0, 1};
	uint8_t buf[256];
	unsigned n;

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 8 + 22);
	ck_assert_uint_eq(buf[0] << 8 | buf[1], n - 2);
	ck_assert_uint_eq(buf[8], 0x2a);
	ck_assert_uint_eq(buf[9], 20);
	ck_assert_uint_eq(buf[8 + 6] & 0x03, 0x01); /* lock supported, unlocked */
	ck_assert_uint_eq(run(&c, lock, NULL, 0, NULL), 0);
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(buf[8 + 6] & 0x03, 0x03);
	ms[2] = 0x3f; /* all pages */
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 8 + 8 + 22);
	ck_assert_uint_eq(buf[8], 0x01);
	ck_assert_uint_eq(buf[16], 0x2a);
	ms[8] = 10; /* allocation length */
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 10);
	ms[2] = 0x05; /* no such page */
	expect_check(&c, ms, 0x052400);
	ms[2] = 0xea; /* saved values */
	expect_check(&c, ms, 0x053900);
	cd_down(&c);
}
END_TEST

START_TEST(read_toc)
{
	struct cd c;
	uint8_t toc[12] = {0x43, 0, 0, 0, 0, 0, 0, 0, 255}, buf[256];
	uint32_t end = CD_SECTORS + 150;
	unsigned n;

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 20);
	ck_assert_uint_eq(buf[2], 1);
	ck_assert_uint_eq(buf[3], 1);
	ck_assert_uint_eq(buf[5], 0x14);
	ck_assert_uint_eq(buf[6], 1);
	ck_assert_uint_eq(buf[14], 0xaa);
	ck_assert_uint_eq(buf[18] << 8 | buf[19], CD_SECTORS);
	toc[1] = 2; /* MSF */
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(buf[9], 0);
	ck_assert_uint_eq(buf[10], 2); /* 00:02:00 */
	ck_assert_uint_eq(buf[17], end / 75 / 60);
	ck_assert_uint_eq(buf[18], end / 75 % 60);
	ck_assert_uint_eq(buf[19], end % 75);
	toc[6] = 0xaa; /* from the lead-out: only it */
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 12);
	toc[6] = 2;
	expect_check(&c, toc, 0x052400);
	toc[6] = 0;
	toc[2] = 1; /* session info */
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(buf[1], 10);
	toc[2] = 2; /* raw */
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 4 + 4 * 11);
	ck_assert_uint_eq(buf[4 + 3], 0xa0);
	ck_assert_uint_eq(buf[4 + 22 + 3], 0xa2);
	ck_assert_uint_eq(buf[4 + 22 + 8], end / 75 / 60);
	toc[2] = 5;
	expect_check(&c, toc, 0x052400);
	toc[2] = 0;
	toc[8] = 4; /* allocation length */
	ck_assert_uint_eq(run(&c, toc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 4);
	cd_down(&c);
}
END_TEST

START_TEST(configuration_events_mechanism_disc_info)
{
	struct cd c;
	uint8_t gc[12] = {0x46, 0, 0, 0, 0, 0, 0, 0, 255}, gesn[12] = {0x4a, 1, 0, 0, 0x10, 0, 0, 0, 8};
	uint8_t ms[12] = {0xbd, 0, 0, 0, 0, 0, 0, 0, 0, 8}, di[12] = {0x51, 0, 0, 0, 0, 0, 0, 0, 34};
	uint8_t speed[12] = {0xbb, 0, 0xff, 0xff};
	uint8_t buf[256];
	unsigned n;

	cd_up(&c, true);
	ck_assert_uint_eq(run(&c, gc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq((uint32_t)buf[2] << 8 | buf[3], n - 4);
	ck_assert_uint_eq(buf[6] << 8 | buf[7], 0x0008); /* CD-ROM */
	ck_assert_uint_eq(buf[8] << 8 | buf[9], 0x0000); /* profile list first */
	gc[1] = 2; /* just the removable medium feature */
	gc[3] = 3;
	ck_assert_uint_eq(run(&c, gc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 16);
	ck_assert_uint_eq(buf[9], 3);
	gc[1] = 3;
	expect_check(&c, gc, 0x052400);
	ck_assert_uint_eq(run(&c, gesn, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(buf[2], 0x04);
	ck_assert_uint_eq(buf[4], 0);
	ck_assert_uint_eq(buf[5], 0x02); /* medium present, tray closed */
	gesn[1] = 0; /* asynchronous: refused */
	expect_check(&c, gesn, 0x052400);
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(buf[1] & 0x10, 0);
	ck_assert_uint_eq(run(&c, di, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 34);
	ck_assert_uint_eq(buf[1], 32);
	di[1] = 1;
	expect_check(&c, di, 0x052400);
	ck_assert_uint_eq(run(&c, speed, NULL, 0, NULL), 0);
	cd_down(&c);
}
END_TEST

START_TEST(tray_lock_and_unit_attention)
{
	struct cd c;
	uint8_t tur[12] = {0}, eject[12] = {0x1b, 0, 0, 0, 2}, load[12] = {0x1b, 0, 0, 0, 3};
	uint8_t lock[12] = {0x1e, 0, 0, 0, 1}, unlock[12] = {0x1e};
	uint8_t gesn[12] = {0x4a, 1, 0, 0, 0x10, 0, 0, 0, 8}, ms[12] = {0xbd, 0, 0, 0, 0, 0, 0, 0, 0, 8};
	uint8_t buf[64];

	cd_up(&c, true);
	/* the guest locks: its own eject and the monitor's are refused */
	ck_assert_uint_eq(run(&c, lock, NULL, 0, NULL), 0);
	expect_check(&c, eject, 0x055302);
	ck_assert_int_eq(atapi_eject(c.a, false), -EBUSY);
	ck_assert_int_eq(atapi_open_tray(c.a, false), -EBUSY);
	ck_assert_uint_eq(run(&c, tur, NULL, 0, NULL), 0);
	ck_assert_uint_eq(run(&c, unlock, NULL, 0, NULL), 0);
	/* the guest opens the tray: not ready, tray open */
	ck_assert_uint_eq(run(&c, eject, NULL, 0, NULL), 0);
	expect_check(&c, tur, 0x023a02);
	ck_assert_uint_eq(run(&c, ms, buf, sizeof(buf), NULL), 0);
	ck_assert_uint_eq(buf[1] & 0x10, 0x10);
	ck_assert_uint_eq(run(&c, gesn, buf, sizeof(buf), NULL), 0);
	ck_assert_uint_eq(buf[4], 3); /* media removal */
	ck_assert_uint_eq(buf[5], 0x03);
	/* and closes it: the medium may have changed, once */
	ck_assert_uint_eq(run(&c, load, NULL, 0, NULL), 0);
	ck_assert_uint_eq(run(&c, gesn, buf, sizeof(buf), NULL), 0);
	ck_assert_uint_eq(buf[4], 2); /* new media */
	expect_check(&c, tur, 0x062800);
	ck_assert_uint_eq(run(&c, tur, NULL, 0, NULL), 0);
	/* force ejects a locked drive */
	ck_assert_uint_eq(run(&c, lock, NULL, 0, NULL), 0);
	ck_assert_int_eq(atapi_eject(c.a, true), 0);
	expect_check(&c, tur, 0x023a02);
	cd_down(&c);
}
END_TEST

START_TEST(empty_drive_and_change)
{
	struct cd c;
	uint8_t tur[12] = {0}, inq[12] = {0x12, 0, 0, 0, 36}, cap[12] = {0x25};
	uint8_t rd[12] = {0x28, 0, 0, 0, 0, 1, 0, 0, 1}, gc[12] = {0x46, 0, 0, 0, 0, 0, 0, 0, 255};
	static uint8_t buf[2048];
	struct atapi_state s;
	unsigned n;

	cd_up(&c, false);
	ck_assert_uint_eq(reg(&c, 4), 0x14); /* present, with no medium */
	expect_check(&c, tur, 0x023a01);
	expect_check(&c, cap, 0x023a01);
	expect_check(&c, rd, 0x023a01);
	ck_assert_uint_eq(run(&c, inq, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 36);
	ck_assert_uint_eq(run(&c, gc, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(buf[6] << 8 | buf[7], 0); /* no current profile */
	/* the monitor inserts a disc */
	ck_assert_int_eq(atapi_change(c.a, open_image(&c), false), 0);
	atapi_get_state(c.a, &s);
	ck_assert(!s.tray_open && s.medium);
	ck_assert_uint_eq(run(&c, inq, buf, sizeof(buf), &n), 0); /* INQUIRY passes a UA */
	expect_check(&c, rd, 0x062800);
	ck_assert_uint_eq(run(&c, rd, buf, sizeof(buf), &n), 0);
	expect_cd_sector(buf, 1);
	/* a change with a disc in the drive: again a unit attention */
	ck_assert_int_eq(atapi_change(c.a, open_image(&c), false), 0);
	expect_check(&c, tur, 0x062800);
	clear_unit_attention(&c);
	ck_assert_int_eq(atapi_eject(c.a, false), 0);
	expect_check(&c, tur, 0x023a02);
	/* the tray closed with no disc */
	atapi_close_tray(c.a);
	expect_check(&c, tur, 0x023a01);
	cd_down(&c);
}
END_TEST

START_TEST(short_packet_and_signature_on_select)
{
	struct cd c;
	uint8_t inq[12] = {0x12, 0, 0, 0, 36}, buf[64];
	unsigned n;

	cd_up(&c, true);
	/* a packet that stops after 4 bytes runs nothing */
	pio_out(&c.r.t, CMD + 6, 1, 0xa0);
	command(&c.r, 0xa0);
	pio_out(&c.r.t, CMD, 2, 0x12);
	pio_out(&c.r.t, CMD, 2, 0x2400);
	ck_assert_uint_eq(reg(&c, 7) & 0x08, 0x08);
	ck_assert_uint_eq(reg(&c, 2) & 3, 1);
	/* the next command starts clean */
	ck_assert_uint_eq(run(&c, inq, buf, sizeof(buf), &n), 0);
	ck_assert_uint_eq(n, 36);
	/* after a soft reset, the absent slave then the master: the master
	 * shows its packet signature again */
	pio_out(&c.r.t, CTL, 1, 0x04);
	pio_out(&c.r.t, CTL, 1, 0x00);
	pio_out(&c.r.t, CMD + 6, 1, 0xb0);
	pio_out(&c.r.t, CMD + 6, 1, 0xa0);
	ck_assert_uint_eq(reg(&c, 4), 0x14);
	ck_assert_uint_eq(reg(&c, 5), 0xeb);
	cd_down(&c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("atapi");
	TCase *tc = tcase_create("atapi");

	tcase_add_test(tc, signature_and_identify_packet);
	tcase_add_test(tc, inquiry_and_allocation_length);
	tcase_add_test(tc, unknown_opcode_and_sense);
	tcase_add_test(tc, read_capacity_and_reads);
	tcase_add_test(tc, byte_count_limit);
	tcase_add_test(tc, dma_read);
	tcase_add_test(tc, mode_sense);
	tcase_add_test(tc, read_toc);
	tcase_add_test(tc, configuration_events_mechanism_disc_info);
	tcase_add_test(tc, tray_lock_and_unit_attention);
	tcase_add_test(tc, empty_drive_and_change);
	tcase_add_test(tc, short_packet_and_signature_on_select);
	suite_add_tcase(s, tc);
	return test_run_suite(s);
}
