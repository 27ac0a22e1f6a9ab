/* ide_internal.h — what the PIIX3 IDE's command side (ide.c) and its
 * bus-master DMA engine (ide_dma.c) share: register bits, the channel
 * state and the few calls between the two. Not for other devices. */
#ifndef DEVICES_IDE_INTERNAL_H
#define DEVICES_IDE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/storage/ata_id.h"
#include "devices/storage/ide.h"

#define SECTOR 512
#define MAX_MULT ATA_ID_MAX_MULT

/* status */
#define ST_ERR 0x01
#define ST_DRQ 0x08
#define ST_DSC 0x10
#define ST_DRDY 0x40
#define ST_BSY 0x80
/* error */
#define ER_ABRT 0x04
#define ER_IDNF 0x10
#define ER_UNC 0x40
/* device control */
#define CTL_NIEN 0x02
#define CTL_SRST 0x04
#define CTL_HOB 0x80
/* device/head */
#define DH_LBA 0x40
#define DH_DEV 0x10
/* bus master */
#define BM_CMD_START 0x01
#define BM_CMD_TO_MEM 0x08
#define BM_ST_ACTIVE 0x01
#define BM_ST_ERR 0x02
#define BM_ST_INT 0x04
#define BM_ST_CAP 0x60
#define PRD_EOT 0x80000000u

enum xfer { XFER_NONE, XFER_PIO_IN, XFER_PIO_OUT, XFER_PACKET };

struct atapi;

struct ide_drive {
	bool present;
	struct block_dev *blk; /* an ATA disk */
	struct atapi *atapi;   /* or a packet device (its medium may be absent) */
	uint64_t sectors;
	uint16_t id[256];
	unsigned mult; /* READ/WRITE MULTIPLE block size, 0 = disabled */
	unsigned heads, spt;
};

struct ide_channel {
	struct ide *ide;
	pthread_mutex_t lock;
	unsigned index, irq;
	uint16_t cmd_base, ctl_base;
	struct ide_drive drive[2];
	unsigned unit;
	uint8_t feature, nsector, sector, lcyl, hcyl;
	uint8_t hob_feature, hob_nsector, hob_sector, hob_lcyl, hob_hcyl;
	uint8_t select, status, error, control;
	bool intrq, line;
	/* PIO transfer: the current DRQ block in buf[pos..end) */
	enum xfer xfer;
	uint8_t buf[MAX_MULT * SECTOR];
	unsigned pos, end;
	uint64_t lba;	    /* next sector to transfer */
	uint32_t remaining; /* sectors still to transfer, current block included */
	unsigned block;	    /* sectors per DRQ block */
	/* ATAPI: the packet being received, then the data-in phase: bytes
	 * still to go in all and in the current DRQ block; a READ's
	 * sectors come through buf from lba on, remaining of them */
	uint8_t packet[12];
	uint32_t atapi_left, drq_left, byte_limit;
	bool sig_pending; /* after a reset: selecting a drive shows its signature */
	bool identify_pio; /* IDENTIFY PACKET DEVICE: its end raises no interrupt */
	/* DMA */
	bool dma_pending, dma_to_mem;
	unsigned dma_unit; /* the drive the DMA command went to */
	uint8_t bm_cmd, bm_status;
	uint32_t prd_addr;
};

struct ide {
	struct pci_dev pci;
	struct dev_host *host;
	struct ide_channel ch[2];
};

/* interrupt sense (ATAPI nsector): CoD, IO */
#define IR_COD 0x01
#define IR_IO 0x02

/* The drive the task file currently selects. */
struct ide_drive *ide_cur(struct ide_channel *ch);
/* End the command with ATA error bits (0: success) and interrupt. */
void ide_finish(struct ide_channel *ch, uint8_t error);
/* Check a read/write command and load ch->lba and ch->remaining, or fail
 * the command and return false. */
bool ide_prepare_rw(struct ide_channel *ch, bool ext, bool write);
/* READ/WRITE DMA (EXT): run by the bus-master engine. */
void ide_start_dma(struct ide_channel *ch, bool ext, bool write);
/* Drive the IRQ line as INTRQ and nIEN say. */
void ide_update_line(struct ide_channel *ch);
/* Assert INTRQ. */
void ide_raise_irq(struct ide_channel *ch);

/* ide_atapi.c: packet devices on the channel. */
void ide_atapi_identify(struct ide_drive *d, unsigned index);
void ide_atapi_signature(struct ide_channel *ch);
/* Commands of a packet device: true when handled (or refused). */
bool ide_atapi_exec(struct ide_channel *ch, uint8_t cmd);
void ide_atapi_data_write(struct ide_channel *ch, const void *data, unsigned size);
void ide_atapi_data_read(struct ide_channel *ch, void *data, unsigned size);
/* Bus-master DMA of a packet's data-in phase (ide_dma.c). */
void ide_atapi_run_dma(struct ide_channel *ch);
/* For the DMA engine: refill buf with the next data; false after the
 * command failed (ended with the drive's sense). */
bool ide_atapi_fill(struct ide_channel *ch);
/* The data phase is over: status and interrupt. */
void ide_atapi_complete(struct ide_channel *ch);
/* End a packet command with CHECK CONDITION and this sense key. */
void ide_atapi_fail(struct ide_channel *ch, uint8_t sense_key);

/* The bus-master registers, BAR 4. */
extern const struct io_ops ide_bm_ops;

#endif
