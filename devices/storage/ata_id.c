/* ata_id.c — the IDENTIFY data of the disks and CD-ROM drives, the same
 * on every transport (ata_id.h). */
#include <stdio.h>
#include <string.h>

#include "build/config.h"
#include "devices/storage/ata_id.h"

void ata_id_string(uint16_t *w, unsigned words, const char *s)
{
	size_t n = strlen(s);

	/* ATA strings: space padded, two characters per word, first in the
	 * high byte */
	for (unsigned i = 0; i < words * 2; i++) {
		uint8_t c = i < n ? (uint8_t)s[i] : ' ';

		if (i & 1)
			w[i / 2] |= c;
		else
			w[i / 2] = (uint16_t)(c << 8);
	}
}

void ata_id_checksum(uint16_t id[ATA_ID_WORDS])
{
	uint8_t sum = 0xa5;

	id[255] = 0xa5;
	for (unsigned i = 0; i < 255; i++)
		sum += (uint8_t)(id[i] & 0xff) + (uint8_t)(id[i] >> 8);
	id[255] = (uint16_t)(((uint8_t)-sum) << 8 | 0xa5);
}

/* Serial (VMM00001...), firmware revision and model. */
static void id_names(uint16_t id[ATA_ID_WORDS], unsigned index, const char *model)
{
	char serial[21];

	snprintf(serial, sizeof(serial), "VMM%05u", index + 1);
	ata_id_string(&id[10], 10, serial);
	ata_id_string(&id[23], 4, VMM_VERSION);
	ata_id_string(&id[27], 20, model);
}

void ata_id_disk(uint16_t id[ATA_ID_WORDS], uint64_t sectors, unsigned index)
{
	uint64_t lba28 = sectors < 0x0fffffff ? sectors : 0x0fffffff;
	uint64_t cyls = sectors / (16 * 63);

	if (cyls > 16383)
		cyls = 16383;
	memset(id, 0, ATA_ID_WORDS * sizeof(*id));
	id[0] = 0x0040; /* fixed, non-removable ATA device */
	id[1] = (uint16_t)cyls;
	id[3] = 16;
	id[6] = 63;
	id_names(id, index, "VMM HARDDISK");
	id[47] = 0x8000 | ATA_ID_MAX_MULT;
	id[49] = 0x0300; /* LBA and DMA supported */
	id[51] = 0x0200;
	id[53] = 0x0007; /* words 54-58, 64-70 and 88 are valid */
	id[54] = (uint16_t)cyls;
	id[55] = 16;
	id[56] = 63;
	id[57] = (uint16_t)(cyls * 16 * 63);
	id[58] = (uint16_t)((cyls * 16 * 63) >> 16);
	id[60] = (uint16_t)lba28;
	id[61] = (uint16_t)(lba28 >> 16);
	id[63] = 0x0007; /* multiword DMA 0-2 */
	id[64] = 0x0003; /* PIO 3-4 */
	id[65] = id[66] = id[67] = id[68] = 120;
	id[80] = 0x00f0; /* ATA-4 to ATA-7 */
	id[82] = 0x4020; /* NOP, write cache */
	id[83] = 0x7400; /* FLUSH CACHE EXT, FLUSH CACHE, 48-bit addresses */
	id[84] = 0x4000;
	id[85] = 0x4020;
	id[86] = 0x3400;
	id[87] = 0x4000;
	id[88] = 0x203f; /* UDMA 0-5 supported, UDMA 5 selected */
	for (unsigned i = 0; i < 4; i++)
		id[100 + i] = (uint16_t)(sectors >> (16 * i));
}

void ata_id_cdrom(uint16_t id[ATA_ID_WORDS], unsigned index)
{
	memset(id, 0, ATA_ID_WORDS * sizeof(*id));
	/* ATAPI, CD-ROM class, removable, DRQ within 50 us, 12-byte packets */
	id[0] = 0x85c0;
	id_names(id, index, "VMM DVD-ROM");
	id[49] = 0x0300; /* LBA, DMA */
	id[53] = 0x0007;
	id[63] = 0x0007; /* multiword DMA 0-2 */
	id[64] = 0x0003; /* PIO 3-4 */
	id[65] = id[66] = id[67] = id[68] = 120;
	id[71] = 30; /* PACKET to bus release, ns */
	id[72] = 30;
	id[80] = 0x001e; /* ATA/ATAPI-1 to -4 */
	id[82] = 0x4014; /* PACKET, removable media, NOP */
	id[83] = 0x4000;
	id[84] = 0x4000;
	id[85] = 0x4014;
	id[87] = 0x4000;
	id[88] = 0x203f; /* UDMA 0-5, UDMA 5 selected */
}
