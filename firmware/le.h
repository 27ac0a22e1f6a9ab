/* le.h — little-endian stores for the tables and headers firmware/ writes
 * into guest memory (ACPI, MP table, boot_params); internal to firmware/. */
#ifndef VMM_FIRMWARE_LE_H
#define VMM_FIRMWARE_LE_H

#include <stdint.h>

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, v & 0xffff);
	put_le16(p + 2, v >> 16);
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, v & 0xffffffffu);
	put_le32(p + 4, v >> 32);
}

#endif
