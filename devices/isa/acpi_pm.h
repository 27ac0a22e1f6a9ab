/* acpi_pm.h — ACPI power management (PM1 registers, PM timer, S3/S5). */
#ifndef VMM_DEVICES_ISA_ACPI_PM_H
#define VMM_DEVICES_ISA_ACPI_PM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/dev_host.h"

/* PM1a_EVT (status/enable, 2+2 bytes) at base, PM1a_CNT (2 bytes) at
 * base + 4; SCI_EN always reads set. A write of SLP_EN with SLP_TYP equal
 * to s5_typ calls poweroff_fn (the machine exits with status 0). */
struct acpi_pm;
struct acpi_pm *acpi_pm_new(struct dev_host *host, uint16_t base, unsigned s5_typ,
			    void (*poweroff_fn)(void *opaque), void *opaque);
/* Snapshot: node "acpi-pm" (PM1 registers, SCI line, the PM timer's
 * count, which resumes from the saved value). */
struct state_writer;
struct state_reader;
void acpi_pm_save(struct acpi_pm *pm, struct state_writer *w);
int acpi_pm_load(struct acpi_pm *pm, const struct state_reader *r, char *err, size_t errlen);
void acpi_pm_free(struct acpi_pm *pm);
/* Move the block's ports to base (0: decode none), as the ICH9 LPC
 * bridge's PMBASE and ACPI_CNTL say. Not from a handler of the port bus
 * itself (a config write through 0xcfc is fine: that port runs unlocked).
 * 0 or -errno (-EEXIST: ports taken; the block then decodes none). */
int acpi_pm_set_base(struct acpi_pm *pm, uint16_t base);

/* Press the power button: PWRBTN_STS is set in PM1 status and, when the
 * guest enabled it (PWRBTN_EN), the SCI (GSI sci_irq) is raised until the
 * guest clears the status. Any thread. */
void acpi_pm_power_button(struct acpi_pm *pm, unsigned sci_irq);
/* The PM timer, 24 bits at 3.579545 MHz, at base + ACPI_PM_TMR_OFF. */
#define ACPI_PM_TMR_OFF 8u
/* ACPI S3: a guest write of SLP_TYP = s3_typ | SLP_EN calls
 * sleep_fn on the vCPU thread. acpi_pm_rtc_wake: the RTC alarm fired while
 * asleep; true (and RTC_STS | WAK_STS set) when the guest enabled it as a
 * wake event (RTC_EN). */
void acpi_pm_set_sleep(struct acpi_pm *pm, unsigned s3_typ, void (*sleep_fn)(void *opaque),
		       void *opaque);
bool acpi_pm_rtc_wake(struct acpi_pm *pm);

#endif /* VMM_DEVICES_ISA_ACPI_PM_H */
