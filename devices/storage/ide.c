/* ide.c — PIIX3 IDE (8086:7010 at 00:01.1) with two ATA channels in
 * compatibility mode and bus-master DMA.
 *
 * Commands run synchronously on the vCPU thread that writes the command
 * register: the drive is never "busy" between guest accesses except while
 * SRST is held. The task-file registers are shared by both drives of a
 * channel, as on real hardware; a selected drive that is absent reads as
 * zeros (what QEMU shows, and what SeaBIOS's presence probe expects).
 * Every guest-supplied value is checked: LBA ranges against the disk
 * size, PRD entries against guest RAM, PRD tables against their 64 KiB
 * page. A bad request fails that command with an ATA error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "build/config.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/storage/ata_id.h"
#include "devices/storage/ide.h"
#include "devices/storage/ide_internal.h"

struct ide_drive *ide_cur(struct ide_channel *ch)
{
	return &ch->drive[ch->unit];
}

/* ------------------------------------------------------------ IDENTIFY */

static void build_identify(struct ide_drive *d, unsigned index, bool has_slave)
{
	ata_id_disk(d->id, d->sectors, index);
	/* hardware reset result: device 0 tells whether device 1 exists (SeaBIOS
	 * skips probing an absent slave on it); 80-wire cable */
	if (index % 2 == 0)
		d->id[93] = has_slave ? 0x6009 : 0x6049;
	else
		d->id[93] = 0x6900;
}

/* Words that follow settings: multiple count, selected transfer modes. */
static void refresh_identify(struct ide_drive *d)
{
	d->id[59] = (uint16_t)(d->mult ? 0x100 | d->mult : 0);
	ata_id_checksum(d->id);
}

/* ---------------------------------------------------------- interrupts */

void ide_update_line(struct ide_channel *ch)
{
	struct dev_host *h = ch->ide->host;
	bool want = ch->intrq && !(ch->control & CTL_NIEN);

	if (want != ch->line) {
		ch->line = want;
		if (h->irq.set_level)
			h->irq.set_level(h->irq.opaque, ch->irq, want);
	}
}

void ide_raise_irq(struct ide_channel *ch)
{
	ch->intrq = true;
	ide_update_line(ch);
}

void ide_finish(struct ide_channel *ch, uint8_t error)
{
	ch->xfer = XFER_NONE;
	ch->dma_pending = false;
	ch->error = error;
	ch->status = ST_DRDY | ST_DSC | (error ? ST_ERR : 0);
	ide_raise_irq(ch);
}

/* ------------------------------------------------------------ addresses */

static uint64_t tf_lba(struct ide_channel *ch, bool ext)
{
	struct ide_drive *d = ide_cur(ch);
	uint64_t cyl;

	if (ext)
		return ch->sector | (uint64_t)ch->lcyl << 8 | (uint64_t)ch->hcyl << 16 |
		       (uint64_t)ch->hob_sector << 24 | (uint64_t)ch->hob_lcyl << 32 |
		       (uint64_t)ch->hob_hcyl << 40;
	if (ch->select & DH_LBA)
		return ch->sector | (uint64_t)ch->lcyl << 8 | (uint64_t)ch->hcyl << 16 |
		       (uint64_t)(ch->select & 0x0f) << 24;
	/* CHS through the current translation; sector numbers start at 1 */
	cyl = ch->lcyl | (uint64_t)ch->hcyl << 8;
	if (ch->sector == 0 || ch->sector > d->spt || (ch->select & 0x0f) >= d->heads)
		return UINT64_MAX;
	return (cyl * d->heads + (ch->select & 0x0f)) * d->spt + ch->sector - 1;
}

static uint32_t tf_count(struct ide_channel *ch, bool ext)
{
	uint32_t n = ext ? (uint32_t)ch->hob_nsector << 8 | ch->nsector : ch->nsector;

	return n ? n : (ext ? 65536 : 256);
}

/* Start sector range checked against the disk: true or an IDNF error. */
static bool range_ok(struct ide_channel *ch, uint64_t lba, uint32_t count)
{
	uint64_t n = ide_cur(ch)->sectors;

	if (lba > n || count > n - lba) {
		ide_finish(ch, ER_IDNF);
		return false;
	}
	return true;
}

/* -------------------------------------------------------------- PIO */

static unsigned block_sectors_now(struct ide_channel *ch)
{
	return ch->remaining < ch->block ? ch->remaining : ch->block;
}

/* Load the next DRQ block of a read and tell the host it is there. */
static void pio_in_next(struct ide_channel *ch)
{
	unsigned n = block_sectors_now(ch);

	if (block_read(ide_cur(ch)->blk, ch->lba, ch->buf, n)) {
		ide_finish(ch, ER_UNC | ER_ABRT);
		return;
	}
	ch->xfer = XFER_PIO_IN;
	ch->pos = 0;
	ch->end = n * SECTOR;
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
	ide_raise_irq(ch);
}

static void pio_out_next(struct ide_channel *ch, bool first)
{
	ch->xfer = XFER_PIO_OUT;
	ch->pos = 0;
	ch->end = block_sectors_now(ch) * SECTOR;
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
	if (!first) /* the first block of a write is requested without an interrupt */
		ide_raise_irq(ch);
}

/* Check a read/write command's address, count and the disk's write
 * permission; load ch->lba and ch->remaining, or fail the command. */
bool ide_prepare_rw(struct ide_channel *ch, bool ext, bool write)
{
	uint64_t lba = tf_lba(ch, ext);
	uint32_t count = tf_count(ch, ext);

	if (lba == UINT64_MAX) {
		ide_finish(ch, ER_IDNF);
		return false;
	}
	if (write && block_read_only(ide_cur(ch)->blk)) {
		ide_finish(ch, ER_ABRT);
		return false;
	}
	if (!range_ok(ch, lba, count))
		return false;
	ch->lba = lba;
	ch->remaining = count;
	return true;
}

static void start_pio(struct ide_channel *ch, bool ext, bool write, unsigned block)
{
	if (!ide_prepare_rw(ch, ext, write))
		return;
	ch->block = block;
	if (write)
		pio_out_next(ch, true);
	else
		pio_in_next(ch);
}

static void pio_block_done(struct ide_channel *ch)
{
	unsigned n = block_sectors_now(ch);

	if (ch->xfer == XFER_PIO_OUT && block_write(ide_cur(ch)->blk, ch->lba, ch->buf, n)) {
		ide_finish(ch, ER_ABRT);
		return;
	}
	ch->lba += n;
	ch->remaining -= n;
	if (ch->remaining == 0) {
		bool was_write = ch->xfer == XFER_PIO_OUT;

		ch->xfer = XFER_NONE;
		ch->status = ST_DRDY | ST_DSC;
		if (was_write) /* a read's last interrupt came with its data */
			ide_raise_irq(ch);
		return;
	}
	if (ch->xfer == XFER_PIO_OUT)
		pio_out_next(ch, false);
	else
		pio_in_next(ch);
}

/* The last block of a read (or IDENTIFY) was taken: no interrupt. */
static void finish_quietly(struct ide_channel *ch)
{
	ch->xfer = XFER_NONE;
	ch->status = ST_DRDY | ST_DSC;
}

static void data_read(struct ide_channel *ch, void *data, unsigned size)
{
	memset(data, 0, size);
	if (ide_cur(ch)->atapi) {
		ide_atapi_data_read(ch, data, size);
		return;
	}
	if (ch->xfer != XFER_PIO_IN)
		return;
	if (size > ch->end - ch->pos)
		size = ch->end - ch->pos;
	memcpy(data, ch->buf + ch->pos, size);
	ch->pos += size;
	if (ch->pos >= ch->end) {
		if (ch->remaining)
			pio_block_done(ch);
		else
			finish_quietly(ch);
	}
}

static void data_write(struct ide_channel *ch, const void *data, unsigned size)
{
	if (ide_cur(ch)->atapi) {
		ide_atapi_data_write(ch, data, size);
		return;
	}
	if (ch->xfer != XFER_PIO_OUT)
		return;
	if (size > ch->end - ch->pos)
		size = ch->end - ch->pos;
	memcpy(ch->buf + ch->pos, data, size);
	ch->pos += size;
	if (ch->pos >= ch->end)
		pio_block_done(ch);
}

/* ------------------------------------------------------------- commands */

static void cmd_identify(struct ide_channel *ch)
{
	struct ide_drive *d = ide_cur(ch);

	refresh_identify(d);
	for (unsigned i = 0; i < 256; i++)
		io_data_put(&ch->buf[2 * i], 2, d->id[i]);
	ch->xfer = XFER_PIO_IN;
	ch->pos = 0;
	ch->end = SECTOR;
	ch->remaining = 0;
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
	ide_raise_irq(ch);
}

static void cmd_set_features(struct ide_channel *ch)
{
	struct ide_drive *d = ide_cur(ch);
	uint8_t mode = ch->nsector;

	switch (ch->feature) {
	case 0x02: case 0x82: /* write cache on/off: we always flush on FLUSH */
	case 0xaa: case 0x55: /* read look-ahead */
	case 0x66: case 0xcc: /* keep/revert settings on reset */
		ide_finish(ch, 0);
		return;
	case 0x03: /* transfer mode */
		if (mode >> 3 == 0 || mode >> 3 == 1) { /* PIO default / PIO n */
			ide_finish(ch, 0);
		} else if (mode >> 3 == 4 && (mode & 7) <= 2) { /* multiword DMA */
			d->id[63] = (uint16_t)(0x0007 | 0x100 << (mode & 7));
			d->id[88] = 0x003f;
			ide_finish(ch, 0);
		} else if (mode >> 3 == 8 && (mode & 7) <= 5) { /* UDMA */
			d->id[63] = 0x0007;
			d->id[88] = (uint16_t)(0x003f | 0x100 << (mode & 7));
			ide_finish(ch, 0);
		} else {
			ide_finish(ch, ER_ABRT);
		}
		return;
	default:
		ide_finish(ch, ER_ABRT);
	}
}

static void cmd_set_multiple(struct ide_channel *ch)
{
	unsigned n = ch->nsector;

	if (n > MAX_MULT || (n & (n - 1))) {
		ide_finish(ch, ER_ABRT);
		return;
	}
	ide_cur(ch)->mult = n;
	ide_finish(ch, 0);
}

static void cmd_read_native_max(struct ide_channel *ch, bool ext)
{
	uint64_t max = ide_cur(ch)->sectors - 1;

	ch->sector = (uint8_t)max;
	ch->lcyl = (uint8_t)(max >> 8);
	ch->hcyl = (uint8_t)(max >> 16);
	if (ext) {
		ch->hob_sector = (uint8_t)(max >> 24);
		ch->hob_lcyl = (uint8_t)(max >> 32);
		ch->hob_hcyl = (uint8_t)(max >> 40);
	} else {
		ch->select = (uint8_t)((ch->select & 0xf0) | ((max >> 24) & 0x0f));
	}
	ide_finish(ch, 0);
}

static void cmd_verify(struct ide_channel *ch, bool ext)
{
	uint64_t lba = tf_lba(ch, ext);

	if (lba == UINT64_MAX) {
		ide_finish(ch, ER_IDNF);
		return;
	}
	if (range_ok(ch, lba, tf_count(ch, ext)))
		ide_finish(ch, 0);
}

static void set_signature(struct ide_channel *ch)
{
	ch->nsector = ch->sector = 1;
	ch->lcyl = ch->hcyl = 0;
	if (ide_cur(ch)->atapi)
		ide_atapi_signature(ch);
}

static void multiple(struct ide_channel *ch, bool ext, bool write)
{
	if (!ide_cur(ch)->mult) {
		ide_finish(ch, ER_ABRT); /* SET MULTIPLE has not enabled it */
		return;
	}
	start_pio(ch, ext, write, ide_cur(ch)->mult);
}

static void exec_command(struct ide_channel *ch, uint8_t cmd)
{
	struct ide_drive *d = ide_cur(ch);

	/* a new command abandons whatever transfer was in progress */
	ch->xfer = XFER_NONE;
	ch->dma_pending = false;
	ch->sig_pending = false;
	if (d->atapi && ide_atapi_exec(ch, cmd))
		return;
	switch (cmd) {
	case 0x20: case 0x21: start_pio(ch, false, false, 1); break;
	case 0x24: start_pio(ch, true, false, 1); break;
	case 0x30: case 0x31: start_pio(ch, false, true, 1); break;
	case 0x34: start_pio(ch, true, true, 1); break;
	case 0xc4: multiple(ch, false, false); break;
	case 0x29: multiple(ch, true, false); break;
	case 0xc5: multiple(ch, false, true); break;
	case 0x39: multiple(ch, true, true); break;
	case 0xc8: case 0xc9: ide_start_dma(ch, false, false); break;
	case 0x25: ide_start_dma(ch, true, false); break;
	case 0xca: case 0xcb: ide_start_dma(ch, false, true); break;
	case 0x35: ide_start_dma(ch, true, true); break;
	case 0xc6: cmd_set_multiple(ch); break;
	case 0xec: cmd_identify(ch); break;
	case 0xe7: case 0xea: ide_finish(ch, block_flush(d->blk) ? ER_ABRT : 0); break;
	case 0xef: cmd_set_features(ch); break;
	case 0x91: /* INITIALIZE DEVICE PARAMETERS: the CHS translation */
		if (ch->nsector == 0) {
			ide_finish(ch, ER_ABRT);
			break;
		}
		d->heads = (ch->select & 0x0f) + 1u;
		d->spt = ch->nsector;
		ide_finish(ch, 0);
		break;
	case 0x40: case 0x41: cmd_verify(ch, false); break;
	case 0x42: cmd_verify(ch, true); break;
	case 0xf8: cmd_read_native_max(ch, false); break;
	case 0x27: cmd_read_native_max(ch, true); break;
	case 0x90: /* EXECUTE DEVICE DIAGNOSTIC */
		set_signature(ch);
		ch->status = ST_DRDY | ST_DSC;
		ch->error = 0x01;
		ide_raise_irq(ch);
		break;
	case 0xe5: /* CHECK POWER MODE: active */
		ch->nsector = 0xff;
		ide_finish(ch, 0);
		break;
	case 0x70: case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xe6:
	case 0x94: case 0x95: case 0x96: case 0x97:
		ide_finish(ch, 0); /* seek, idle, standby, sleep: nothing to do */
		break;
	default:
		if (cmd >= 0x10 && cmd <= 0x1f) { /* RECALIBRATE */
			ide_finish(ch, 0);
			break;
		}
		/* IDENTIFY PACKET DEVICE, PACKET and the rest: not a packet device */
		ide_finish(ch, ER_ABRT);
	}
}

/* ------------------------------------------------------------ registers */

static void soft_reset(struct ide_channel *ch)
{
	ch->xfer = XFER_NONE;
	ch->dma_pending = false;
	ch->intrq = false;
	ch->status = ST_BSY;
}

static void soft_reset_done(struct ide_channel *ch)
{
	ch->unit = 0;
	ch->select = 0xa0;
	set_signature(ch);
	ch->feature = ch->hob_feature = ch->hob_nsector = 0;
	ch->hob_sector = ch->hob_lcyl = ch->hob_hcyl = 0;
	ch->error = 0x01; /* diagnostic code: no error */
	ch->status = ST_DRDY | ST_DSC;
	ch->sig_pending = true;
	for (unsigned i = 0; i < 2; i++) {
		ch->drive[i].heads = 16;
		ch->drive[i].spt = 63;
	}
}

static void write_control(struct ide_channel *ch, uint8_t v)
{
	bool was_reset = ch->control & CTL_SRST;

	ch->control = v;
	if (v & CTL_SRST && !was_reset)
		soft_reset(ch);
	else if (!(v & CTL_SRST) && was_reset)
		soft_reset_done(ch);
	ide_update_line(ch);
}

static bool channel_empty(const struct ide_channel *ch)
{
	return !ch->drive[0].present && !ch->drive[1].present;
}

static uint8_t read_tf(struct ide_channel *ch, unsigned reg)
{
	bool hob = ch->control & CTL_HOB;

	if (!ide_cur(ch)->present && reg != 6)
		return 0;
	if (channel_empty(ch))
		return 0;
	switch (reg) {
	case 1: return ch->error;
	case 2: return hob ? ch->hob_nsector : ch->nsector;
	case 3: return hob ? ch->hob_sector : ch->sector;
	case 4: return hob ? ch->hob_lcyl : ch->lcyl;
	case 5: return hob ? ch->hob_hcyl : ch->hcyl;
	case 6: return ide_cur(ch)->present ? ch->select : 0;
	default:
		ch->intrq = false; /* reading status acknowledges the interrupt */
		ide_update_line(ch);
		return ch->status;
	}
}

static void write_tf(struct ide_channel *ch, unsigned reg, uint8_t v)
{
	ch->control &= ~CTL_HOB; /* a task-file write clears HOB */
	if (reg != 6 && reg != 7)
		ch->sig_pending = false;
	switch (reg) {
	case 1: ch->hob_feature = ch->feature; ch->feature = v; break;
	case 2: ch->hob_nsector = ch->nsector; ch->nsector = v; break;
	case 3: ch->hob_sector = ch->sector; ch->sector = v; break;
	case 4: ch->hob_lcyl = ch->lcyl; ch->lcyl = v; break;
	case 5: ch->hob_hcyl = ch->hcyl; ch->hcyl = v; break;
	case 6:
		ch->select = v | 0xa0;
		ch->unit = (v & DH_DEV) ? 1 : 0;
		/* each drive keeps its own reset signature: show the selected one's */
		if (ch->sig_pending)
			set_signature(ch);
		break;
	default:
		if (!ide_cur(ch)->present || ch->control & CTL_SRST)
			break; /* no such drive, or held in reset */
		exec_command(ch, v);
	}
}

static void cmd_io_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ide_channel *ch = opaque;

	pthread_mutex_lock(&ch->lock);
	if (off == 0 && ide_cur(ch)->present)
		data_read(ch, data, size);
	else if (off == 0)
		memset(data, 0, size);
	else
		io_data_put(data, size, read_tf(ch, (unsigned)off));
	pthread_mutex_unlock(&ch->lock);
}

static void cmd_io_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ide_channel *ch = opaque;

	pthread_mutex_lock(&ch->lock);
	if (off == 0)
		data_write(ch, data, size);
	else
		write_tf(ch, (unsigned)off, (uint8_t)io_data_get(data, 1));
	pthread_mutex_unlock(&ch->lock);
}

static void ctl_io_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ide_channel *ch = opaque;
	uint8_t v;

	pthread_mutex_lock(&ch->lock);
	v = ide_cur(ch)->present && !channel_empty(ch) ? ch->status : 0; /* alternate status */
	pthread_mutex_unlock(&ch->lock);
	io_data_put(data, size, v);
}

static void ctl_io_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ide_channel *ch = opaque;

	pthread_mutex_lock(&ch->lock);
	write_control(ch, (uint8_t)io_data_get(data, 1));
	pthread_mutex_unlock(&ch->lock);
}

static const struct io_ops cmd_ops = {cmd_io_read, cmd_io_write};
static const struct io_ops ctl_ops = {ctl_io_read, ctl_io_write};


/* ---------------------------------------------------------------- setup */

static void channel_reset(struct ide_channel *ch)
{
	pthread_mutex_lock(&ch->lock);
	ch->control = 0;
	soft_reset(ch);
	soft_reset_done(ch);
	ch->bm_cmd = 0;
	ch->bm_status = (ch->drive[0].present ? 0x20 : 0) | (ch->drive[1].present ? 0x40 : 0);
	ch->prd_addr = 0;
	for (unsigned i = 0; i < 2; i++)
		ch->drive[i].mult = MAX_MULT;
	ide_update_line(ch);
	pthread_mutex_unlock(&ch->lock);
}

static void ide_reset(void *opaque)
{
	struct ide *ide = opaque;

	channel_reset(&ide->ch[0]);
	channel_reset(&ide->ch[1]);
}

static int channel_init(struct ide *ide, unsigned i, struct block_dev *const disks[IDE_MAX_DRIVES],
			struct atapi *const cdroms[IDE_MAX_DRIVES])
{
	static const uint16_t cmd_base[2] = {0x1f0, 0x170}, ctl_base[2] = {0x3f6, 0x376};
	static const unsigned irq[2] = {14, 15};
	struct ide_channel *ch = &ide->ch[i];
	static const char *const names[2] = {"ide0", "ide1"};

	ch->ide = ide;
	ch->index = i;
	ch->irq = irq[i];
	ch->cmd_base = cmd_base[i];
	ch->ctl_base = ctl_base[i];
	pthread_mutex_init(&ch->lock, NULL);
	for (unsigned u = 0; u < 2; u++) {
		struct ide_drive *d = &ch->drive[u];

		unsigned index = 2 * i + u;
		bool has_slave = (disks && disks[2 * i + 1]) || (cdroms && cdroms[2 * i + 1]);

		d->atapi = cdroms ? cdroms[index] : NULL;
		d->blk = disks && !d->atapi ? disks[index] : NULL;
		d->present = d->blk || d->atapi;
		if (d->atapi)
			ide_atapi_identify(d, index);
		if (!d->blk)
			continue;
		d->sectors = block_sectors(d->blk);
		build_identify(d, index, has_slave);
	}
	channel_reset(ch);
	if (iobus_register(ide->host->pio, ch->cmd_base, 8, &cmd_ops, ch, names[i]))
		return -EEXIST;
	if (iobus_register(ide->host->pio, ch->ctl_base, 1, &ctl_ops, ch, names[i])) {
		iobus_unregister(ide->host->pio, ch->cmd_base);
		return -EEXIST;
	}
	return 0;
}

struct ide *ide_new(struct dev_host *host, struct pci_bus *bus,
		    struct block_dev *disks[IDE_MAX_DRIVES])
{
	return ide_new_with_cdroms(host, bus, disks, NULL);
}

struct ide *ide_new_with_cdroms(struct dev_host *host, struct pci_bus *bus,
				struct block_dev *const disks[IDE_MAX_DRIVES],
				struct atapi *const cdroms[IDE_MAX_DRIVES])
{
	struct ide *ide = calloc(1, sizeof(*ide));

	if (!ide)
		return NULL;
	ide->host = host;
	pci_dev_init(&ide->pci, "piix3-ide", 0x8086, 0x7010, 0x010180, 0x00);
	ide->pci.opaque = ide;
	memset(&ide->pci.wmask[0x40], 0xff, 5); /* IDETIM, SIDETIM */
	/* both channels' decode enabled (IDETIM bit 15), as QEMU resets it:
	 * Linux's ata_piix skips a channel without it, and a -kernel boot
	 * has no firmware to set it */
	ide->pci.cfg[0x41] = 0x80;
	ide->pci.cfg[0x43] = 0x80;
	pci_dev_set_bar(&ide->pci, 4, 16, true, &ide_bm_ops, ide);
	if (channel_init(ide, 0, disks, cdroms)) {
		free(ide);
		return NULL;
	}
	if (channel_init(ide, 1, disks, cdroms)) {
		iobus_unregister(host->pio, ide->ch[0].cmd_base);
		iobus_unregister(host->pio, ide->ch[0].ctl_base);
		free(ide);
		return NULL;
	}
	if (bus && pci_bus_add(bus, &ide->pci, 1 << 3 | 1)) {
		ide_free(ide);
		return NULL;
	}
	dev_on_reset(host, ide_reset, ide);
	return ide;
}

void ide_free(struct ide *ide)
{
	if (!ide)
		return;
	pci_bus_remove(&ide->pci);
	for (unsigned i = 0; i < 2; i++) {
		iobus_unregister(ide->host->pio, ide->ch[i].cmd_base);
		iobus_unregister(ide->host->pio, ide->ch[i].ctl_base);
		pthread_mutex_destroy(&ide->ch[i].lock);
	}
	free(ide);
}
