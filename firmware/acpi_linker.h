/* acpi_linker.h — the table-loader commands the ACPI builder records while
 * it lays out tables for the firmware (fw_cfg) delivery; internal to
 * firmware/. */
#ifndef VMM_FIRMWARE_ACPI_LINKER_H
#define VMM_FIRMWARE_ACPI_LINKER_H

#include <stddef.h>
#include <stdint.h>

/* The commands, appended to cmds[0..max) (ACPI_LOADER_CMD_LEN each); err
 * becomes -ENOSPC when one did not fit. */
struct acpi_linker {
	uint8_t *cmds;
	size_t len, max;
	int err;
};

/* Firmware allocates file, aligned to align, in zone (ACPI_LOADER_ZONE_*). */
void linker_allocate(struct acpi_linker *lk, const char *file, uint32_t align, uint8_t zone);
/* The size-byte field at offset in file holds an offset into target:
 * firmware adds target's address to it. */
void linker_add_pointer(struct acpi_linker *lk, const char *file, uint32_t offset, uint8_t size,
			const char *target);
/* Firmware makes file's bytes [start, start + len) sum to zero by
 * adjusting the byte at offset (which the blob leaves 0, as QEMU does). */
void linker_add_checksum(struct acpi_linker *lk, const char *file, uint32_t start, uint32_t len,
			 uint32_t offset);

#endif
