/* ahci_internal.h — what the AHCI registers (ahci.c) and the command
 * engine (ahci_cmd.c) share. Not for other devices. */
#ifndef DEVICES_AHCI_INTERNAL_H
#define DEVICES_AHCI_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/storage/ahci.h"
#include "devices/storage/ata_id.h"

/* port registers (offsets in the port's 0x80 bytes) */
#define PX_CLB 0x00
#define PX_CLBU 0x04
#define PX_FB 0x08
#define PX_FBU 0x0c
#define PX_IS 0x10
#define PX_IE 0x14
#define PX_CMD 0x18
#define PX_TFD 0x20
#define PX_SIG 0x24
#define PX_SSTS 0x28
#define PX_SCTL 0x2c
#define PX_SERR 0x30
#define PX_SACT 0x34
#define PX_CI 0x38
#define PX_SNTF 0x3c

/* PxIS */
#define IS_DHRS (1u << 0)  /* D2H register FIS */
#define IS_PSS (1u << 1)   /* PIO setup FIS */
#define IS_SDBS (1u << 3)  /* set device bits FIS */
#define IS_OFS (1u << 24)  /* overflow: the PRDT is too short */
#define IS_HBFS (1u << 29) /* host bus fatal: memory outside RAM */
#define IS_TFES (1u << 30) /* task file error */

/* PxCMD */
#define CMD_ST (1u << 0)
#define CMD_SUD (1u << 1)
#define CMD_POD (1u << 2)
#define CMD_CLO (1u << 3)
#define CMD_FRE (1u << 4)
#define CMD_FR (1u << 14)
#define CMD_CR (1u << 15)
#define CMD_ATAPI (1u << 24)
#define CMD_WRITABLE (CMD_ST | CMD_SUD | CMD_POD | CMD_FRE | CMD_ATAPI | 0x0e000000u)

/* ATA status and error */
#define ATA_ERR 0x01
#define ATA_DRQ 0x08
#define ATA_DSC 0x10
#define ATA_DRDY 0x40
#define ATA_BSY 0x80
#define ATA_ABRT 0x04
#define ATA_IDNF 0x10
#define ATA_UNC 0x40

#define AHCI_SLOTS 32
#define AHCI_SECTOR 512
/* disk data moves through a bounce buffer this many sectors at a time */
#define AHCI_BOUNCE_SECTORS 128

struct ahci_port {
	struct ahci *ahci;
	unsigned index;
	struct block_dev *disk;
	struct atapi *cdrom;
	uint16_t id[ATA_ID_WORDS];
	uint64_t clb, fb;
	uint32_t is, ie, cmd, tfd, sig, ssts, sctl, serr, sact, ci;
};

struct ahci {
	struct pci_dev pci;
	struct dev_host *host;
	pthread_mutex_t lock;
	uint32_t ghc, is;
	uint32_t idp_index; /* BAR 4's index register */
	unsigned msi_cap;
	bool irq_raised; /* a new interrupt since the last signal */
	struct ahci_port port[AHCI_PORTS];
	uint8_t bounce[AHCI_BOUNCE_SECTORS * AHCI_SECTOR];
};

/* ahci_cmd.c: run the commands issued in PxCI (lock held). */
void ahci_port_run(struct ahci_port *p);
/* The device's power-on state: signature, task file, a D2H FIS. */
void ahci_port_device_reset(struct ahci_port *p);
/* Set interrupt bits of the port (lock held; signalled on unlock). */
void ahci_port_raise(struct ahci_port *p, uint32_t bits);
/* Bus master access (through the IOMMU; needs bus mastering on): 0 or
 * -EFAULT. */
int ahci_dma(struct ahci *s, uint64_t addr, void *buf, uint64_t len, bool to_guest);

#endif
