/* monitor.c — HMP-style monitor. Every command is a row of cmds[], every
 * `info` subcommand a row of infos[]: the control plane's one table of
 * what the monitor offers. The machine's modules only provide the
 * functions (declared in machine.h, irqchip.h, exit_stats.h); a row's
 * `present` says whether this machine has the thing (its network, its
 * WLAN), so no module registers anything at run time. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "devices/dev_host.h"
#include "vmm/control/monitor.h"
#include "vmm/exit_stats.h"
#include "vmm/irqchip.h"
#include "vmm/migration.h"

#define LINE_MAX_LEN 256
#define MAX_ARGS 8
#define MAX_EXTRA_INFO 8

struct monitor {
	struct machine *m;
	struct chardev *chr;
	char line[LINE_MAX_LEN];
	size_t len;
	bool greeted;
};

/* `info` views a test program adds (tests/integration/sandbox_hooks.c);
 * the product's views are the rows of infos[] below. */
struct extra_info {
	const char *name, *help;
	void (*fn)(void *opaque, FILE *out);
	void *opaque;
};
static struct extra_info extra_infos[MAX_EXTRA_INFO];
static unsigned n_extra_infos;

int monitor_add_info(const char *name, const char *help, void (*fn)(void *opaque, FILE *out),
		     void *opaque)
{
	if (n_extra_infos == MAX_EXTRA_INFO)
		return -ENOSPC;
	extra_infos[n_extra_infos++] = (struct extra_info){name, help, fn, opaque};
	return 0;
}

/* ------------------------------------------------------------ x / xp */

int monitor_parse_fmt(const char *s, struct mon_fmt *f)
{
	*f = (struct mon_fmt){1, 'x', 4};
	if (*s != '/')
		return -1;
	s++;
	if (isdigit((unsigned char)*s)) {
		unsigned long n = strtoul(s, (char **)&s, 10);

		if (n == 0 || n > 4096)
			return -1;
		f->count = (unsigned)n;
	}
	for (; *s; s++) {
		if (strchr("xduoc", *s))
			f->format = *s;
		else if (*s == 'b')
			f->size = 1;
		else if (*s == 'h')
			f->size = 2;
		else if (*s == 'w')
			f->size = 4;
		else if (*s == 'g')
			f->size = 8;
		else
			return -1;
	}
	if (f->format == 'c')
		f->size = 1;
	return 0;
}

static int parse_addr(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static void print_value(FILE *out, const struct mon_fmt *f, uint64_t v)
{
	switch (f->format) {
	case 'd':
		fprintf(out, " %lld", f->size == 8 ? (long long)v
			: (long long)((int64_t)(v << (64 - 8 * f->size)) >> (64 - 8 * f->size)));
		break;
	case 'u':
		fprintf(out, " %llu", (unsigned long long)v);
		break;
	case 'o':
		fprintf(out, " %#llo", (unsigned long long)v);
		break;
	case 'c':
		fprintf(out, " '%c'", isprint((int)v) ? (int)v : '.');
		break;
	default:
		fprintf(out, " 0x%0*llx", (int)f->size * 2, (unsigned long long)v);
	}
}

static void memory_dump(struct monitor *mon, int argc, char **argv, FILE *out, bool virt)
{
	struct mon_fmt f;
	uint64_t addr;
	unsigned per_line;

	if (argc != 3 || monitor_parse_fmt(argv[1], &f) < 0 || parse_addr(argv[2], &addr) < 0) {
		fprintf(out, "usage: %s /[count][xduoc][bhwg] ADDRESS\n", argv[0]);
		return;
	}
	per_line = 16 / f.size;
	for (unsigned i = 0; i < f.count; i++) {
		uint64_t a = addr + (uint64_t)i * f.size, gpa = a, v = 0;

		if (virt && vcpu_translate(&mon->m->vcpus[0], a, &gpa) < 0) {
			fprintf(out, "\nCannot access memory at virtual address %#llx\n",
				(unsigned long long)a);
			return;
		}
		if (guest_mem_read(&mon->m->mem, gpa, &v, f.size) < 0) {
			fprintf(out, "\nCannot access memory at physical address %#llx\n",
				(unsigned long long)gpa);
			return;
		}
		if (i % per_line == 0)
			fprintf(out, "%s%016llx:", i ? "\n" : "", (unsigned long long)a);
		print_value(out, &f, v);
	}
	fprintf(out, "\n");
}

/* ------------------------------------------------------------ commands */

static void cmd_x(struct monitor *mon, int argc, char **argv, FILE *out)
{
	memory_dump(mon, argc, argv, out, true);
}

static void cmd_xp(struct monitor *mon, int argc, char **argv, FILE *out)
{
	memory_dump(mon, argc, argv, out, false);
}

static void cmd_stop(struct monitor *mon, int argc, char **argv, FILE *out)
{
	machine_user_stop(mon->m);
}

static void cmd_cont(struct monitor *mon, int argc, char **argv, FILE *out)
{
	char why[256];

	if (migration_take_back(mon->m, why, sizeof(why)) < 0) {
		fprintf(out, "Error: %s\n", why);
		return;
	}
	machine_debug_cont(mon->m);
}

/* break [ADDRESS]: a hardware breakpoint, or the list. */
static void cmd_break(struct monitor *mon, int argc, char **argv, FILE *out)
{
	const struct machine_debug *d;
	uint64_t addr;
	int i;

	if (argc > 2 || (argc == 2 && parse_addr(argv[1], &addr) < 0)) {
		fprintf(out, "usage: break [ADDRESS]\n");
		return;
	}
	d = &mon->m->debug;
	if (argc == 1) {
		for (unsigned b = 0; b < d->n_bp; b++)
			fprintf(out, "breakpoint %u at %#llx\n", b, (unsigned long long)d->bp[b]);
		if (!d->n_bp)
			fprintf(out, "no breakpoints\n");
		return;
	}
	i = machine_break_insert(mon->m, addr);
	if (i == -ENOSPC)
		fprintf(out, "break: all %d hardware breakpoints are in use\n",
			MACHINE_MAX_BREAKPOINTS);
	else if (i < 0)
		fprintf(out, "break: KVM refused the breakpoint\n");
	else
		fprintf(out, "breakpoint %d at %#llx\n", i, (unsigned long long)addr);
}

/* delete [ADDRESS]: one breakpoint, or all. */
static void cmd_delete(struct monitor *mon, int argc, char **argv, FILE *out)
{
	uint64_t addr = 0;

	if (argc > 2 || (argc == 2 && parse_addr(argv[1], &addr) < 0)) {
		fprintf(out, "usage: delete [ADDRESS]\n");
		return;
	}
	if (machine_break_remove(mon->m, addr, argc == 1) == -ENOENT && argc == 2)
		fprintf(out, "delete: no breakpoint at %#llx\n", (unsigned long long)addr);
}

static void cmd_stepi(struct monitor *mon, int argc, char **argv, FILE *out)
{
	uint64_t pc;
	int ret = machine_stepi(mon->m, &pc);

	if (ret == -EBUSY)
		fprintf(out, "stepi: the machine is running (stop it first)\n");
	else if (ret == -ETIMEDOUT)
		fprintf(out, "stepi: vCPU 0 did not stop within 2 s (halted?)\n");
	else if (ret < 0)
		fprintf(out, "stepi: KVM refused single step\n");
	else
		fprintf(out, "pc=%#llx\n", (unsigned long long)pc);
}

static void cmd_reset(struct monitor *mon, int argc, char **argv, FILE *out)
{
	machine_host_reset(mon->m);
}

static void cmd_quit(struct monitor *mon, int argc, char **argv, FILE *out)
{
	machine_host_quit(mon->m, "host-qmp-quit");
}

static void cmd_powerdown(struct monitor *mon, int argc, char **argv, FILE *out)
{
	machine_host_powerdown(mon->m);
}

static void cmd_memsave(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_save_memory(mon->m, argc, argv, out, true);
}

static void cmd_pmemsave(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_save_memory(mon->m, argc, argv, out, false);
}

static void cmd_hostfwd_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_hostfwd(mon->m, argc, argv, out, true);
}

static void cmd_hostfwd_remove(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_hostfwd(mon->m, argc, argv, out, false);
}

static void cmd_set_link(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_set_link(mon->m, argc, argv, out);
}

static void cmd_device_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_device_add(mon->m, argc, argv, out);
}

static void cmd_device_del(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_device_del(mon->m, argc, argv, out);
}

static void cmd_chardev_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_chardev(mon->m, argc, argv, out, true);
}

static void cmd_chardev_remove(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_chardev(mon->m, argc, argv, out, false);
}

static void cmd_netdev_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_netdev(mon->m, argc, argv, out, true);
}

static void cmd_netdev_del(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_netdev(mon->m, argc, argv, out, false);
}

static void cmd_object_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_object(mon->m, argc, argv, out, true);
}

static void cmd_object_del(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_object(mon->m, argc, argv, out, false);
}

static void cmd_drive_add(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_drive_add(mon->m, argc, argv, out);
}

static void cmd_balloon(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_balloon(mon->m, argc, argv, out);
}

static void cmd_wlan(struct monitor *mon, int argc, char **argv, FILE *out)
{
	vmm_wlan_cmd(mon->m, argc, argv, out);
}

static void cmd_dump_guest_memory(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_dump_guest_memory(mon->m, argc, argv, out);
}

static void cmd_gdbserver(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_gdbserver(mon->m, argc, argv, out);
}

/* What this machine has (a row without `present` is always offered). The
 * machine is complete before a monitor reads its first line. */
static bool has_board(const struct machine *m)
{
	return m && m->board_ready;
}

static bool has_network(const struct machine *m)
{
	return has_board(m) && m->cfg->n_netdevs;
}

static bool has_wlan(const struct machine *m)
{
	return m && m->wlan;
}

static struct machine *machine_of(const struct monitor *mon)
{
	return mon ? mon->m : NULL;
}

static void cmd_change(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_change(mon->m, argc, argv, out);
}

static void cmd_eject(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_eject(mon->m, argc, argv, out);
}

static void cmd_ringbuf_write(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_ringbuf(machine_of(mon), argc, argv, out, false);
}

static void cmd_ringbuf_read(struct monitor *mon, int argc, char **argv, FILE *out)
{
	hmp_ringbuf(machine_of(mon), argc, argv, out, true);
}

static void cmd_help(struct monitor *mon, int argc, char **argv, FILE *out);
static void cmd_info(struct monitor *mon, int argc, char **argv, FILE *out);

static const struct {
	const char *name, *args, *help;
	void (*fn)(struct monitor *mon, int argc, char **argv, FILE *out);
	bool (*present)(const struct machine *m);
} cmds[] = {
	{"help", "", "list the commands", cmd_help, NULL},
	{"info", "SUBCOMMAND", "show machine state (info with no argument lists them)", cmd_info,
	 NULL},
	{"x", "/fmt ADDR", "dump virtual memory (through the vCPU 0 page tables)", cmd_x, NULL},
	{"xp", "/fmt ADDR", "dump physical memory", cmd_xp, NULL},
	{"stop", "", "pause the vCPUs", cmd_stop, NULL},
	{"cont", "", "resume the vCPUs", cmd_cont, NULL},
	{"c", "", "same as cont", cmd_cont, NULL},
	{"break", "[ADDRESS]", "hardware breakpoint at a linear address (or list them)", cmd_break,
	 NULL},
	{"delete", "[ADDRESS]", "remove a breakpoint (or all)", cmd_delete, NULL},
	{"stepi", "", "stopped: run vCPU 0 for one instruction", cmd_stepi, NULL},
	{"system_reset", "", "reset the machine", cmd_reset, NULL},
	{"system_powerdown", "", "press the ACPI power button", cmd_powerdown, NULL},
	{"change", "DEVICE FILE", "put a new medium in a CD-ROM drive", cmd_change, has_board},
	{"eject", "[-f] DEVICE", "eject a CD-ROM drive's medium (-f: even if locked)", cmd_eject,
	 has_board},
	{"memsave", "ADDR SIZE FILE", "save virtual memory (vCPU 0) to a file", cmd_memsave, NULL},
	{"pmemsave", "ADDR SIZE FILE", "save physical memory to a file", cmd_pmemsave, NULL},
	{"hostfwd_add", "[netdev_id] [tcp|udp]:[hostaddr]:hostport-[guestaddr]:guestport",
	 "forward a host port to the guest (user networking)", cmd_hostfwd_add, NULL},
	{"hostfwd_remove", "[netdev_id] [tcp|udp]:[hostaddr]:hostport",
	 "remove a host port forward", cmd_hostfwd_remove, NULL},
	{"set_link", "NAME on|off", "change a NIC's link status", cmd_set_link, NULL},
	{"device_add", "DRIVER,prop=value,...",
	 "hot-plug a virtio-blk/-net/-rng-pci (bus=a free pcie-root-port) or a virtserialport",
	 cmd_device_add, has_board},
	{"device_del", "ID", "hot-unplug a device (the guest releases it)", cmd_device_del,
	 has_board},
	{"drive_add", "DUMMY file=PATH,if=none,id=ID", "add a drive for device_add", cmd_drive_add,
	 has_board},
	{"netdev_add", "user|tap,id=ID,...", "add a network backend for device_add", cmd_netdev_add,
	 has_board},
	{"netdev_del", "ID", "remove a network backend no NIC uses", cmd_netdev_del, has_board},
	{"chardev-add", "BACKEND,id=ID,...",
	 "add a chardev (socket, pty, file, null) for device_add", cmd_chardev_add, has_board},
	{"chardev-remove", "ID", "remove a chardev no device uses", cmd_chardev_remove, has_board},
	{"object_add", "rng-random|rng-builtin,id=ID[,filename=PATH]",
	 "add an rng source for device_add virtio-rng-pci", cmd_object_add, has_board},
	{"object_del", "ID", "remove an rng source (its devices keep theirs)", cmd_object_del,
	 has_board},
	{"balloon", "MiB", "ask the guest's balloon driver to leave it this much RAM", cmd_balloon,
	 has_board},
	{"ringbuf_write", "DEVICE DATA", "write DATA into a -chardev ringbuf", cmd_ringbuf_write,
	 NULL},
	{"ringbuf_read", "DEVICE SIZE", "read (and consume) up to SIZE bytes of a -chardev ringbuf",
	 cmd_ringbuf_read, NULL},
	{"quit", "", "exit vmm", cmd_quit, NULL},
	{"q", "", "same as quit", cmd_quit, NULL},
	{"wlan_country", "XX", "set the regulatory domain of every radio", cmd_wlan, has_wlan},
	{"wlan_regdb_reload", "[PATH]", "re-read regulatory.db", cmd_wlan, has_wlan},
	{"wlan_radar", "FREQ", "a radar event on FREQ MHz (closes the channel)", cmd_wlan,
	 has_wlan},
	{"wlan_enforce", "on|off", "regulatory enforcement on the media", cmd_wlan, has_wlan},
	{"dump-guest-memory", "FILE", "write RAM and the vCPUs' registers as an ELF core file",
	 cmd_dump_guest_memory, has_board},
	{"gdbserver", "[tcp:[HOST]:PORT|unix:PATH|none]",
	 "start the gdbstub (tcp::1234) or stop it", cmd_gdbserver, has_board},
};

static bool cmd_present(size_t i, const struct monitor *mon)
{
	return !cmds[i].present || cmds[i].present(machine_of(mon));
}

static void info_exits(void *opaque, FILE *out)
{
	exit_stats_print(out, UINT32_MAX);
}

static void info_registers(void *opaque, FILE *out);
static void info_cpus(void *opaque, FILE *out);
static void info_mtree(void *opaque, FILE *out);
static void info_status(void *opaque, FILE *out);

/* `info` lists the views in the order they came up in the machine: the
 * interrupt controllers, the exit counters, the network and the WLAN, then
 * the monitor's own views and the board's PCI and disks, or, when the
 * first monitor opened after the board was complete (QMP's
 * human-monitor-command), those two groups the other way round. */
enum info_group { INFO_MACHINE, INFO_MONITOR, INFO_BOARD };

static const struct {
	const char *name, *help;
	void (*fn)(void *opaque, FILE *out);
	void (*fn_arg)(void *opaque, const char *arg, FILE *out);
	bool (*present)(const struct machine *m);
	enum info_group group;
} infos[] = {
	{"pic", "the 8259 interrupt controllers", irqchip_info_pic, NULL, has_board, INFO_MACHINE},
	{"ioapic", "the I/O APIC's redirection table", irqchip_info_ioapic, NULL, has_board,
	 INFO_MACHINE},
	{"lapic", "[CPU] a local APIC's registers (default CPU 0)", NULL, irqchip_info_lapic,
	 has_board, INFO_MACHINE},
	{"irq", "interrupts per line (userspace irqchips)", irqchip_info_irq, NULL, has_board,
	 INFO_MACHINE},
	{"exits", "I/O and MMIO exits by address, busiest first", info_exits, NULL, has_board,
	 INFO_MACHINE},
	{"network", "the NICs and their backends", net_info_network, NULL, has_network,
	 INFO_MACHINE},
	{"usernet", "user networking: flows and counters", net_info_usernet, NULL, has_network,
	 INFO_MACHINE},
	{"wlan", "the radio media, their radios and drops per reason", vmm_wlan_info, NULL,
	 has_wlan, INFO_MACHINE},
	{"regdomain", "the WLAN regulatory domain (as `iw reg get`)", vmm_wlan_info_regdomain, NULL,
	 has_wlan, INFO_MACHINE},
	{"registers", "the vCPUs' registers", info_registers, NULL, NULL, INFO_MONITOR},
	{"cpus", "the vCPUs and their threads", info_cpus, NULL, NULL, INFO_MONITOR},
	{"mtree", "the memory and I/O maps", info_mtree, NULL, NULL, INFO_MONITOR},
	{"status", "whether the vCPUs run, and why not", info_status, NULL, NULL, INFO_MONITOR},
	/* these need no board: -machine none answers them too, as QEMU does */
	{"version", "the vmm version", hmp_info_version, NULL, NULL, INFO_MONITOR},
	{"kvm", "whether KVM is in use (always)", hmp_info_kvm, NULL, NULL, INFO_MONITOR},
	{"name", "the guest name (-name)", hmp_info_name, NULL, NULL, INFO_MONITOR},
	{"uuid", "the machine UUID", hmp_info_uuid, NULL, NULL, INFO_MONITOR},
	{"chardev", "the character devices", hmp_info_chardev, NULL, NULL, INFO_MONITOR},
	{"qtree", "the device tree: PCI and ISA devices", hmp_info_qtree, NULL, has_board,
	 INFO_MONITOR},
	{"pci", "the PCI devices, their BARs and MSI-X state", board_info_pci, NULL, has_board,
	 INFO_BOARD},
	{"block", "the disks: file, size, cache mode, request counters", board_info_block, NULL,
	 has_board, INFO_BOARD},
	{"balloon", "the guest's RAM minus the balloon, in MiB", hmp_info_balloon, NULL, has_board,
	 INFO_BOARD},
};
#define N_INFOS (sizeof(infos) / sizeof(infos[0]))

/* Set by the first monitor_new: did it open while the board was built? */
static bool monitor_before_board = true;

/* No monitor, no machine: the views need one. */
static bool info_present(size_t i, const struct monitor *mon)
{
	const struct machine *m = machine_of(mon);

	return m && (!infos[i].present || infos[i].present(m));
}

static void list_group(const struct monitor *mon, enum info_group g, FILE *out)
{
	for (size_t i = 0; i < N_INFOS; i++)
		if (infos[i].group == g && info_present(i, mon))
			fprintf(out, "info %s -- %s\n", infos[i].name, infos[i].help);
}

static void cmd_help(struct monitor *mon, int argc, char **argv, FILE *out)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmd_present(i, mon))
			fprintf(out, "%s %s -- %s\n", cmds[i].name, cmds[i].args, cmds[i].help);
}

static void cmd_info(struct monitor *mon, int argc, char **argv, FILE *out)
{
	if (argc < 2) {
		for (unsigned i = 0; i < n_extra_infos; i++)
			fprintf(out, "info %s -- %s\n", extra_infos[i].name, extra_infos[i].help);
		list_group(mon, INFO_MACHINE, out);
		list_group(mon, monitor_before_board ? INFO_MONITOR : INFO_BOARD, out);
		list_group(mon, monitor_before_board ? INFO_BOARD : INFO_MONITOR, out);
		return;
	}
	for (unsigned i = 0; i < n_extra_infos; i++) {
		if (!strcmp(extra_infos[i].name, argv[1])) {
			extra_infos[i].fn(extra_infos[i].opaque, out);
			return;
		}
	}
	for (size_t i = 0; i < N_INFOS; i++) {
		if (!strcmp(infos[i].name, argv[1]) && info_present(i, mon)) {
			if (infos[i].fn_arg)
				infos[i].fn_arg(mon->m, argc > 2 ? argv[2] : NULL, out);
			else
				infos[i].fn(mon->m, out);
			return;
		}
	}
	fprintf(out, "unknown info subcommand '%s' (try: info)\n", argv[1]);
}

/* Built-in `info` subcommands; vCPU state needs the vCPUs parked. */
static void info_registers(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	machine_pause(m);
	for (unsigned i = 0; i < m->ncpus; i++)
		vcpu_dump_state(&m->vcpus[i], out);
	machine_resume(m);
}

static void info_cpus(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	machine_pause(m);
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct kvm_regs r;

		if (kvm_vcpu_get_regs(&m->vcpus[i].kvm, &r) < 0)
			r.rip = 0;
		fprintf(out, "%c CPU #%u: pc=0x%016llx thread_id=%d\n", i ? ' ' : '*', i,
			(unsigned long long)r.rip, (int)m->vcpus[i].tid);
	}
	machine_resume(m);
}

/* QEMU's wording: "VM status: running", "VM status: paused (debug)". */
static void info_status(void *opaque, FILE *out)
{
	enum run_state s = machine_run_state(opaque);

	if (s == RUN_STATE_RUNNING || s == RUN_STATE_PAUSED)
		fprintf(out, "VM status: %s\n", run_state_name(s));
	else
		fprintf(out, "VM status: paused (%s)\n", run_state_name(s));
}

static void mtree_region(const struct io_region *r, void *arg)
{
	fprintf(arg, "  %016llx-%016llx (prio 0, i/o): %s\n", (unsigned long long)r->base,
		(unsigned long long)(r->base + r->len - 1), r->name ? r->name : "?");
}

static void info_mtree(void *opaque, FILE *out)
{
	struct machine *m = opaque;

	fprintf(out, "address-space: memory\n");
	for (unsigned i = 0; i < m->mem.n; i++)
		fprintf(out, "  %016llx-%016llx (prio 0, ram): pc.ram\n",
			(unsigned long long)m->mem.r[i].gpa,
			(unsigned long long)(m->mem.r[i].gpa + m->mem.r[i].size - 1));
	iobus_foreach(m->host.mmio, mtree_region, out);
	fprintf(out, "\naddress-space: I/O\n");
	iobus_foreach(m->host.pio, mtree_region, out);
}

/* --------------------------------------------------------- line input */

static int split(char *line, char **argv)
{
	int argc = 0;

	for (char *tok = strtok(line, " \t"); tok && argc < MAX_ARGS; tok = strtok(NULL, " \t"))
		argv[argc++] = tok;
	return argc;
}

void monitor_execute(struct monitor *mon, const char *line, FILE *out)
{
	char buf[LINE_MAX_LEN], fmt[32], *argv[MAX_ARGS], *slash;
	int argc;

	snprintf(buf, sizeof(buf), "%s", line);
	argc = split(buf, argv);
	if (!argc)
		return;
	/* `x/4xw 0x1000`: the format may be glued to the command. */
	slash = strchr(argv[0], '/');
	if (slash && argc < MAX_ARGS) {
		snprintf(fmt, sizeof(fmt), "%s", slash);
		*slash = 0;
		memmove(&argv[2], &argv[1], (size_t)(argc - 1) * sizeof(argv[0]));
		argv[1] = fmt;
		argc++;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(cmds[i].name, argv[0]) && cmd_present(i, mon)) {
			cmds[i].fn(mon, argc, argv, out);
			return;
		}
	}
	fprintf(out, "unknown command: '%s' (try: help)\n", argv[0]);
}

static void prompt(struct monitor *mon)
{
	chardev_write(mon->chr, "(vmm) ", 6);
}

static void run_line(struct monitor *mon)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return;
	mon->line[mon->len] = 0;
	monitor_execute(mon, mon->line, out);
	fclose(out);
	chardev_write(mon->chr, text, size);
	free(text);
	mon->len = 0;
	if (!atomic_load(&mon->m->quit))
		prompt(mon);
}

static size_t mon_can_receive(void *opaque)
{
	return LINE_MAX_LEN;
}

static void mon_receive(void *opaque, const uint8_t *buf, size_t len)
{
	struct monitor *mon = opaque;
	bool echo = chardev_is_tty(mon->chr);

	for (size_t i = 0; i < len; i++) {
		uint8_t c = buf[i];

		if (c == '\r' || c == '\n') {
			if (echo)
				chardev_write(mon->chr, "\n", 1);
			run_line(mon);
		} else if ((c == 0x7f || c == 0x08) && mon->len) {
			mon->len--;
			if (echo)
				chardev_write(mon->chr, "\b \b", 3);
		} else if (isprint(c) && mon->len < LINE_MAX_LEN - 1) {
			mon->line[mon->len++] = (char)c;
			if (echo)
				chardev_write(mon->chr, &c, 1);
		}
	}
}

static void mon_event(void *opaque, enum chardev_event ev)
{
	struct monitor *mon = opaque;
	char banner[96];
	int n;

	if (ev == CHARDEV_CLOSED) {
		mon->len = 0;
		return;
	}
	if (ev == CHARDEV_OPENED || !mon->greeted) {
		mon->greeted = true;
		n = snprintf(banner, sizeof(banner),
			     "vmm %s monitor - type 'help' for more information\n", VMM_VERSION);
		chardev_write(mon->chr, banner, (size_t)n);
	}
	prompt(mon);
}

struct monitor *monitor_new(struct machine *m, struct chardev *chr)
{
	struct monitor *mon = calloc(1, sizeof(*mon));
	struct chardev_frontend fe = {mon_can_receive, mon_receive, mon_event, mon};

	if (!mon)
		return NULL;
	mon->m = m;
	mon->chr = chr;
	/* No chardev: QMP's human-monitor-command runs lines through it. */
	if (chr && chardev_add_frontend(chr, &fe) < 0) {
		free(mon);
		return NULL;
	}
	static bool first_done;

	if (!first_done) {
		first_done = true;
		monitor_before_board = !has_board(m);
	}
	return mon;
}

void monitor_free(struct monitor *mon)
{
	free(mon);
}
