/* ata_id.h — the IDENTIFY (PACKET) DEVICE data of the ATA disks and ATAPI
 * CD-ROM drives, shared by the transports that carry them (PIIX3 IDE,
 * AHCI). Each transport adds its own words (IDE's cable and reset
 * results, SATA's capabilities) and then the checksum. */
#ifndef VMM_DEVICES_STORAGE_ATA_ID_H
#define VMM_DEVICES_STORAGE_ATA_ID_H

#include <stdint.h>

#define ATA_ID_WORDS 256
/* the largest READ/WRITE MULTIPLE block the disks offer (sectors) */
#define ATA_ID_MAX_MULT 16

/* An IDENTIFY string: words*2 characters, space padded, two per word
 * with the first in the high byte (ATA's order). */
void ata_id_string(uint16_t *w, unsigned words, const char *s);
/* Word 255: the signature and the checksum over the other 255 words. */
void ata_id_checksum(uint16_t id[ATA_ID_WORDS]);
/* A fixed disk of sectors 512-byte sectors, LBA48, UDMA 5; index makes
 * the serial number (VMM00001 for 0). */
void ata_id_disk(uint16_t id[ATA_ID_WORDS], uint64_t sectors, unsigned index);
/* A removable ATAPI CD/DVD-ROM drive with 12-byte packets. */
void ata_id_cdrom(uint16_t id[ATA_ID_WORDS], unsigned index);

#endif /* VMM_DEVICES_STORAGE_ATA_ID_H */
