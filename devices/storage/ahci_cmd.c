/* ahci_cmd.c — the AHCI command engine: a slot's command header in the
 * port's command list, its command table (the H2D register FIS, the
 * ATAPI packet, the PRDT), the ATA commands of a disk, PACKET for a
 * CD-ROM drive (atapi.c's MMC commands), and the FISes that report the
 * result (D2H register, PIO setup, set device bits).
 *
 * Every address comes from the guest: each access goes through ahci_dma,
 * which refuses what is not RAM. A bad command (a PRDT shorter than the
 * transfer, a table outside RAM, a sector past the end, an unknown
 * opcode) ends that command with an error status and the port's error
 * interrupt; the controller and the other ports go on. */
#include <errno.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/storage/ahci_internal.h"
#include "devices/storage/atapi.h"

#define FIS_H2D 0x27
#define FIS_D2H 0x34
#define FIS_SDB 0xa1
#define FIS_PIO_SETUP 0x5f
#define FIS_I 0x40 /* interrupt bit of a device-to-host FIS */
#define FIS_C 0x80 /* H2D: a command, not a device control update */
#define CTL_SRST 0x04

/* where the FISes land in the receive area */
#define RX_PIO_SETUP 0x20
#define RX_D2H 0x40
#define RX_SDB 0x58

#define CMD_HDR_SIZE 32
#define CT_ACMD 0x40
#define CT_PRDT 0x80
#define PRD_SIZE 16
#define PRD_DBC_MASK 0x3fffffu

#define SIG_DISK 0x00000101u
#define SIG_ATAPI 0xeb140101u

/* One command being run: its slot, header, FIS, and the PRDT cursor. */
struct cmd {
	struct ahci_port *p;
	unsigned slot;
	uint32_t flags; /* header DW0: CFL, ATAPI, write, PRDTL */
	uint64_t ctba;
	uint8_t fis[20];
	unsigned prd_n, prd_i; /* entries; the next one to load */
	uint64_t seg_addr;     /* what is left of the current entry */
	uint32_t seg_left;
	uint32_t moved;	   /* PRDBC: bytes transferred */
	uint32_t error_is; /* PxIS bits an error adds to TFES */
};

/* ------------------------------------------------------------ results */

/* A device-to-host register FIS: status, error, LBA and count fields. */
static void put_d2h(uint8_t *f, uint8_t type, uint8_t status, uint8_t error)
{
	memset(f, 0, 20);
	f[0] = type;
	f[1] = FIS_I;
	f[2] = status;
	f[3] = error;
}

static void write_fis(struct ahci_port *p, unsigned off, const uint8_t *f, unsigned len)
{
	if (p->cmd & CMD_FRE) /* a receive area the guest did not give: dropped */
		ahci_dma(p->ahci, p->fb + off, (void *)f, len, true);
}

void ahci_port_device_reset(struct ahci_port *p)
{
	uint8_t f[20];

	p->sig = p->cdrom ? SIG_ATAPI : SIG_DISK;
	p->tfd = 0x100 | ATA_DRDY | ATA_DSC;
	put_d2h(f, FIS_D2H, ATA_DRDY | ATA_DSC, 1);
	f[1] = 0;
	f[4] = (uint8_t)p->sig; /* the signature: count, LBA low/mid/high */
	f[5] = (uint8_t)(p->sig >> 16);
	f[6] = (uint8_t)(p->sig >> 24);
	f[12] = (uint8_t)(p->sig >> 8);
	write_fis(p, RX_D2H, f, sizeof(f));
}

/* End a non-queued command: PRDBC, the task file, the D2H FIS (and for a
 * PIO data-in command the PIO setup FIS the guest takes its status
 * from), the interrupt. */
static void finish(struct cmd *c, uint8_t status, uint8_t error, bool pio_in)
{
	struct ahci_port *p = c->p;
	uint8_t f[20];
	uint32_t bits = IS_DHRS;

	ahci_dma(p->ahci, p->clb + c->slot * CMD_HDR_SIZE + 4, &c->moved, 4, true);
	p->tfd = (uint32_t)error << 8 | status;
	if (pio_in) {
		put_d2h(f, FIS_PIO_SETUP, ATA_DRDY | ATA_DSC | ATA_DRQ, error);
		f[1] |= 0x20; /* device to host */
		f[15] = status;
		f[16] = (uint8_t)c->moved;
		f[17] = (uint8_t)(c->moved >> 8);
		write_fis(p, RX_PIO_SETUP, f, sizeof(f));
		bits |= IS_PSS;
	}
	put_d2h(f, FIS_D2H, status, error);
	memcpy(&f[4], &c->fis[4], 3); /* the LBA and device fields as given */
	memcpy(&f[7], &c->fis[7], 4);
	memcpy(&f[12], &c->fis[12], 2);
	write_fis(p, RX_D2H, f, sizeof(f));
	if (status & ATA_ERR)
		bits |= IS_TFES | c->error_is;
	ahci_port_raise(p, bits);
}

static void finish_ok(struct cmd *c, bool pio_in)
{
	finish(c, ATA_DRDY | ATA_DSC, 0, pio_in);
}

static void finish_err(struct cmd *c, uint8_t error)
{
	finish(c, ATA_DRDY | ATA_ERR, error, false);
}

/* ---------------------------------------------------------- the PRDT */

/* Load the next PRD entry: false when there is none or it is outside RAM. */
static bool next_segment(struct cmd *c)
{
	uint32_t e[4];

	if (c->prd_i == c->prd_n) {
		c->error_is = IS_OFS;
		return false;
	}
	if (ahci_dma(c->p->ahci, c->ctba + CT_PRDT + (uint64_t)c->prd_i * PRD_SIZE, e, sizeof(e),
		     false)) {
		c->error_is = IS_HBFS;
		return false;
	}
	c->prd_i++;
	c->seg_addr = ((uint64_t)e[1] << 32 | e[0]) & ~1ull;
	c->seg_left = (e[3] & PRD_DBC_MASK) + 1;
	return true;
}

/* Move len bytes between buf and the guest buffers the PRDT lists:
 * false when the table is too short or points outside RAM. */
static bool sg_copy(struct cmd *c, uint8_t *buf, uint32_t len, bool to_guest)
{
	while (len) {
		uint32_t n;

		if (!c->seg_left && !next_segment(c))
			return false;
		n = len < c->seg_left ? len : c->seg_left;
		if (ahci_dma(c->p->ahci, c->seg_addr, buf, n, to_guest)) {
			c->error_is = IS_HBFS;
			return false;
		}
		c->seg_addr += n;
		c->seg_left -= n;
		c->moved += n;
		buf += n;
		len -= n;
	}
	return true;
}

/* ------------------------------------------------------- ATA commands */

static uint64_t fis_lba(const uint8_t *f, bool ext)
{
	uint64_t lba = f[4] | (uint64_t)f[5] << 8 | (uint64_t)f[6] << 16;

	if (ext)
		return lba | (uint64_t)f[8] << 24 | (uint64_t)f[9] << 32 | (uint64_t)f[10] << 40;
	return lba | (uint64_t)(f[7] & 0x0f) << 24;
}

/* The sector count: 0 means the most the command can ask for. */
static uint32_t fis_count(const uint8_t *f, bool ext)
{
	uint32_t n = ext ? (uint32_t)f[12] | (uint32_t)f[13] << 8 : f[12];

	return n ? n : ext ? 65536 : 256;
}

/* Move count sectors from lba on between the disk and the PRDT: 0, or
 * the ATA error of the failure. */
static uint8_t disk_rw(struct cmd *c, uint64_t lba, uint32_t count, bool write)
{
	struct ahci_port *p = c->p;
	uint8_t *bounce = p->ahci->bounce;

	if (lba > block_sectors(p->disk) || count > block_sectors(p->disk) - lba)
		return ATA_IDNF | ATA_ABRT;
	if (write && block_read_only(p->disk))
		return ATA_ABRT;
	while (count) {
		uint32_t n = count < AHCI_BOUNCE_SECTORS ? count : AHCI_BOUNCE_SECTORS;

		if (write) {
			if (!sg_copy(c, bounce, n * AHCI_SECTOR, false))
				return ATA_ABRT;
			if (block_write(p->disk, lba, bounce, n))
				return ATA_ABRT;
		} else {
			if (block_read(p->disk, lba, bounce, n))
				return ATA_UNC | ATA_ABRT;
			if (!sg_copy(c, bounce, n * AHCI_SECTOR, true))
				return ATA_ABRT;
		}
		lba += n;
		count -= n;
	}
	return 0;
}

static void cmd_rw(struct cmd *c, bool ext, bool write, bool pio)
{
	uint8_t err = disk_rw(c, fis_lba(c->fis, ext), fis_count(c->fis, ext), write);

	if (err)
		finish_err(c, err);
	else
		finish_ok(c, pio && !write);
}

/* READ/WRITE FPDMA QUEUED: the count is in the features, the tag in the
 * count; the end is a set device bits FIS that clears the tag in SActive. */
static void cmd_ncq(struct cmd *c, bool write)
{
	struct ahci_port *p = c->p;
	const uint8_t *f = c->fis;
	uint32_t count = (uint32_t)f[3] | (uint32_t)f[11] << 8;
	unsigned tag = f[12] >> 3;
	uint8_t err, sdb[8] = {FIS_SDB, FIS_I};

	err = disk_rw(c, fis_lba(f, true), count ? count : 65536, write);
	ahci_dma(p->ahci, p->clb + c->slot * CMD_HDR_SIZE + 4, &c->moved, 4, true);
	if (err) { /* the tag stays active: the guest's error handling reads TFD */
		p->tfd = (uint32_t)err << 8 | ATA_DRDY | ATA_ERR;
		sdb[2] = ATA_DRDY | ATA_ERR;
		sdb[3] = err;
		write_fis(p, RX_SDB, sdb, sizeof(sdb));
		ahci_port_raise(p, IS_SDBS | IS_TFES | c->error_is);
		return;
	}
	p->sact &= ~(1u << tag);
	p->tfd = ATA_DRDY | ATA_DSC;
	sdb[2] = ATA_DRDY | ATA_DSC;
	io_data_put(&sdb[4], 4, 1u << tag);
	write_fis(p, RX_SDB, sdb, sizeof(sdb));
	ahci_port_raise(p, IS_SDBS);
}

/* IDENTIFY (PACKET) DEVICE: the 512 bytes by PIO data-in. */
static void cmd_identify(struct cmd *c)
{
	struct ahci_port *p = c->p;
	uint8_t buf[ATA_ID_WORDS * 2];

	if (p->disk) { /* SATA: Gen 1, NCQ with 32 tags */
		p->id[75] = AHCI_SLOTS - 1;
		p->id[76] = 0x0102;
	}
	ata_id_checksum(p->id);
	for (unsigned i = 0; i < ATA_ID_WORDS; i++)
		io_data_put(&buf[2 * i], 2, p->id[i]);
	if (!sg_copy(c, buf, sizeof(buf), true))
		finish_err(c, ATA_ABRT);
	else
		finish_ok(c, true);
}

static void cmd_flush(struct cmd *c)
{
	if (block_flush(c->p->disk))
		finish_err(c, ATA_ABRT);
	else
		finish_ok(c, false);
}

/* The read and write commands: 48-bit addressing, direction, PIO. */
static const struct rw_cmd {
	uint8_t op;
	bool ext, write, pio;
} rw_cmds[] = {
	{0xc8, false, false, false}, /* READ DMA */
	{0x25, true, false, false},  /* READ DMA EXT */
	{0xca, false, true, false},  /* WRITE DMA */
	{0x35, true, true, false},   /* WRITE DMA EXT */
	{0x20, false, false, true},  /* READ SECTOR(S) */
	{0xc4, false, false, true},  /* READ MULTIPLE */
	{0x24, true, false, true},   /* READ SECTOR(S) EXT */
	{0x29, true, false, true},   /* READ MULTIPLE EXT */
	{0x30, false, true, true},   /* WRITE SECTOR(S) */
	{0xc5, false, true, true},   /* WRITE MULTIPLE */
	{0x34, true, true, true},    /* WRITE SECTOR(S) EXT */
	{0x39, true, true, true},    /* WRITE MULTIPLE EXT */
};

static void cmd_verify(struct cmd *c, bool ext)
{
	if (fis_lba(c->fis, ext) + fis_count(c->fis, ext) > block_sectors(c->p->disk))
		finish_err(c, ATA_IDNF | ATA_ABRT);
	else
		finish_ok(c, false);
}

static void exec_disk(struct cmd *c, uint8_t op)
{
	for (unsigned i = 0; i < sizeof(rw_cmds) / sizeof(rw_cmds[0]); i++)
		if (rw_cmds[i].op == op) {
			cmd_rw(c, rw_cmds[i].ext, rw_cmds[i].write, rw_cmds[i].pio);
			return;
		}
	switch (op) {
	case 0xec: cmd_identify(c); break;
	case 0x60: cmd_ncq(c, false); break; /* READ FPDMA QUEUED */
	case 0x61: cmd_ncq(c, true); break;  /* WRITE FPDMA QUEUED */
	case 0xe7: case 0xea: cmd_flush(c); break; /* FLUSH CACHE (EXT) */
	case 0x40: cmd_verify(c, false); break; /* READ VERIFY SECTOR(S) */
	case 0x42: cmd_verify(c, true); break;
	/* SET FEATURES, INITIALIZE DEVICE PARAMETERS, SET MULTIPLE MODE,
	 * power management: nothing to change */
	case 0xef: case 0x91: case 0xc6: case 0xe0: case 0xe1: case 0xe2: case 0xe3:
		finish_ok(c, false);
		break;
	case 0xe5: /* CHECK POWER MODE: active */
		c->fis[12] = 0xff;
		finish_ok(c, false);
		break;
	default: finish_err(c, ATA_ABRT); break;
	}
}

/* ------------------------------------------------------------ ATAPI */

/* PACKET: the CDB from the table's ATAPI command area; the reply and any
 * sectors through the PRDT. A failed packet reports its sense key. */
static void cmd_packet(struct cmd *c)
{
	struct ahci_port *p = c->p;
	uint8_t cdb[16], reply[ATAPI_REPLY_MAX];
	struct atapi_xfer x;
	int sk;

	if (ahci_dma(p->ahci, c->ctba + CT_ACMD, cdb, sizeof(cdb), false)) {
		c->error_is = IS_HBFS;
		finish_err(c, ATA_ABRT);
		return;
	}
	sk = atapi_command(p->cdrom, cdb, reply, &x);
	if (sk) {
		finish_err(c, (uint8_t)(sk << 4 | ATA_ABRT));
		return;
	}
	if (!sg_copy(c, reply, x.reply_len, true)) {
		finish_err(c, ATA_ABRT);
		return;
	}
	while (x.read_sectors) {
		uint32_t n = AHCI_BOUNCE_SECTORS * AHCI_SECTOR / ATAPI_SECTOR;

		n = x.read_sectors < n ? x.read_sectors : n;
		sk = atapi_read(p->cdrom, x.read_lba, p->ahci->bounce, n);
		if (sk) {
			finish_err(c, (uint8_t)(sk << 4 | ATA_ABRT));
			return;
		}
		if (!sg_copy(c, p->ahci->bounce, n * ATAPI_SECTOR, true)) {
			finish_err(c, ATA_ABRT);
			return;
		}
		x.read_lba += n;
		x.read_sectors -= n;
	}
	/* features bit 0: DMA; without it the data came by PIO */
	finish_ok(c, !(c->fis[3] & 1) && c->moved);
}

static void exec_cdrom(struct cmd *c, uint8_t op)
{
	switch (op) {
	case 0xa0:
		cmd_packet(c);
		break;
	case 0xa1:
		cmd_identify(c);
		break;
	case 0xef:
	case 0xe0:
	case 0xe1:
	case 0xe5:
		finish_ok(c, false);
		break;
	case 0xec: /* IDENTIFY DEVICE: aborted with the packet signature */
		c->fis[4] = 1;
		c->fis[5] = 0x14;
		c->fis[6] = 0xeb;
		finish_err(c, ATA_ABRT);
		break;
	default:
		finish_err(c, ATA_ABRT);
		break;
	}
}

/* ------------------------------------------------------ the command list */

/* A FIS without the C bit updates the device control register: the end
 * of a software reset shows the device's signature again. */
static void device_control(struct cmd *c)
{
	if (!(c->fis[15] & CTL_SRST)) {
		ahci_port_device_reset(c->p);
		ahci_port_raise(c->p, IS_DHRS);
	}
}

static void run_slot(struct ahci_port *p, unsigned slot)
{
	struct cmd c = {.p = p, .slot = slot};
	uint32_t hdr[4];

	if (ahci_dma(p->ahci, p->clb + slot * CMD_HDR_SIZE, hdr, sizeof(hdr), false) ||
	    ahci_dma(p->ahci, ((uint64_t)hdr[3] << 32 | hdr[2]) & ~0x7full, c.fis, sizeof(c.fis),
		     false)) {
		p->tfd = (uint32_t)ATA_ABRT << 8 | ATA_DRDY | ATA_ERR;
		ahci_port_raise(p, IS_HBFS | IS_TFES);
		return;
	}
	c.flags = hdr[0];
	c.ctba = ((uint64_t)hdr[3] << 32 | hdr[2]) & ~0x7full;
	c.prd_n = hdr[0] >> 16;
	if (c.fis[0] != FIS_H2D) {
		finish_err(&c, ATA_ABRT);
	} else if (!(c.fis[1] & FIS_C)) {
		device_control(&c);
	} else if (p->cdrom) {
		exec_cdrom(&c, c.fis[2]);
	} else if (p->disk) {
		exec_disk(&c, c.fis[2]);
	}
}

void ahci_port_run(struct ahci_port *p)
{
	if (!(p->cmd & CMD_ST))
		return;
	while (p->ci) {
		unsigned slot = (unsigned)__builtin_ctz(p->ci);

		run_slot(p, slot);
		p->ci &= ~(1u << slot);
	}
}
