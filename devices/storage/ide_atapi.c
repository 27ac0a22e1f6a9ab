/* ide_atapi.c — packet devices on the PIIX3 IDE channels: the ATAPI
 * signature, IDENTIFY PACKET DEVICE and the PACKET command's phases
 * (the 12-byte CDB out, data in by PIO in DRQ blocks the guest's byte
 * count limit sizes, or by bus-master DMA). The commands themselves are
 * atapi.c's; this file only carries them. */
#include <stdio.h>
#include <string.h>

#include "build/config.h"
#include "devices/storage/ata_id.h"
#include "devices/storage/atapi.h"
#include "devices/storage/ide_internal.h"

#define ATAPI_SIG_LCYL 0x14
#define ATAPI_SIG_HCYL 0xeb

void ide_atapi_identify(struct ide_drive *d, unsigned index)
{
	ata_id_cdrom(d->id, index);
	d->id[93] = index % 2 ? 0x6900 : 0x6049;
}

void ide_atapi_signature(struct ide_channel *ch)
{
	ch->lcyl = ATAPI_SIG_LCYL;
	ch->hcyl = ATAPI_SIG_HCYL;
}

static struct atapi *drive_of(struct ide_channel *ch)
{
	return ch->drive[ch->dma_pending ? ch->dma_unit : ch->unit].atapi;
}

/* ------------------------------------------------------------ phases */

void ide_atapi_fail(struct ide_channel *ch, uint8_t sense_key)
{
	ch->xfer = XFER_NONE;
	ch->dma_pending = false;
	ch->atapi_left = ch->drq_left = 0;
	ch->nsector = IR_IO | IR_COD;
	ch->error = (uint8_t)(sense_key << 4 | ER_ABRT);
	ch->status = ST_DRDY | ST_DSC | ST_ERR;
	ide_raise_irq(ch);
}

void ide_atapi_complete(struct ide_channel *ch)
{
	ch->xfer = XFER_NONE;
	ch->dma_pending = false;
	ch->nsector = IR_IO | IR_COD;
	ch->error = 0;
	ch->status = ST_DRDY | ST_DSC;
	ide_raise_irq(ch);
}

bool ide_atapi_fill(struct ide_channel *ch)
{
	uint32_t n = ch->remaining < sizeof(ch->buf) / ATAPI_SECTOR ? ch->remaining
								     : sizeof(ch->buf) / ATAPI_SECTOR;
	int r;

	if (!n) /* only a reply was to go, and it has */
		return false;
	r = atapi_read(drive_of(ch), ch->lba, ch->buf, n);
	if (r) {
		ide_atapi_fail(ch, (uint8_t)r);
		return false;
	}
	ch->lba += n;
	ch->remaining -= n;
	ch->pos = 0;
	ch->end = n * ATAPI_SECTOR;
	return true;
}

/* The next DRQ block: as much as the byte count limit allows, an even
 * number of bytes unless it is the last. */
static void next_drq_block(struct ide_channel *ch)
{
	uint32_t n = ch->atapi_left;

	if (n > ch->byte_limit)
		n = ch->byte_limit;
	ch->drq_left = n;
	ch->lcyl = (uint8_t)n;
	ch->hcyl = (uint8_t)(n >> 8);
	ch->nsector = IR_IO;
	ch->xfer = XFER_PIO_IN;
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
	ide_raise_irq(ch);
}

/* The guest's byte count limit: 0 means the largest, odd is rounded down. */
static uint32_t byte_limit(struct ide_channel *ch)
{
	uint32_t n = ch->lcyl | (uint32_t)ch->hcyl << 8;

	if (n == 0 || n == 0xffff)
		n = 0xfffe;
	return n & ~1u;
}

static void run_packet(struct ide_channel *ch)
{
	struct atapi *a = ch->drive[ch->unit].atapi;
	struct atapi_xfer x;
	bool dma = ch->feature & 0x01;
	int r;

	r = atapi_command(a, ch->packet, ch->buf, &x);
	if (r) {
		ide_atapi_fail(ch, (uint8_t)r);
		return;
	}
	ch->pos = 0;
	ch->end = x.reply_len;
	ch->lba = x.read_lba;
	ch->remaining = x.read_sectors;
	ch->atapi_left = x.reply_len + x.read_sectors * ATAPI_SECTOR;
	if (!ch->atapi_left) {
		ide_atapi_complete(ch);
		return;
	}
	if (dma) {
		ch->dma_to_mem = true;
		ch->dma_pending = true;
		ch->dma_unit = ch->unit;
		ch->nsector = IR_IO;
		ch->status = ST_DRDY | ST_DSC | ST_DRQ;
		if (ch->bm_cmd & BM_CMD_START)
			ide_atapi_run_dma(ch);
		return;
	}
	next_drq_block(ch);
}

static void cmd_packet(struct ide_channel *ch)
{
	ch->identify_pio = false;
	ch->byte_limit = byte_limit(ch);
	ch->xfer = XFER_PACKET;
	ch->pos = 0;
	ch->end = ATAPI_CDB_LEN;
	ch->nsector = IR_COD; /* the device wants the command packet */
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
}

void ide_atapi_data_write(struct ide_channel *ch, const void *data, unsigned size)
{
	if (ch->xfer != XFER_PACKET)
		return; /* no data-out commands */
	if (size > ch->end - ch->pos)
		size = ch->end - ch->pos;
	memcpy(ch->packet + ch->pos, data, size);
	ch->pos += size;
	if (ch->pos >= ch->end)
		run_packet(ch);
}

void ide_atapi_data_read(struct ide_channel *ch, void *data, unsigned size)
{
	uint8_t *out = data;

	if (ch->xfer != XFER_PIO_IN)
		return;
	while (size && ch->drq_left) {
		uint32_t n = size;

		if (ch->pos == ch->end && !ide_atapi_fill(ch))
			return;
		if (n > ch->end - ch->pos)
			n = ch->end - ch->pos;
		if (n > ch->drq_left)
			n = ch->drq_left;
		memcpy(out, ch->buf + ch->pos, n);
		ch->pos += n;
		out += n;
		size -= n;
		ch->drq_left -= n;
		ch->atapi_left -= n;
	}
	if (ch->drq_left)
		return;
	if (ch->atapi_left) {
		next_drq_block(ch);
	} else if (ch->identify_pio) { /* an ATA PIO read: the data was the end */
		ch->identify_pio = false;
		ch->xfer = XFER_NONE;
		ch->status = ST_DRDY | ST_DSC;
	} else {
		ide_atapi_complete(ch);
	}
}

/* --------------------------------------------------------- commands */

static void cmd_identify_packet(struct ide_channel *ch)
{
	uint16_t *id = ide_cur(ch)->id;
	uint8_t sum = 0xa5;

	id[255] = 0xa5;
	for (unsigned i = 0; i < 255; i++)
		sum += (uint8_t)(id[i] & 0xff) + (uint8_t)(id[i] >> 8);
	id[255] = (uint16_t)(((uint8_t)-sum) << 8 | 0xa5);
	for (unsigned i = 0; i < 256; i++)
		io_data_put(&ch->buf[2 * i], 2, id[i]);
	/* one 512-byte DRQ block through the ATAPI data-in path */
	ch->pos = 0;
	ch->end = SECTOR;
	ch->remaining = 0;
	ch->atapi_left = SECTOR;
	ch->byte_limit = SECTOR;
	ch->identify_pio = true;
	next_drq_block(ch);
	ch->nsector = 1;
	ch->lcyl = ATAPI_SIG_LCYL;
	ch->hcyl = ATAPI_SIG_HCYL;
}

bool ide_atapi_exec(struct ide_channel *ch, uint8_t cmd)
{
	switch (cmd) {
	case 0xa0: cmd_packet(ch); return true;
	case 0xa1: cmd_identify_packet(ch); return true;
	case 0xec: /* IDENTIFY DEVICE: refused with the signature, so drivers
		    * learn this is a packet device */
		ch->nsector = ch->sector = 1;
		ide_atapi_signature(ch);
		ide_finish(ch, ER_ABRT);
		return true;
	case 0x08: /* DEVICE RESET: no interrupt */
		ch->nsector = ch->sector = 1;
		ide_atapi_signature(ch);
		ch->error = 0x01;
		ch->status = 0;
		return true;
	case 0xe7: case 0xea: /* FLUSH CACHE: nothing is cached */
		ide_finish(ch, 0);
		return true;
	case 0xf8: case 0x91: case 0xc6: case 0x40: case 0x41: case 0x42:
		ide_finish(ch, ER_ABRT); /* disk commands */
		return true;
	default:
		/* reads and writes (PIO, multiple, DMA): disk commands too */
		if ((cmd >= 0x20 && cmd <= 0x3f) || (cmd >= 0xc4 && cmd <= 0xcb)) {
			ide_finish(ch, ER_ABRT);
			return true;
		}
		return false;
	}
}
