/* atapi.h — an ATAPI CD/DVD-ROM drive: the MMC command set, sense data,
 * the tray, the lock and the medium. Transport-neutral: a controller (IDE
 * today) hands it 12-byte packets and moves the data it answers with.
 * Thread-safe: the monitor changes media while a vCPU issues packets. */
#ifndef VMM_DEVICES_STORAGE_ATAPI_H
#define VMM_DEVICES_STORAGE_ATAPI_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/backends.h"

#define ATAPI_CDB_LEN 12
#define ATAPI_SECTOR 2048
/* The largest non-READ reply (GET CONFIGURATION, MODE SENSE): callers
 * pass a buffer this big to atapi_command. */
#define ATAPI_REPLY_MAX 256

/* sense keys */
#define ATAPI_SK_NOT_READY 0x02
#define ATAPI_SK_MEDIUM_ERROR 0x03
#define ATAPI_SK_ILLEGAL_REQUEST 0x05
#define ATAPI_SK_UNIT_ATTENTION 0x06

struct atapi;

/* What a packet asks the transport to do after it succeeded: return
 * reply_len bytes from the caller's buffer, then read_sectors 2048-byte
 * sectors from read_lba on (with atapi_read). A failed packet (non-zero
 * return of atapi_command) moves no data. */
struct atapi_xfer {
	uint32_t reply_len;
	uint64_t read_lba;
	uint32_t read_sectors;
};

/* medium may be NULL (an empty drive); the drive owns it from now on. */
struct atapi *atapi_new(struct block_dev *medium);
void atapi_free(struct atapi *a);
/* Snapshot: properties "atapi-*" (tray lock, sense, unit attention, media
 * event) in the node of the controller port holding the drive. */
struct state_writer;
struct state_node;
void atapi_save(struct atapi *a, struct state_writer *w);
int atapi_load(struct atapi *a, struct state_node *n);
/* Called (with the drive's lock held: do not call back into it) when the
 * guest opens or closes the tray with START STOP UNIT. */
void atapi_on_tray_moved(struct atapi *a, void (*fn)(void *opaque, bool open), void *opaque);

/* Run one packet: 0 (GOOD) with *x filled, or the sense key of a CHECK
 * CONDITION (the sense data is kept for REQUEST SENSE). */
int atapi_command(struct atapi *a, const uint8_t cdb[ATAPI_CDB_LEN], uint8_t *reply,
		  struct atapi_xfer *x);
/* Read count CD sectors into buf: 0 or the sense key of the failure
 * (medium removed meanwhile, past the end, host I/O error). */
int atapi_read(struct atapi *a, uint64_t lba, void *buf, uint32_t count);
/* The ATA error register's high nibble after a CHECK CONDITION. */
uint8_t atapi_sense_key(struct atapi *a);

/* Media changes from the monitor. open/eject fail with -EBUSY when the
 * guest has locked the tray (PREVENT) unless force; insert needs the tray
 * open or the drive empty and takes ownership of medium; eject = open
 * the tray and drop the medium. A medium that arrives leaves a UNIT
 * ATTENTION and a media event for the guest. */
int atapi_open_tray(struct atapi *a, bool force);
void atapi_close_tray(struct atapi *a);
int atapi_eject(struct atapi *a, bool force);
/* Replace the medium (NULL: none) with the tray open-insert-close cycle a
 * user would do: -EBUSY when locked (and not force). */
int atapi_change(struct atapi *a, struct block_dev *medium, bool force);

struct atapi_state {
	bool tray_open, locked;
	struct block_dev *medium; /* valid while the caller holds no change */
};
void atapi_get_state(struct atapi *a, struct atapi_state *s);

#endif /* VMM_DEVICES_STORAGE_ATAPI_H */
