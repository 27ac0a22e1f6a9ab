/* board.c — the PC board: every device, created in init order (kvmtool
 * style). Add a device with one line here and its constructor in
 * devices/devices.h. */
#include <stdio.h>

#include "firmware/firmware.h"
#include "vmm/chardev.h"
#include "vmm/machine.h"
#include "vmm/monitor.h"

static const uint16_t com_base[CLI_MAX_SERIALS] = {0x3f8, 0x2f8, 0x3e8, 0x2e8};
static const unsigned com_irq[CLI_MAX_SERIALS] = {4, 3, 4, 3};

/* serial <-> chardev glue */
static void uart_out(void *opaque, const uint8_t *buf, size_t len)
{
	chardev_write(opaque, buf, len);
}

static void uart_rx_ready(void *opaque)
{
	chardev_rx_ready(opaque);
}

static size_t uart_can_receive(void *opaque)
{
	return serial_can_receive(opaque);
}

static void uart_receive(void *opaque, const uint8_t *buf, size_t len)
{
	serial_receive(opaque, buf, len);
}

static void quit_from_mux(void *opaque)
{
	machine_request_exit(opaque, 0);
}

static int add_serials(struct machine *m, char *err, size_t errlen)
{
	for (unsigned i = 0; i < m->cfg->n_serial; i++) {
		const struct chardev_spec *spec = &m->cfg->serial[i];
		struct char_backend be;
		struct chardev_frontend fe;

		if (spec->kind == CHARDEV_NONE)
			continue;
		m->serial_chr[i] = chardev_new(spec, m->host.loop, err, errlen);
		if (!m->serial_chr[i])
			return -1;
		be = (struct char_backend){uart_out, uart_rx_ready, m->serial_chr[i]};
		m->serial[i] = serial_new(&m->host, com_base[i], com_irq[i], &be);
		if (!m->serial[i]) {
			snprintf(err, errlen, "serial port %u: cannot register", i);
			return -1;
		}
		fe = (struct chardev_frontend){uart_can_receive, uart_receive, NULL, m->serial[i]};
		chardev_add_frontend(m->serial_chr[i], &fe);
		chardev_set_quit(m->serial_chr[i], quit_from_mux, m);
		if (spec->kind == CHARDEV_MON_STDIO && !m->monitor[1])
			m->monitor[1] = monitor_new(m, m->serial_chr[i]);
		chardev_start(m->serial_chr[i]);
	}
	return 0;
}

static void debug_exit_fn(void *opaque, int status)
{
	machine_request_exit(opaque, status);
}

/* ACPI S5 from the guest (Linux `poweroff`): a clean exit with status 0. */
static void acpi_poweroff_fn(void *opaque)
{
	machine_request_exit(opaque, 0);
}

static void i8042_reset_fn(void *opaque)
{
	machine_request_reset(opaque);
}

static int add_monitor(struct machine *m, char *err, size_t errlen)
{
	const struct chardev_spec *spec = &m->cfg->monitor;

	if (!m->cfg->monitor_given || spec->kind == CHARDEV_NONE)
		return 0;
	m->monitor_chr = chardev_new(spec, m->host.loop, err, errlen);
	if (!m->monitor_chr)
		return -1;
	m->monitor[0] = monitor_new(m, m->monitor_chr);
	chardev_start(m->monitor_chr);
	return 0;
}

int board_init(struct machine *m, char *err, size_t errlen)
{
	m->i8042 = i8042_new(&m->host, i8042_reset_fn, m);
	if (port80_new(&m->host) < 0 || !m->i8042) {
		snprintf(err, errlen, "cannot register legacy ports");
		return -1;
	}
	m->rtc = rtc_new(&m->host);
	if (!m->rtc) {
		snprintf(err, errlen, "cannot create the CMOS RTC");
		return -1;
	}
	rtc_set_pc_config(m->rtc, m->layout.below_4g, m->layout.above_4g, m->ncpus);
	/* The FADT built by firmware/acpi.c points the guest here. */
	m->acpi_pm = acpi_pm_new(&m->host, ACPI_PM_BASE, ACPI_S5_SLP_TYP, acpi_poweroff_fn, m);
	if (!m->acpi_pm) {
		snprintf(err, errlen, "cannot create the ACPI PM block");
		return -1;
	}
	/* PC platform: PCI, IDE, fw_cfg go here. */
	if (add_serials(m, err, errlen) < 0 || add_monitor(m, err, errlen) < 0)
		return -1;
	for (unsigned i = 0; i < m->cfg->n_devices; i++) {
		const struct device_spec *d = &m->cfg->devices[i];

		m->debug_exit[i] = debug_exit_new(&m->host, d->iobase, d->iosize, debug_exit_fn, m);
		if (!m->debug_exit[i]) {
			snprintf(err, errlen, "-device isa-debug-exit: port %#x is taken", d->iobase);
			return -1;
		}
	}
	return 0;
}
