/* fw_cfg.h — QEMU's firmware configuration device. */
#ifndef VMM_DEVICES_ISA_FW_CFG_H
#define VMM_DEVICES_ISA_FW_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* QEMU firmware configuration device: 0x510 selector, 0x511 data,
 * 0x514/0x518 DMA address (big-endian; a write to 0x518 starts it). */
enum {
	FW_CFG_SIGNATURE = 0x00,
	FW_CFG_ID = 0x01,
	FW_CFG_UUID = 0x02,
	FW_CFG_RAM_SIZE = 0x03,
	FW_CFG_NOGRAPHIC = 0x04,
	FW_CFG_NB_CPUS = 0x05,
	FW_CFG_NUMA = 0x0d,
	FW_CFG_BOOT_MENU = 0x0e,
	FW_CFG_MAX_CPUS = 0x0f,
	FW_CFG_FILE_DIR = 0x19,
	FW_CFG_FILE_FIRST = 0x20,
	FW_CFG_ACPI_TABLES = 0x8000,
	FW_CFG_SMBIOS_ENTRIES = 0x8001,
	FW_CFG_IRQ0_OVERRIDE = 0x8002,
	FW_CFG_E820_TABLE = 0x8003,
};
#define FW_CFG_MAX_FILES 64
#define FW_CFG_FILE_NAME_LEN 56
struct fw_cfg;
struct fw_cfg *fw_cfg_new(struct dev_host *host);
/* Snapshot: node "fw-cfg@510" (selector, offset, DMA address latch); the
 * items are rebuilt by the destination from its own command line. */
struct state_writer;
struct state_reader;
void fw_cfg_save(struct fw_cfg *f, struct state_writer *w);
int fw_cfg_load(struct fw_cfg *f, const struct state_reader *r, char *err, size_t errlen);
void fw_cfg_free(struct fw_cfg *f);
/* Add or replace an item (the data is copied). 0 or -errno. */
int fw_cfg_add(struct fw_cfg *f, uint16_t key, const void *data, size_t len);
int fw_cfg_add_u16(struct fw_cfg *f, uint16_t key, uint16_t v);
int fw_cfg_add_u32(struct fw_cfg *f, uint16_t key, uint32_t v);
int fw_cfg_add_u64(struct fw_cfg *f, uint16_t key, uint64_t v);
/* Add a named file to the directory; -EEXIST, -ENOSPC, -ENAMETOOLONG. */
int fw_cfg_add_file(struct fw_cfg *f, const char *name, const void *data, size_t len);

#endif /* VMM_DEVICES_ISA_FW_CFG_H */
