/* acpi_linker.c — the "etc/table-loader" fw_cfg file: 128-byte commands,
 * little endian, that tell the firmware (SeaBIOS, OVMF) where to place the
 * ACPI blobs, how to turn the offsets the blobs hold into addresses, and
 * which checksums to recompute afterwards. */
#include <errno.h>
#include <string.h>

#include "firmware/acpi_linker.h"
#include "firmware/firmware.h"
#include "firmware/le.h"

/* The next zeroed command slot with its type set, or NULL when full. */
static uint8_t *command(struct acpi_linker *lk, uint32_t type)
{
	uint8_t *c;

	if (lk->max - lk->len < ACPI_LOADER_CMD_LEN) {
		lk->err = -ENOSPC;
		return NULL;
	}
	c = lk->cmds + lk->len;
	lk->len += ACPI_LOADER_CMD_LEN;
	memset(c, 0, ACPI_LOADER_CMD_LEN);
	put_le32(c, type);
	return c;
}

/* File names are NUL-padded fields; every name vmm uses is short. */
static void put_name(uint8_t *field, const char *name)
{
	strncpy((char *)field, name, ACPI_LOADER_FILESZ - 1);
}

void linker_allocate(struct acpi_linker *lk, const char *file, uint32_t align, uint8_t zone)
{
	uint8_t *c = command(lk, ACPI_LOADER_ALLOCATE);

	if (!c)
		return;
	put_name(c + 4, file);
	put_le32(c + 4 + ACPI_LOADER_FILESZ, align);
	c[4 + ACPI_LOADER_FILESZ + 4] = zone;
}

void linker_add_pointer(struct acpi_linker *lk, const char *file, uint32_t offset, uint8_t size,
			const char *target)
{
	uint8_t *c = command(lk, ACPI_LOADER_ADD_POINTER);

	if (!c)
		return;
	put_name(c + 4, file);
	put_name(c + 4 + ACPI_LOADER_FILESZ, target);
	put_le32(c + 4 + 2 * ACPI_LOADER_FILESZ, offset);
	c[4 + 2 * ACPI_LOADER_FILESZ + 4] = size;
}

void linker_add_checksum(struct acpi_linker *lk, const char *file, uint32_t start, uint32_t len,
			 uint32_t offset)
{
	uint8_t *c = command(lk, ACPI_LOADER_ADD_CHECKSUM);

	if (!c)
		return;
	put_name(c + 4, file);
	put_le32(c + 4 + ACPI_LOADER_FILESZ, offset);
	put_le32(c + 8 + ACPI_LOADER_FILESZ, start);
	put_le32(c + 12 + ACPI_LOADER_FILESZ, len);
}
