/* i440fx.h — the i440FX / Q35 host bridge (PAM shadow RAM, SMRAM). */
#ifndef VMM_DEVICES_PCI_I440FX_H
#define VMM_DEVICES_PCI_I440FX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/pci/pci.h"

/* The machine maps guest-physical ranges onto host memory for devices that
 * switch what backs a range (the i440FX PAM registers, the BIOS ROM). The
 * machine owns the KVM memory slots and implements this with them. */
struct pc_mem_map {
	/* Back [gpa, gpa+size) with host memory at hva (page aligned), or
	 * unmap it when hva is NULL, so accesses reach the MMIO bus. With
	 * read_only, guest writes are not stored but reach the MMIO bus.
	 * A later call for the same gpa and size replaces the mapping.
	 * 0 or -errno. */
	int (*map)(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool read_only);
	void *opaque;
};

/* i440FX host bridge at 00:00.0 with PAM shadow-RAM control of
 * 0xc0000-0xfffff and the SMRAM register. */
struct i440fx;
struct i440fx *i440fx_new(struct dev_host *host, struct pci_bus *bus,
			  const struct pc_mem_map *map);
/* The BIOS alias shown where PAM selects ROM: [1 MiB - size, 1 MiB) reads
 * hva (size a multiple of 16 KiB, at most 256 KiB). 0 or -errno. */
int i440fx_set_bios_alias(struct i440fx *nb, void *hva, uint64_t size);
/* The Q35 MCH (8086:29c0) for -machine q35: the same model with its PAM
 * registers at 0x90-0x96, SMRAM at 0x9d and PCIEXBAR at 0x60, which maps
 * the bus's PCIe ECAM window. */
struct i440fx *q35_mch_new(struct dev_host *host, struct pci_bus *bus,
			   const struct pc_mem_map *map);
/* Where SeaBIOS puts the ECAM window (256 MiB, buses 0-255); the MCFG
 * table and the q35 memory map assume it. */
#define Q35_ECAM_BASE 0xb0000000u
#define Q35_ECAM_SIZE 0x10000000u
/* What SeaBIOS does: PCIEXBAR = Q35_ECAM_BASE, 256 MiB, enabled. */
void q35_mch_enable_ecam(struct i440fx *nb);
/* What a BIOS leaves behind: read-write shadow RAM in every PAM segment. */
void i440fx_shadow_all(struct i440fx *nb);
/* Snapshot: node "i440fx@0,0" or "q35-mch@0,0" (config space and shadow
 * RAM); loading remaps PAM segments and the ECAM window. */
struct state_writer;
struct state_reader;
void i440fx_save(struct i440fx *nb, struct state_writer *w);
int i440fx_load(struct i440fx *nb, const struct state_reader *r, char *err, size_t errlen);
void i440fx_free(struct i440fx *nb);

#endif /* VMM_DEVICES_PCI_I440FX_H */
