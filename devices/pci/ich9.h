/* ich9.h — the ICH9 south bridge functions of -machine q35: the LPC
 * (PCI-ISA) bridge at 00:1f.0 and the SMBus controller at 00:1f.3. */
#ifndef VMM_DEVICES_PCI_ICH9_H
#define VMM_DEVICES_PCI_ICH9_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"
#include "devices/isa/acpi_pm.h"
#include "devices/pci/pci.h"

#define ICH9_LPC_DEVFN (31 << 3)
#define ICH9_SMBUS_DEVFN (31 << 3 | 3)
/* Where the chipset's devices (00:19.0-00:1f.7) and the others begin. */
#define ICH9_FIRST_CHIPSET_SLOT 25

/* The PIRQ (0-7 = A-H) that INTx pin (0 = INTA) of a device in slot
 * drives, as QEMU's q35 DSDT and SeaBIOS wire them: slots 0-24 rotate
 * over PIRQE-H, the chipset's slots 25-31 use PIRQA-D. */
static inline unsigned ich9_slot_pirq(unsigned slot, unsigned pin)
{
	return slot < ICH9_FIRST_CHIPSET_SLOT ? 4 + ((slot + pin) & 3) : pin & 3;
}
/* In APIC mode PIRQ n is I/O APIC input 16 + n. */
#define ICH9_PIRQ_GSI(pirq) (16u + (pirq))

/* LPC bridge 8086:2918: PMBASE (0x40) and ACPI_CNTL (0x44) place pm's
 * ports (not decoded until the guest enables them), PIRQA-H routing
 * registers (0x60-0x63, 0x68-0x6b) kept for the firmware (the INTx lines
 * reach the I/O APIC inputs 16-23; the 8259 routing they select is not
 * modelled), the root complex register block (RCBA, 0xf0): 16 KiB of
 * registers that keep what is written. It installs the bus's INTx
 * routing. pm may be NULL. */
struct ich9_lpc;
struct ich9_lpc *ich9_lpc_new(struct dev_host *host, struct pci_bus *bus, struct acpi_pm *pm);
/* What SeaBIOS programs: PM block at pm_base, ACPI enabled, PIRQs routed
 * to ISA IRQs isa_irq[0..3] (A-D and E-H alike), RCBA at 0xfed1c000. */
void ich9_lpc_firmware_setup(struct ich9_lpc *l, uint16_t pm_base, const uint8_t isa_irq[4]);
void ich9_lpc_free(struct ich9_lpc *l);
/* Snapshots: "ich9-lpc@1f,0" (config space, RCRB; loading maps PMBASE and
 * RCBA again) and "ich9-smbus@1f,3" (config space, host registers). */
struct state_writer;
struct state_reader;
void ich9_lpc_save(struct ich9_lpc *l, struct state_writer *w);
int ich9_lpc_load(struct ich9_lpc *l, const struct state_reader *r, char *err, size_t errlen);

/* SMBus controller 8086:2930: its I/O BAR (SMB_BASE, 0x20) and host
 * configuration (0x40); no device answers, so every transaction the
 * guest starts ends with DEV_ERR in the host status. */
struct ich9_smbus;
struct ich9_smbus *ich9_smbus_new(struct dev_host *host, struct pci_bus *bus);
void ich9_smbus_save(struct ich9_smbus *s, struct state_writer *w);
int ich9_smbus_load(struct ich9_smbus *s, const struct state_reader *r, char *err, size_t errlen);
void ich9_smbus_free(struct ich9_smbus *s);

#endif /* VMM_DEVICES_PCI_ICH9_H */
