/* acpi_pm.c — the ACPI PM1a register block the FADT points at: event
 * status (write 1 to clear) and enable at +0/+2, control at +4. Linux's
 * poweroff writes SLP_TYP(_S5) | SLP_EN to the control register; that
 * ends the VM cleanly. The one ACPI event is the power button
 * (acpi_pm_power_button: QMP system_powerdown), which raises the SCI
 * while its status and enable bits are both set. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/dev_host.h"
#include "devices/isa/acpi_pm.h"
#include "state/state.h"

#define ACPI_PM_STATE_VERSION 1

#define PM1_EVT_STS 0
#define PM1_EVT_EN 2
#define PM1_CNT 4
#define PM1_LEN 6
#define CNT_SCI_EN 0x0001
#define CNT_SLP_TYP_SHIFT 10
#define CNT_SLP_EN 0x2000
#define EVT_PWRBTN 0x0100 /* PWRBTN_STS / PWRBTN_EN */
#define EVT_RTC 0x0400	  /* RTC_STS / RTC_EN */
#define EVT_WAK 0x8000	  /* WAK_STS */

struct acpi_pm {
	struct dev_host *host;
	uint16_t base;
	unsigned s5_typ;
	void (*poweroff_fn)(void *opaque);
	void *opaque;
	unsigned s3_typ; /* acpi_pm_set_sleep */
	void (*sleep_fn)(void *opaque);
	void *sleep_opaque;
	pthread_mutex_t lock;
	uint8_t regs[PM1_LEN];	/* little-endian register image */
	int sci_irq;		/* -1 until the power button was first pressed */
	/* Added to the host clock's ticks so the guest's timer goes on from
	 * where a restored machine's stopped (atomic: the timer is lock-free). */
	int64_t tmr_offset;
};

static uint16_t reg16(const struct acpi_pm *pm, unsigned at)
{
	return (uint16_t)(pm->regs[at] | pm->regs[at + 1] << 8);
}

/* The SCI is level-triggered: high while an enabled event is pending. */
static void update_sci(struct acpi_pm *pm)
{
	if (pm->sci_irq >= 0)
		pm->host->irq.set_level(pm->host->irq.opaque, (unsigned)pm->sci_irq,
					reg16(pm, PM1_EVT_STS) & reg16(pm, PM1_EVT_EN) & EVT_PWRBTN);
}

static void pm_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct acpi_pm *pm = opaque;
	uint64_t v = 0;

	pthread_mutex_lock(&pm->lock);
	for (unsigned i = 0; i < size; i++)
		if (off + i < PM1_LEN)
			v |= (uint64_t)pm->regs[off + i] << (8 * i);
	pthread_mutex_unlock(&pm->lock);
	io_data_put(data, size, v);
}

static void pm_write_byte(struct acpi_pm *pm, unsigned at, uint8_t b)
{
	if (at < PM1_EVT_EN)
		pm->regs[at] &= ~b;	/* status: write 1 to clear */
	else if (at < PM1_LEN)
		pm->regs[at] = b;
	pm->regs[PM1_CNT] |= CNT_SCI_EN;
}

static void pm_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct acpi_pm *pm = opaque;
	uint64_t v = io_data_get(data, size);
	bool off_req = false, sleep_req = false;
	uint16_t cnt;

	pthread_mutex_lock(&pm->lock);
	for (unsigned i = 0; i < size; i++)
		pm_write_byte(pm, off + i, v >> (8 * i));
	update_sci(pm);
	cnt = reg16(pm, PM1_CNT);
	if (cnt & CNT_SLP_EN) {
		off_req = ((cnt >> CNT_SLP_TYP_SHIFT) & 7) == pm->s5_typ;
		sleep_req = pm->sleep_fn && ((cnt >> CNT_SLP_TYP_SHIFT) & 7) == pm->s3_typ;
		pm->regs[PM1_CNT + 1] &= ~(CNT_SLP_EN >> 8); /* SLP_EN reads as zero */
	}
	pthread_mutex_unlock(&pm->lock);
	if (off_req)
		pm->poweroff_fn(pm->opaque);
	else if (sleep_req)
		pm->sleep_fn(pm->sleep_opaque);
}

void acpi_pm_set_sleep(struct acpi_pm *pm, unsigned s3_typ, void (*sleep_fn)(void *opaque),
		       void *opaque)
{
	pthread_mutex_lock(&pm->lock);
	pm->s3_typ = s3_typ;
	pm->sleep_fn = sleep_fn;
	pm->sleep_opaque = opaque;
	pthread_mutex_unlock(&pm->lock);
}

bool acpi_pm_rtc_wake(struct acpi_pm *pm)
{
	bool enabled;

	pthread_mutex_lock(&pm->lock);
	enabled = reg16(pm, PM1_EVT_EN) & EVT_RTC;
	if (enabled) {
		pm->regs[PM1_EVT_STS + 1] |= (EVT_RTC | EVT_WAK) >> 8;
		update_sci(pm);
	}
	pthread_mutex_unlock(&pm->lock);
	return enabled;
}

static const struct io_ops pm_ops = {pm_read, pm_write};

/* The ACPI PM timer: 24 bits at 3.579545 MHz, as the PIIX4's
 * (QEMU's); Linux calibrates the TSC against it and kvm-unit-tests time
 * port reads with it. Lock-free: it only reads the host clock. */
#define PM_TMR_HZ 3579545ull

static uint64_t host_ticks(void)
{
	struct timespec ts;
	uint64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return ns / 1000000000ull * PM_TMR_HZ + ns % 1000000000ull * PM_TMR_HZ / 1000000000ull;
}

/* The full-width count the guest's 24-bit timer shows the low bits of. */
static uint64_t guest_ticks(struct acpi_pm *pm)
{
	return host_ticks() + (uint64_t)__atomic_load_n(&pm->tmr_offset, __ATOMIC_RELAXED);
}

static void tmr_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	io_data_put(data, size, (guest_ticks(opaque) & 0xffffff) >> (8 * (off & 3)));
}

static void tmr_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
}

static const struct io_ops tmr_ops = {tmr_read, tmr_write};

static void pm_reset(void *opaque)
{
	struct acpi_pm *pm = opaque;

	pthread_mutex_lock(&pm->lock);
	for (unsigned i = 0; i < PM1_LEN; i++)
		pm->regs[i] = 0;
	pm->regs[PM1_CNT] = CNT_SCI_EN;
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

void acpi_pm_power_button(struct acpi_pm *pm, unsigned sci_irq)
{
	pthread_mutex_lock(&pm->lock);
	pm->sci_irq = (int)sci_irq;
	pm->regs[PM1_EVT_STS + 1] |= EVT_PWRBTN >> 8;
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
}

struct acpi_pm *acpi_pm_new(struct dev_host *host, uint16_t base, unsigned s5_typ,
			    void (*poweroff_fn)(void *opaque), void *opaque)
{
	struct acpi_pm *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->host = host;
	pm->base = base;
	pm->s5_typ = s5_typ;
	pm->poweroff_fn = poweroff_fn;
	pm->opaque = opaque;
	pm->sci_irq = -1;
	pthread_mutex_init(&pm->lock, NULL);
	pm_reset(pm);
	if (iobus_register(host->pio, base, PM1_LEN, &pm_ops, pm, "acpi-pm") < 0 ||
	    iobus_register(host->pio, base + ACPI_PM_TMR_OFF, 4, &tmr_ops, pm, "acpi-pm-tmr") < 0) {
		iobus_unregister(host->pio, base);
		pthread_mutex_destroy(&pm->lock);
		free(pm);
		return NULL;
	}
	dev_on_reset(host, pm_reset, pm);
	return pm;
}

static void unmap_ports(struct acpi_pm *pm)
{
	if (!pm->base)
		return;
	iobus_unregister(pm->host->pio, pm->base);
	iobus_unregister(pm->host->pio, pm->base + ACPI_PM_TMR_OFF);
	pm->base = 0;
}

int acpi_pm_set_base(struct acpi_pm *pm, uint16_t base)
{
	int ret;

	if (base == pm->base)
		return 0;
	unmap_ports(pm);
	if (!base)
		return 0;
	ret = iobus_register(pm->host->pio, base, PM1_LEN, &pm_ops, pm, "acpi-pm");
	if (ret == 0) {
		ret = iobus_register(pm->host->pio, base + ACPI_PM_TMR_OFF, 4, &tmr_ops, pm,
				     "acpi-pm-tmr");
		if (ret < 0)
			iobus_unregister(pm->host->pio, base);
	}
	if (ret == 0)
		pm->base = base;
	return ret;
}

/* Snapshot. The PM timer is derived from the host's monotonic clock,
 * which another host (or this one after a reboot) counts from elsewhere:
 * the saved count is where the destination's timer resumes, so the guest
 * never sees it jump back or leap by the host's uptime. */
void acpi_pm_save(struct acpi_pm *pm, struct state_writer *w)
{
	pthread_mutex_lock(&pm->lock);
	state_begin(w, "acpi-pm", ACPI_PM_STATE_VERSION);
	state_put_bytes(w, "pm1", pm->regs, PM1_LEN);
	state_put_u32(w, "sci-irq", (uint32_t)pm->sci_irq);
	state_put_u64(w, "timer", guest_ticks(pm));
	state_end(w);
	pthread_mutex_unlock(&pm->lock);
}

int acpi_pm_load(struct acpi_pm *pm, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;
	uint8_t regs[PM1_LEN];
	uint32_t irq;
	uint64_t timer;

	if (state_node_open(&n, r, "acpi-pm", ACPI_PM_STATE_VERSION, err, errlen) < 0 ||
	    state_get_bytes(&n, "pm1", regs, sizeof(regs)) < 0 ||
	    state_get_u32(&n, "sci-irq", &irq) < 0 || state_get_u64(&n, "timer", &timer) < 0)
		return -1;
	if (irq != UINT32_MAX && irq >= 24)
		return state_node_fail(&n, "sci-irq %u is no ISA or IOAPIC line", irq);
	if (regs[PM1_CNT + 1] & (CNT_SLP_EN >> 8))
		return state_node_fail(&n, "SLP_EN set, which always reads as zero");
	if (state_node_close(&n) < 0)
		return -1;
	pthread_mutex_lock(&pm->lock);
	memcpy(pm->regs, regs, sizeof(regs));
	pm->sci_irq = (int)irq;
	__atomic_store_n(&pm->tmr_offset, (int64_t)(timer - host_ticks()), __ATOMIC_RELAXED);
	update_sci(pm);
	pthread_mutex_unlock(&pm->lock);
	return 0;
}

void acpi_pm_free(struct acpi_pm *pm)
{
	if (!pm)
		return;
	unmap_ports(pm);
	pthread_mutex_destroy(&pm->lock);
	free(pm);
}
