/* fake_machine.c — see fake_machine.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "tests/fuzz/fake_machine.h"
#include "vmm/chardev.h"
#include "vmm/control/monitor.h"
#include "vmm/exit_stats.h"
#include "vmm/irqchip.h"
#include "vmm/migration.h"
#include "vmm/vserial.h"

#define FAKE_RAM (1u << 20)
#define FAKE_CPUS 2
#define FAKE_BREAKS 4

static struct machine *fm;
static enum run_state state = RUN_STATE_RUNNING;
static uint64_t breaks[FAKE_BREAKS];

struct machine *fake_machine(void)
{
	if (fm)
		return fm;
	/* one socket of FAKE_CPUS cores, as the command line resolves -smp */
	static struct vmm_config cfg = {
		.name = "fuzz",
		.smp = FAKE_CPUS,
		.topo = {FAKE_CPUS, 1, 1, FAKE_CPUS, 1, FAKE_CPUS},
	};

	fm = calloc(1, sizeof(*fm));
	fm->cfg = &cfg;
	fm->ram = calloc(1, FAKE_RAM);
	fm->mem.r[0] = (struct guest_ram_region){0, FAKE_RAM, fm->ram};
	fm->mem.n = 1;
	fm->mem.ram_size = FAKE_RAM;
	fm->host.mem = &fm->mem;
	fm->host.loop = evloop_new();
	fm->host.pio = iobus_new("pio");
	fm->host.mmio = iobus_new("mmio");
	fm->ncpus = FAKE_CPUS;
	fm->vcpus = calloc(FAKE_CPUS, sizeof(*fm->vcpus));
	for (unsigned i = 0; i < FAKE_CPUS; i++)
		fm->vcpus[i].m = fm;
	return fm;
}

/* ------------------------------------------------------------- run state */

const char *run_state_name(enum run_state s)
{
	return s == RUN_STATE_RUNNING ? "running" : "paused";
}

enum run_state machine_run_state(const struct machine *m)
{
	return state;
}

void machine_pause(struct machine *m)
{
}

void machine_resume(struct machine *m)
{
}

void machine_user_stop(struct machine *m)
{
	state = RUN_STATE_PAUSED;
}

void machine_stop_for(struct machine *m, enum run_state why)
{
	state = why;
}

void machine_debug_cont(struct machine *m)
{
	state = RUN_STATE_RUNNING;
}

int migration_take_back(struct machine *m, char *err, size_t errlen)
{
	return 0;
}

void machine_host_quit(struct machine *m, const char *reason)
{
}

void machine_host_reset(struct machine *m)
{
}

void machine_host_powerdown(struct machine *m)
{
}

int machine_add_listener(struct machine *m, machine_event_fn fn, void *opaque)
{
	return 0;
}

void machine_event(struct machine *m, const char *name, const char *data_fmt, ...)
{
}

/* ------------------------------------------------------------ debugging */

int machine_break_insert(struct machine *m, uint64_t addr)
{
	for (int i = 0; i < FAKE_BREAKS; i++) {
		if (!breaks[i] || breaks[i] == addr) {
			breaks[i] = addr;
			return i;
		}
	}
	return -ENOSPC;
}

int machine_break_remove(struct machine *m, uint64_t addr, bool all)
{
	int rc = -ENOENT;

	for (int i = 0; i < FAKE_BREAKS; i++) {
		if (all || breaks[i] == addr) {
			rc = breaks[i] ? 0 : rc;
			breaks[i] = 0;
		}
	}
	return rc;
}

int machine_stepi(struct machine *m, uint64_t *pc)
{
	*pc = 0;
	return state == RUN_STATE_RUNNING ? -EBUSY : 0;
}

int machine_step_cpu(struct machine *m, unsigned cpu, uint64_t *pc)
{
	return machine_stepi(m, pc);
}

/* ----------------------------------------------------------------- vCPUs */

void vcpu_dump_state(struct vcpu *v, FILE *out)
{
	fputs("RAX=0000000000000000\n", out);
}

int vcpu_translate(struct vcpu *v, uint64_t gva, uint64_t *gpa)
{
	*gpa = gva;
	return gva < FAKE_RAM ? 0 : -EFAULT;
}

int vcpu_read_linear(struct vcpu *v, uint64_t linear, void *buf, size_t n)
{
	return guest_mem_read(&v->m->mem, linear, buf, n) < 0 ? -1 : 0;
}

int vcpu_write_linear(struct vcpu *v, uint64_t linear, const void *buf, size_t n)
{
	return guest_mem_write(&v->m->mem, linear, buf, n) < 0 ? -1 : 0;
}

int kvm_vcpu_get_regs(struct kvm_vcpu *vcpu, struct kvm_regs *regs)
{
	memset(regs, 0, sizeof(*regs));
	return 0;
}

int kvm_vcpu_set_regs(struct kvm_vcpu *vcpu, const struct kvm_regs *regs)
{
	return 0;
}

int kvm_vcpu_get_sregs(struct kvm_vcpu *vcpu, struct kvm_sregs *sregs)
{
	memset(sregs, 0, sizeof(*sregs));
	return 0;
}

int kvm_vcpu_set_sregs(struct kvm_vcpu *vcpu, const struct kvm_sregs *sregs)
{
	return 0;
}

int kvm_vcpu_get_fpu(struct kvm_vcpu *vcpu, struct kvm_fpu *fpu)
{
	memset(fpu, 0, sizeof(*fpu));
	return 0;
}

int kvm_vcpu_set_fpu(struct kvm_vcpu *vcpu, const struct kvm_fpu *fpu)
{
	return 0;
}

/* --------------------------------------------------- chardevs and the HMP */

int chardev_add_frontend(struct chardev *c, const struct chardev_frontend *fe)
{
	return 0;
}

void chardev_write(struct chardev *c, const void *buf, size_t len)
{
}

bool chardev_is_tty(const struct chardev *c)
{
	return false;
}

/* The fake machine has no chardevs: ringbuf-read/-write find no device. */
/* balloon.c's creation is linked, never reached: there is no board. */
struct pci_bus *board_device_bus(struct machine *m, const char *bus)
{
	return m->pci;
}

struct chardev *board_find_chardev(struct machine *m, const char *id)
{
	return NULL;
}

/* ... nor virtio-serial ports. */
struct chardev *vmm_vserial_chardev(struct vmm_vserial *v, unsigned i, const char **label)
{
	return NULL;
}

bool vmm_vserial_port_open(struct vmm_vserial *v, unsigned i)
{
	return false;
}

bool chardev_is_ringbuf(const struct chardev *c)
{
	return false;
}

size_t chardev_ringbuf_read(struct chardev *c, uint8_t *out, size_t max)
{
	return 0;
}

/* The machine's views and commands in the monitor's table: the fake has
 * no board (board_ready stays false), so the table never offers them. */
#define FAKE_VIEW(name)                                                                            \
	void name(void *opaque, FILE *out)                                                         \
	{                                                                                          \
	}
FAKE_VIEW(board_info_pci)
FAKE_VIEW(board_info_block)
FAKE_VIEW(net_info_network)
FAKE_VIEW(net_info_usernet)
FAKE_VIEW(vmm_wlan_info)
FAKE_VIEW(vmm_wlan_info_regdomain)
FAKE_VIEW(irqchip_info_pic)
FAKE_VIEW(irqchip_info_ioapic)
FAKE_VIEW(irqchip_info_irq)
FAKE_VIEW(hmp_info_version)
FAKE_VIEW(hmp_info_kvm)
FAKE_VIEW(hmp_info_name)
FAKE_VIEW(hmp_info_uuid)
FAKE_VIEW(hmp_info_chardev)
FAKE_VIEW(hmp_info_qtree)

void irqchip_info_lapic(void *opaque, const char *arg, FILE *out)
{
}

void exit_stats_print(FILE *out, unsigned max_rows)
{
}

void vmm_wlan_cmd(void *opaque, int argc, char **argv, FILE *out)
{
}

void hmp_gdbserver(void *opaque, int argc, char **argv, FILE *out)
{
}

void hmp_dump_guest_memory(struct machine *m, int argc, char **argv, FILE *out)
{
}

/* The real one writes files: the fuzzer must not. */
void hmp_save_memory(struct machine *m, int argc, char **argv, FILE *out, bool virt)
{
}

void hmp_ringbuf(struct machine *m, int argc, char **argv, FILE *out, bool read)
{
}

/* The NIC commands (vmm/net.c, not linked): no NICs in the fake. */
void hmp_hostfwd(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	fputs("no NIC\n", out);
}

void hmp_set_link(struct machine *m, int argc, char **argv, FILE *out)
{
	fputs("no NIC\n", out);
}

/* Hot-plug (vmm/hotplug.c, not linked): the fake has no root ports, so
 * every request is refused the way an unknown bus or device is. */
int machine_device_add(struct machine *m, const char *driver, const char *props, char *err,
		       size_t errlen)
{
	snprintf(err, errlen, "Bus not found");
	return -1;
}

int machine_device_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, "Device '%s' not found", id);
	return -ENOENT;
}

int machine_blockdev_add(struct machine *m, const char *json, char *err, size_t errlen)
{
	snprintf(err, errlen, "no drives in the fake");
	return -1;
}

int machine_blockdev_del(struct machine *m, const char *node, char *err, size_t errlen)
{
	snprintf(err, errlen, "Failed to find node with node-name='%s'", node);
	return -1;
}

int machine_netdev_add(struct machine *m, const char *val, char *err, size_t errlen)
{
	snprintf(err, errlen, "no network in the fake");
	return -1;
}

int machine_netdev_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, "Device '%s' not found", id);
	return -1;
}

void hmp_netdev(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	fputs("Error: no network\n", out);
}

void hmp_device_add(struct machine *m, int argc, char **argv, FILE *out)
{
	fputs("Error: no root ports\n", out);
}

void hmp_device_del(struct machine *m, int argc, char **argv, FILE *out)
{
	fputs("Error: no devices\n", out);
}

void hmp_drive_add(struct machine *m, int argc, char **argv, FILE *out)
{
	fputs("Error: no drives\n", out);
}

int machine_object_add(struct machine *m, const char *type, const char *props, char *err,
		       size_t errlen)
{
	snprintf(err, errlen, "There is no guest");
	return -1;
}

int machine_object_del(struct machine *m, const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, "object '%s' not found", id);
	return -ENOENT;
}

void hmp_object(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	fputs("Error: There is no guest\n", out);
}

/* Watchpoints share the fake's four debug registers with breakpoints. */
int machine_watch_insert(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type)
{
	return len && !(addr % len) ? machine_break_insert(m, addr) : -EINVAL;
}

int machine_watch_remove(struct machine *m, uint64_t addr, unsigned len, enum kvm_hw_bp_type type)
{
	return machine_break_remove(m, addr, false);
}

int machine_debug_set_sw_bp(struct machine *m, bool on)
{
	return 0;
}

/* chardev-add reaches here with -chardev's text: a pty answers a path. */
int machine_chardev_add(struct machine *m, const char *opts, const char **pty, char *err,
			size_t errlen)
{
	*pty = !strncmp(opts, "pty,", 4) ? "/dev/pts/0" : NULL;
	if (!strstr(opts, "id=")) {
		snprintf(err, errlen, "Parameter 'id' is missing");
		return -1;
	}
	return 0;
}

int machine_chardev_remove(struct machine *m, const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, "Chardev '%s' not found", id);
	return -1;
}

bool machine_chardev_exists(struct machine *m, const char *id)
{
	return false;
}

void hmp_chardev(struct machine *m, int argc, char **argv, FILE *out, bool add)
{
	fputs("Error: There is no guest\n", out);
}
