/* ide_dma.c — the PIIX3 IDE's bus-master DMA engine: the PRD table walk
 * and the per-channel bus-master registers (BAR 4).
 *
 * Every PRD entry is checked against guest RAM (through the IOMMU when
 * there is one); a table may not run past its 64 KiB page; a transfer the
 * table cannot hold, or a direction that contradicts the command, aborts
 * the command with ATA ABRT instead of moving any byte it should not. */
#include <errno.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/storage/ide.h"
#include "devices/storage/ide_internal.h"

static void dma_done(struct ide_channel *ch, uint8_t error, bool prd_left)
{
	ch->bm_status |= BM_ST_INT;
	if (error)
		ch->bm_status |= BM_ST_ERR;
	/* a PRD table longer than the transfer leaves the engine active */
	if (!prd_left || error)
		ch->bm_status &= ~BM_ST_ACTIVE;
	ide_finish(ch, error);
}

/* Move bytes between the disk and one PRD segment at hva. Whole sectors
 * go directly; a sector split across segments goes through bounce, whose
 * fill level *bpos carries over to the next segment. */
static int dma_segment(struct ide_channel *ch, uint8_t *hva, uint32_t len, uint8_t *bounce,
		       unsigned *bpos, bool *leftover)
{
	struct block_dev *blk = ch->drive[ch->dma_unit].blk;

	while (len && ch->remaining) {
		if (*bpos == 0 && len >= SECTOR) {
			uint32_t n = len / SECTOR;
			int r;

			if (n > ch->remaining)
				n = ch->remaining;
			r = ch->dma_to_mem ? block_read(blk, ch->lba, hva, n)
					   : block_write(blk, ch->lba, hva, n);
			if (r)
				return r;
			ch->lba += n;
			ch->remaining -= n;
			hva += n * SECTOR;
			len -= n * SECTOR;
			continue;
		}
		/* partial sector */
		if (*bpos == 0 && ch->dma_to_mem && block_read(blk, ch->lba, bounce, 1))
			return -EIO;
		uint32_t chunk = SECTOR - *bpos < len ? SECTOR - *bpos : len;

		if (ch->dma_to_mem)
			memcpy(hva, bounce + *bpos, chunk);
		else
			memcpy(bounce + *bpos, hva, chunk);
		*bpos += chunk;
		hva += chunk;
		len -= chunk;
		if (*bpos == SECTOR) {
			if (!ch->dma_to_mem && block_write(blk, ch->lba, bounce, 1))
				return -EIO;
			*bpos = 0;
			ch->lba++;
			ch->remaining--;
		}
	}
	*leftover = len != 0;
	return 0;
}

/* Bus-master memory: through the bus (and its IOMMU); off a bus (unit
 * tests), guest RAM directly. */
static void *bm_ptr(struct ide_channel *ch, uint64_t addr, uint64_t *len, bool write)
{
	if (!ch->ide->pci.bus)
		return guest_mem_ptr(ch->ide->host->mem, addr, *len);
	return pci_dma_ptr(&ch->ide->pci, addr, len, write);
}

/* One PRD entry's bytes, through the IOMMU when there is one (its pages
 * need not be contiguous in guest RAM). */
static int dma_region(struct ide_channel *ch, uint64_t addr, uint32_t len, uint8_t *bounce,
		      unsigned *bpos, bool *leftover)
{
	while (len) {
		uint64_t n = len;
		uint8_t *hva = bm_ptr(ch, addr, &n, ch->dma_to_mem);
		int r;

		if (!hva)
			return -EFAULT;
		r = dma_segment(ch, hva, (uint32_t)n, bounce, bpos, leftover);
		if (r)
			return r;
		addr += n;
		len -= (uint32_t)n;
	}
	return 0;
}

static void run_dma(struct ide_channel *ch)
{
	uint32_t prd = ch->prd_addr;
	uint8_t bounce[SECTOR];
	unsigned bpos = 0;
	bool eot = false, leftover = false;

	ch->dma_pending = false;
	ch->bm_status |= BM_ST_ACTIVE;
	if (!!(ch->bm_cmd & BM_CMD_TO_MEM) != ch->dma_to_mem) {
		dma_done(ch, ER_ABRT, false); /* engine direction contradicts the command */
		return;
	}
	while (ch->remaining && !eot) {
		uint64_t n = 8;
		const uint8_t *e = bm_ptr(ch, prd, &n, false);
		uint32_t addr, len;
		int r;

		if (!e || n < 8) {
			dma_done(ch, ER_ABRT, false);
			return;
		}
		addr = (uint32_t)io_data_get(e, 4);
		len = (uint32_t)io_data_get(e + 4, 4);
		eot = len & PRD_EOT;
		len &= 0xfffe;
		if (len == 0)
			len = 0x10000; /* a byte count of 0 means 64 KiB */
		r = dma_region(ch, addr, len, bounce, &bpos, &leftover);
		if (r) { /* outside RAM or refused: abort; a disk error: also UNC */
			dma_done(ch, r != -EFAULT && ch->dma_to_mem ? ER_UNC | ER_ABRT : ER_ABRT,
				 false);
			return;
		}
		prd += 8;
		/* the table may not cross its 64 KiB page: no end bit in it */
		if (!eot && ch->remaining && (prd & 0xffff) == 0) {
			dma_done(ch, ER_ABRT, false);
			return;
		}
	}
	if (ch->remaining) { /* the table ended before the transfer */
		dma_done(ch, ER_ABRT, false);
		return;
	}
	dma_done(ch, 0, !eot || leftover);
}

/* Copy a packet's data-in phase into one PRD region: *len left of it. */
static bool atapi_region(struct ide_channel *ch, uint64_t addr, uint32_t len)
{
	while (len && ch->atapi_left) {
		uint64_t n = len;
		uint8_t *hva;

		if (ch->pos == ch->end && !ide_atapi_fill(ch))
			return false;
		if (n > ch->end - ch->pos)
			n = ch->end - ch->pos;
		hva = bm_ptr(ch, addr, &n, true);
		if (!hva) {
			dma_done(ch, ER_ABRT, false);
			return false;
		}
		memcpy(hva, ch->buf + ch->pos, n);
		ch->pos += (uint32_t)n;
		ch->atapi_left -= (uint32_t)n;
		addr += n;
		len -= (uint32_t)n;
	}
	return true;
}

/* A packet's data by DMA: the same PRD rules as an ATA transfer; a
 * table shorter than the data ends the command with ABRT. */
void ide_atapi_run_dma(struct ide_channel *ch)
{
	uint32_t prd = ch->prd_addr;
	bool eot = false;

	ch->bm_status |= BM_ST_ACTIVE;
	if (!(ch->bm_cmd & BM_CMD_TO_MEM)) {
		dma_done(ch, ER_ABRT, false);
		return;
	}
	while (ch->atapi_left && !eot) {
		uint64_t n = 8;
		const uint8_t *e = bm_ptr(ch, prd, &n, false);
		uint32_t len;

		if (!e || n < 8) {
			dma_done(ch, ER_ABRT, false);
			return;
		}
		len = (uint32_t)io_data_get(e + 4, 4);
		eot = len & PRD_EOT;
		len &= 0xfffe;
		if (!atapi_region(ch, (uint32_t)io_data_get(e, 4), len ? len : 0x10000)) {
			/* a failed read ended the command with its sense */
			ch->bm_status |= BM_ST_INT;
			ch->bm_status &= ~BM_ST_ACTIVE;
			return;
		}
		prd += 8;
		if (!eot && ch->atapi_left && (prd & 0xffff) == 0) {
			dma_done(ch, ER_ABRT, false);
			return;
		}
	}
	if (ch->atapi_left) {
		dma_done(ch, ER_ABRT, false);
		return;
	}
	ch->bm_status |= BM_ST_INT;
	if (eot)
		ch->bm_status &= ~BM_ST_ACTIVE;
	ide_atapi_complete(ch);
}

/* A DMA read or write command: checked now, run when the engine starts
 * (at once if the guest started it first). */
void ide_start_dma(struct ide_channel *ch, bool ext, bool write)
{
	if (!ide_prepare_rw(ch, ext, write))
		return;
	ch->dma_to_mem = !write;
	ch->dma_pending = true;
	/* The guest may select the other drive (which may have no disk)
	 * before it starts the engine: the transfer stays with this one. */
	ch->dma_unit = ch->unit;
	ch->status = ST_DRDY | ST_DSC | ST_DRQ;
	if (ch->bm_cmd & BM_CMD_START)
		run_dma(ch);
}

/* Bus-master registers, 8 bytes per channel in BAR 4: command (0),
 * status (2), PRD table address (4-7). */
static uint8_t bm_reg_read(struct ide_channel *ch, unsigned reg)
{
	switch (reg) {
	case 0: return ch->bm_cmd;
	case 2: return ch->bm_status;
	case 4: case 5: case 6: case 7: return (uint8_t)(ch->prd_addr >> (8 * (reg - 4)));
	default: return 0;
	}
}

static void bm_reg_write(struct ide_channel *ch, unsigned reg, uint8_t v)
{
	unsigned shift;

	switch (reg) {
	case 0:
		if (!(v & BM_CMD_START) && ch->bm_cmd & BM_CMD_START)
			ch->bm_status &= ~BM_ST_ACTIVE; /* stop: abandon the transfer */
		ch->bm_cmd = v & (BM_CMD_START | BM_CMD_TO_MEM);
		if (v & BM_CMD_START && ch->dma_pending) {
			if (ch->drive[ch->dma_unit].atapi)
				ide_atapi_run_dma(ch);
			else
				run_dma(ch);
		}
		break;
	case 2:
		ch->bm_status = (ch->bm_status & ~(v & (BM_ST_ERR | BM_ST_INT)) & ~BM_ST_CAP) |
				(v & BM_ST_CAP);
		break;
	case 4: case 5: case 6: case 7:
		shift = 8 * (reg - 4);
		ch->prd_addr = (ch->prd_addr & ~(0xffu << shift)) | (uint32_t)v << shift;
		ch->prd_addr &= ~3u;
		break;
	}
}

static void bm_io_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct ide *ide = opaque;
	struct ide_channel *ch = &ide->ch[(off >> 3) & 1];
	uint64_t v = 0;

	pthread_mutex_lock(&ch->lock);
	for (unsigned i = 0; i < size && (off & 7) + i < 8; i++)
		v |= (uint64_t)bm_reg_read(ch, (unsigned)(off & 7) + i) << (8 * i);
	pthread_mutex_unlock(&ch->lock);
	io_data_put(data, size, v);
}

static void bm_io_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct ide *ide = opaque;
	struct ide_channel *ch = &ide->ch[(off >> 3) & 1];
	uint64_t v = io_data_get(data, size);
	unsigned first = (unsigned)(off & 7);

	pthread_mutex_lock(&ch->lock);
	/* the PRD address first, so a dword write then start sees it */
	for (unsigned i = 0; i < size && first + i < 8; i++)
		if (first + i != 0)
			bm_reg_write(ch, first + i, (uint8_t)(v >> (8 * i)));
	if (first == 0)
		bm_reg_write(ch, 0, (uint8_t)v);
	pthread_mutex_unlock(&ch->lock);
}

const struct io_ops ide_bm_ops = {bm_io_read, bm_io_write};