/* smbios.c — the SMBIOS tables vmm hands SeaBIOS through fw_cfg
 * (etc/smbios/smbios-anchor + etc/smbios/smbios-tables), as QEMU does.
 * Without them SeaBIOS builds the tables itself, field by field through
 * fw_cfg lookups, which costs ~0.1 s of emulated ring-0 code on the
 * nested hosts. SeaBIOS adds its own type 0 (BIOS) structure, places the
 * tables and fixes the entry point's address and checksums.
 *
 * Structures (SMBIOS 2.8 layouts, 2.1-style entry point): type 1 system,
 * 3 chassis, 4 per CPU, 16 memory array, 17 per 16 GiB device, 19 mapped
 * ranges below and above 4 GiB, 32 boot status, 127 end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "build/config.h"
#include "firmware/firmware.h"
#include "firmware/le.h"

#define DIMM_MAX_MB 16384u /* one type 17 device per 16 GiB, like SeaBIOS */
#define FOUR_GIB_KB (4ull << 20)

struct smbios_out {
	uint8_t *buf;
	size_t len, used;
	unsigned n_structs;
	size_t max_struct;
	bool overflow;
};

/* Append one structure: the formatted area (its length byte is area[1]),
 * then the strings, each NUL-terminated, then the terminating NUL (two
 * NULs when there is no string). */
static void put_struct(struct smbios_out *o, const uint8_t *area, const char *const *strs,
		       unsigned n_strs)
{
	size_t need = area[1], start = o->used;

	for (unsigned i = 0; i < n_strs; i++)
		need += strlen(strs[i]) + 1;
	need += n_strs ? 1 : 2;
	if (o->used + need > o->len) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->used, area, area[1]);
	o->used += area[1];
	for (unsigned i = 0; i < n_strs; i++) {
		size_t l = strlen(strs[i]) + 1;

		memcpy(o->buf + o->used, strs[i], l);
		o->used += l;
	}
	memset(o->buf + o->used, 0, n_strs ? 1 : 2);
	o->used += n_strs ? 1 : 2;
	o->n_structs++;
	if (o->used - start > o->max_struct)
		o->max_struct = o->used - start;
}

static void header(uint8_t *a, uint8_t type, uint8_t len, uint16_t handle)
{
	memset(a, 0, len);
	a[0] = type;
	a[1] = len;
	put_le16(a + 2, handle);
}

static void put_system(struct smbios_out *o, const uint8_t *uuid)
{
	static const char *const strs[] = {"vmm", "vmm PC (i440FX + PIIX3)", VMM_VERSION};
	uint8_t a[0x1b];

	header(a, 1, sizeof(a), 0x100);
	a[4] = 1;	/* manufacturer */
	a[5] = 2;	/* product */
	a[6] = 3;	/* version */
	a[0x18] = 0x06; /* wake-up: power switch */
	/* UUID (8-23): SMBIOS 2.6+ stores its first three fields little-endian. */
	if (uuid) {
		static const uint8_t order[16] = {3, 2, 1,  0,	5,  4,	7,  6,
						  8, 9, 10, 11, 12, 13, 14, 15};

		for (unsigned i = 0; i < 16; i++)
			a[8 + i] = uuid[order[i]];
	}
	put_struct(o, a, strs, 3);
}

static void put_chassis(struct smbios_out *o)
{
	static const char *const strs[] = {"vmm"};
	uint8_t a[0x15];

	header(a, 3, sizeof(a), 0x300);
	a[4] = 1;		       /* manufacturer */
	a[5] = 0x01;		       /* type: other */
	a[9] = a[0xa] = a[0xb] = 0x03; /* boot-up, power supply, thermal: safe */
	a[0xc] = 0x02;		       /* security: unknown */
	put_struct(o, a, strs, 1);
}

static void put_cpu(struct smbios_out *o, unsigned i)
{
	char socket[16];
	const char *strs[] = {socket, "vmm"};
	uint8_t a[0x20];

	snprintf(socket, sizeof(socket), "CPU %u", i);
	header(a, 4, sizeof(a), (uint16_t)(0x400 + i));
	a[4] = 1;		    /* socket designation */
	a[5] = 0x03;		    /* central processor */
	a[6] = 0x01;		    /* family: other */
	a[7] = 2;		    /* manufacturer */
	put_le16(a + 0x14, 2000);   /* max speed, MHz */
	put_le16(a + 0x16, 2000);   /* current speed */
	a[0x18] = 0x41;		    /* socket populated, CPU enabled */
	a[0x19] = 0x01;		    /* upgrade: other */
	put_le16(a + 0x1a, 0xffff); /* no cache information */
	put_le16(a + 0x1c, 0xffff);
	put_le16(a + 0x1e, 0xffff);
	put_struct(o, a, strs, 2);
}

static void put_memory(struct smbios_out *o, uint64_t below, uint64_t above)
{
	uint64_t total_mb = (below + above) >> 20;
	unsigned n_dimms = (unsigned)((total_mb + DIMM_MAX_MB - 1) / DIMM_MAX_MB);
	uint64_t kb_below = below >> 10, kb_above = above >> 10;
	uint8_t a[0x1f];

	header(a, 16, 0x0f, 0x1000);
	a[4] = 0x01; /* location: other */
	a[5] = 0x03; /* use: system memory */
	a[6] = 0x06; /* error correction: multi-bit ECC */
	put_le32(a + 7, total_mb < (2u << 20) ? (uint32_t)(total_mb << 10) : 0x80000000u);
	put_le16(a + 0xb, 0xfffe); /* no error information */
	put_le16(a + 0xd, (uint16_t)n_dimms);
	put_struct(o, a, NULL, 0);

	for (unsigned i = 0; i < n_dimms; i++) {
		uint64_t mb = i + 1 < n_dimms ? DIMM_MAX_MB : total_mb - (uint64_t)i * DIMM_MAX_MB;
		char locator[16];
		const char *strs[] = {locator};

		snprintf(locator, sizeof(locator), "DIMM %u", i);
		header(a, 17, 0x15, (uint16_t)(0x1100 + i));
		put_le16(a + 4, 0x1000);	 /* the array above */
		put_le16(a + 6, 0xfffe);	 /* no error information */
		put_le16(a + 8, 64);		 /* total width */
		put_le16(a + 0xa, 64);		 /* data width */
		put_le16(a + 0xc, (uint16_t)mb); /* MiB (bit 15 clear) */
		a[0xe] = 0x09;			 /* DIMM */
		a[0x10] = 1;			 /* device locator */
		a[0x12] = 0x07;			 /* RAM */
		put_struct(o, a, strs, 1);
	}

	/* type 19 in KiB; ranges past 4 TiB would need the extended fields */
	header(a, 19, 0x0f, 0x1300);
	put_le32(a + 8, (uint32_t)(kb_below - 1));
	put_le16(a + 0xc, 0x1000);
	a[0xe] = 1;
	if (kb_below)
		put_struct(o, a, NULL, 0);
	if (kb_above) {
		header(a, 19, 0x0f, 0x1301);
		put_le32(a + 4, (uint32_t)FOUR_GIB_KB);
		put_le32(a + 8, (uint32_t)(FOUR_GIB_KB + kb_above - 1));
		put_le16(a + 0xc, 0x1000);
		a[0xe] = 1;
		put_struct(o, a, NULL, 0);
	}
}

static void put_boot_and_end(struct smbios_out *o)
{
	uint8_t a[0x0b];

	header(a, 32, 0x0b, 0x2000); /* boot status 0: no errors */
	put_struct(o, a, NULL, 0);
	header(a, 127, 4, 0x7f00);
	put_struct(o, a, NULL, 0);
}

int smbios_build(const struct pc_fw_config *c, uint8_t anchor[SMBIOS_ANCHOR_LEN], uint8_t *tables,
		 size_t max, size_t *tables_len)
{
	struct smbios_out o = {tables, max, 0, 0, 0, false};
	uint64_t below, above;

	pc_ram_split(c, &below, &above);
	put_system(&o, c->uuid);
	put_chassis(&o);
	for (unsigned i = 0; i < c->ncpus; i++)
		put_cpu(&o, i);
	put_memory(&o, below, above);
	put_boot_and_end(&o);
	if (o.overflow || o.used > 0xffff)
		return -ENOSPC;

	memset(anchor, 0, SMBIOS_ANCHOR_LEN);
	memcpy(anchor, "_SM_", 4);
	anchor[5] = SMBIOS_ANCHOR_LEN;
	anchor[6] = 2; /* version 2.8 */
	anchor[7] = 8;
	put_le16(anchor + 8, (uint16_t)o.max_struct);
	memcpy(anchor + 0x10, "_DMI_", 5);
	put_le16(anchor + 0x16, (uint16_t)o.used);
	put_le16(anchor + 0x1c, (uint16_t)o.n_structs);
	anchor[0x1e] = 0x28;
	/* the address (0x18) and both checksums are SeaBIOS's to fill in */
	*tables_len = o.used;
	return 0;
}
