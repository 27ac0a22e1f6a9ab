/* qmp_commands.c — what each QMP command does. Queries answer in QEMU's
 * shapes (libvirt and scripts parse them); actions go through the same
 * machine functions as the HMP monitor, and human-monitor-command runs
 * the HMP monitor itself with its output captured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backends.h"
#include "build/config.h"
#include "devices/pci/pci.h"
#include "devices/storage/atapi.h"
#include "devices/storage/ide.h"
#include "vmm/vserial.h"
#include "vmm/chardev.h"
#include "vmm/control/base64.h"
#include "vmm/control/monitor.h"
#include "vmm/control/qmp_commands.h"
#include "vmm/migration.h"

/* The QEMU release whose QMP this follows (libvirt needs >= 4.2). */
#define QEMU_COMPAT_MAJOR 7
#define QEMU_COMPAT_MINOR 2
#define QEMU_COMPAT_MICRO 0

static struct monitor *hmp; /* human-monitor-command's monitor */

#define CMD(name) static int name(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)

static int fail(struct qmp_error *e, const char *cls, const char *desc)
{
	snprintf(e->cls, sizeof(e->cls), "%s", cls);
	snprintf(e->desc, sizeof(e->desc), "%s", desc);
	return -1;
}

json_t *qmp_version_json(void)
{
	return json_pack("{s:{s:i,s:i,s:i},s:s}", "qemu", "major", QEMU_COMPAT_MAJOR, "minor",
			 QEMU_COMPAT_MINOR, "micro", QEMU_COMPAT_MICRO, "package",
			 "vmm " VMM_VERSION);
}

/* -machine none (libvirt's capability probe) has no guest to act on. */
static int no_guest(const struct machine *m, struct qmp_error *e)
{
	return m->ncpus ? 0 : fail(e, "GenericError", "There is no guest (-machine none)");
}

CMD(cmd_capabilities)
{
	return 0;
}

CMD(cmd_query_version)
{
	*ret = qmp_version_json();
	return 0;
}

CMD(cmd_query_commands);

CMD(cmd_query_status)
{
	enum run_state s = machine_run_state(m);
	/* as QEMU: an -incoming machine is "inmigrate" until its stream is in */
	bool incoming = m->cfg->incoming && s == RUN_STATE_PRELAUNCH &&
			migration_status()->state != MIG_COMPLETED;

	*ret = json_pack("{s:b,s:b,s:s}", "running", s == RUN_STATE_RUNNING, "singlestep", 0,
			 "status", incoming ? "inmigrate" : run_state_name(s));
	return 0;
}

CMD(cmd_query_name)
{
	*ret = m->cfg->name ? json_pack("{s:s}", "name", m->cfg->name) : json_object();
	return 0;
}

CMD(cmd_query_uuid)
{
	char uuid[37];

	cli_uuid_string(m->cfg, uuid);
	*ret = json_pack("{s:s}", "UUID", uuid);
	return 0;
}

CMD(cmd_query_kvm)
{
	/* A machine runs on KVM; -machine none only says whether it could. */
	bool kvm = m->ncpus || access("/dev/kvm", R_OK | W_OK) == 0;

	*ret = json_pack("{s:b,s:b}", "enabled", kvm, "present", kvm);
	return 0;
}

CMD(cmd_query_target)
{
	*ret = json_pack("{s:s}", "arch", "x86_64");
	return 0;
}

/* The two boards, as QEMU 7.2 names them; libvirt refuses a domain whose
 * machine type is not listed here. */
static json_t *machine_json(const char *name, const char *alias, bool is_default)
{
	return json_pack("{s:s,s:s,s:b,s:i,s:b,s:b,s:b,s:s,s:s,s:b}", "name", name, "alias", alias,
			 "is-default", is_default, "cpu-max", CLI_MAX_SMP, "hotpluggable-cpus", 0,
			 "numa-mem-supported", 0, "deprecated", 0, "default-cpu-type",
			 "host-x86_64-cpu", "default-ram-id", "pc.ram", "acpi", 1);
}

CMD(cmd_query_machines)
{
	*ret = json_pack("[o,o]", machine_json("pc-i440fx-7.2", "pc", true),
			 machine_json("pc-q35-7.2", "q35", false));
	return 0;
}

CMD(cmd_query_cpus_fast)
{
	json_t *list = json_array();

	for (unsigned i = 0; i < m->ncpus; i++) {
		char path[64];
		struct topo_ids id = topo_ids_of(&m->cfg->topo, i);

		snprintf(path, sizeof(path), "/machine/unattached/device[%u]", i);
		json_array_append_new(list,
				      json_pack("{s:i,s:s,s:i,s:{s:i,s:i,s:i},s:s}", "cpu-index", i,
						"qom-path", path, "thread-id", (int)m->vcpus[i].tid,
						"props", "socket-id", id.socket, "core-id", id.core,
						"thread-id", id.thread, "target", "x86_64"));
	}
	*ret = list;
	return 0;
}

CMD(cmd_query_chardev)
{
	json_t *list = json_array();
	char label[40], buf[160];

	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++) {
		if (!m->serial_chr[i])
			continue;

		/* -chardev id= is the label (libvirt looks for its alias) */
		snprintf(label, sizeof(label), "%s", m->cfg->serial[i].id);
		if (!label[0])
			snprintf(label, sizeof(label), "serial%u", i);
		chardev_describe(m->serial_chr[i], buf, sizeof(buf));
		json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "label", label, "filename",
						      buf, "frontend-open", 1));
	}
	if (m->monitor_chr) {
		chardev_describe(m->monitor_chr, buf, sizeof(buf));
		json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "label",
						      m->cfg->monitor.id[0] ? m->cfg->monitor.id
									    : "compat_monitor0",
						      "filename", buf, "frontend-open", 1));
	}
	for (unsigned i = 0; i < CLI_MAX_VSERPORTS; i++) {
		const char *id;
		struct chardev *chr = vmm_vserial_chardev(m->vserial, i, &id);

		if (!chr)
			continue;
		chardev_describe(chr, buf, sizeof(buf));
		json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "label", id, "filename", buf,
						      "frontend-open",
						      vmm_vserial_port_open(m->vserial, i)));
	}
	for (unsigned i = 0; i < CLI_MAX_CHARDEVS; i++) {
		if (!m->spare_chr[i])
			continue;
		chardev_describe(m->spare_chr[i], buf, sizeof(buf));
		json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "label",
						      m->cfg->control.chardevs[i].id, "filename",
						      buf, "frontend-open", 0));
	}
	*ret = list;
	return 0;
}

/* A node as QEMU's query-block / query-named-block-nodes show it; drv
 * NULL: the image's format. */
json_t *qmp_block_node(const char *name, const char *drv, struct block_dev *b,
		       const char *file_node)
{
	const char *fmt = drv ? drv : block_format_name(b), *backing = block_backing_file(b);
	json_t *n = json_pack("{s:s,s:s,s:b,s:i,s:b,s:s,s:{s:s,s:s,s:I}}", "drv", fmt, "file",
			      block_path(b), "ro", block_read_only(b), "backing_file_depth",
			      drv ? 0 : (int)block_backing_depth(b), "encrypted", 0,
			      "detect_zeroes", "off", "image", "filename", block_path(b),
			      "format", fmt, "virtual-size",
			      (json_int_t)(block_sectors(b) * BLOCK_SECTOR_SIZE));

	if (name)
		json_object_set_new(n, "node-name", json_string(name));
	if (backing && !drv) {
		json_object_set_new(n, "backing_file", json_string(backing));
		json_object_set_new(json_object_get(n, "image"), "backing-filename",
				    json_string(backing));
	}
	if (file_node)
		json_object_set_new(
			n, "children",
			json_pack("[{s:s,s:s}]", "child", "file", "node-name", file_node));
	return n;
}

CMD(cmd_query_block)
{
	json_t *list = json_array();

	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		struct block_dev *b = m->disks[i];
		char buf[32];
		const char *name = machine_ide_name(m, i, false, buf, sizeof(buf));

		if (!b)
			continue;
		json_array_append_new(list,
				      json_pack("{s:s,s:b,s:b,s:s,s:o}", "device", name, "locked",
						0, "removable", 0, "type", "unknown", "inserted",
						qmp_block_node(NULL, NULL, b, NULL)));
	}
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		struct atapi_state s;
		char buf[32];
		json_t *o;

		if (!m->cdroms[i])
			continue;
		atapi_get_state(m->cdroms[i], &s);
		o = json_pack("{s:s,s:b,s:b,s:s,s:b}", "device",
			      machine_cdrom_name(m, i, buf, sizeof(buf)), "locked", s.locked,
			      "removable", 1, "type", "unknown", "tray_open", s.tray_open);
		if (s.medium)
			json_object_set_new(
				o, "inserted",
				json_pack("{s:s,s:b,s:s,s:I}", "file", block_path(s.medium), "ro", 1,
					  "drv", block_format_name(s.medium), "image-size",
					  (json_int_t)(block_sectors(s.medium) * BLOCK_SECTOR_SIZE)));
		json_array_append_new(list, o);
	}
	qmp_virtio_block_info(m, list);
	*ret = list;
	return 0;
}

/* The drive a media command names: "id" (libvirt) or "device". */
static const char *cdrom_arg(json_t *args)
{
	const char *id = json_string_value(json_object_get(args, "id"));

	return id ? id : json_string_value(json_object_get(args, "device"));
}

static int media_result(int r, const char *err, struct qmp_error *e)
{
	if (r < 0)
		return fail(e, strstr(err, "not found") ? "DeviceNotFound" : "", err);
	return 0;
}

CMD(cmd_blockdev_change_medium)
{
	const char *file = json_string_value(json_object_get(args, "filename"));
	const char *fmt = json_string_value(json_object_get(args, "format"));
	char err[256];

	if (!file)
		return fail(e, "", "Parameter 'filename' is missing");
	if (fmt && strcmp(fmt, "raw"))
		return fail(e, "", "only format 'raw' is supported");
	return media_result(machine_cdrom_change(m, cdrom_arg(args), file, false, err, sizeof(err)),
			    err, e);
}

CMD(cmd_eject)
{
	char err[256];

	return media_result(machine_cdrom_eject(m, cdrom_arg(args),
						json_is_true(json_object_get(args, "force")), err,
						sizeof(err)),
			    err, e);
}

static int tray(struct machine *m, json_t *args, bool open, struct qmp_error *e)
{
	char err[256];

	return media_result(machine_cdrom_tray(m, cdrom_arg(args), open,
					       json_is_true(json_object_get(args, "force")), err,
					       sizeof(err)),
			    err, e);
}

CMD(cmd_blockdev_open_tray)
{
	return tray(m, args, true, e);
}

CMD(cmd_blockdev_close_tray)
{
	return tray(m, args, false, e);
}

/* QEMU's names for the PCI classes on this machine. */
static const char *class_desc(unsigned cls)
{
	switch (cls) {
	case 0x0100: return "SCSI controller";
	case 0x0101: return "IDE controller";
	case 0x0200: return "Ethernet controller";
	case 0x0280: return "Network controller";
	case 0x0600: return "Host bridge";
	case 0x0601: return "ISA bridge";
	case 0x0680: return "Bridge";
	default: return NULL;
	}
}

static json_t *pci_regions(const struct pci_dev *d)
{
	json_t *list = json_array();

	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		const struct pci_bar *b = &d->bar[i];
		json_t *r;

		if (!b->size)
			continue;
		r = json_pack("{s:i,s:s,s:I,s:I}", "bar", i, "type", b->io ? "io" : "memory",
			      "address",
			      (json_int_t)(b->mapped == PCI_BAR_UNMAPPED ? -1 : (int64_t)b->mapped),
			      "size", (json_int_t)b->size);
		if (!b->io) {
			json_object_set_new(r, "prefetch", json_false());
			json_object_set_new(r, "mem_type_64", json_false());
		}
		json_array_append_new(list, r);
	}
	return list;
}

static json_t *pci_device(struct pci_bus *bus, const struct pci_dev *d)
{
	uint8_t devfn = d->devfn;
	unsigned cls = pci_cfg_read(bus, devfn, 0x0a, 2);
	const char *desc = class_desc(cls);
	json_t *cinfo = json_pack("{s:i}", "class", cls);
	json_t *dev;

	if (desc)
		json_object_set_new(cinfo, "desc", json_string(desc));
	dev = json_pack("{s:i,s:i,s:i,s:o,s:{s:i,s:i,s:i,s:i},s:s,s:o}", "bus", 0, "slot",
			devfn >> 3, "function", devfn & 7, "class_info", cinfo, "id", "device",
			pci_cfg_read(bus, devfn, 0x02, 2), "vendor", pci_cfg_read(bus, devfn, 0, 2),
			"subsystem", pci_cfg_read(bus, devfn, 0x2e, 2), "subsystem-vendor",
			pci_cfg_read(bus, devfn, 0x2c, 2), "qdev_id", "", "regions",
			pci_regions(d));
	if (pci_cfg_read(bus, devfn, 0x3d, 1)) {
		json_object_set_new(dev, "irq", json_integer(pci_cfg_read(bus, devfn, 0x3c, 1)));
		json_object_set_new(dev, "irq_pin",
				    json_integer(pci_cfg_read(bus, devfn, 0x3d, 1)));
	}
	return dev;
}

/* [{"bus": 0, "devices": [...]}]: bus 0 is the only one. */
CMD(cmd_query_pci)
{
	json_t *devices;

	if (!m->pci) { /* -machine none: no buses at all */
		*ret = json_array();
		return 0;
	}
	devices = json_array();

	for (unsigned devfn = 0; devfn < 256; devfn++) {
		const struct pci_dev *d = pci_bus_find(m->pci, (uint8_t)devfn);

		if (d)
			json_array_append_new(devices, pci_device(m->pci, d));
	}
	*ret = json_pack("[{s:i,s:o}]", "bus", 0, "devices", devices);
	return 0;
}

CMD(cmd_stop)
{
	if (no_guest(m, e) < 0)
		return -1;
	machine_user_stop(m);
	return 0;
}

CMD(cmd_cont)
{
	enum run_state s = machine_run_state(m);
	char why[256];

	if (no_guest(m, e) < 0)
		return -1;
	/* As QEMU: after a shutdown or panic the guest cannot simply go on. */
	if (s == RUN_STATE_SHUTDOWN || s == RUN_STATE_GUEST_PANICKED)
		return fail(e, "GenericError", "Resetting the Virtual Machine is required");
	/* -incoming: the booted machine is not the guest until the stream is
	 * in; a source whose migration completed handed its disks over */
	if (migration_take_back(m, why, sizeof(why)) < 0)
		return fail(e, "GenericError", why);
	machine_debug_cont(m);
	return 0;
}

CMD(cmd_system_reset)
{
	if (no_guest(m, e) < 0)
		return -1;
	machine_host_reset(m);
	return 0;
}

CMD(cmd_system_powerdown)
{
	if (no_guest(m, e) < 0)
		return -1;
	machine_host_powerdown(m);
	return 0;
}

/* {"name": NIC or netdev id, "up": bool}: QEMU's set_link. */
CMD(cmd_set_link)
{
	const char *name = json_string_value(json_object_get(args, "name"));
	json_t *up = json_object_get(args, "up");

	if (!name || !json_is_boolean(up))
		return fail(e, "GenericError", "Parameters 'name' and 'up' are required");
	if (machine_set_link(m, name, json_is_true(up)) < 0) {
		fail(e, "DeviceNotFound", "");
		snprintf(e->desc, sizeof(e->desc), "Device '%s' not found", name);
		return -1;
	}
	return 0;
}

/* ringbuf-read/-write's device and format (QEMU's enum DataFormat). */
static struct chardev *ringbuf_args(struct machine *m, json_t *args, bool *base64,
				    struct qmp_error *e)
{
	const char *dev = json_string_value(json_object_get(args, "device"));
	const char *format = json_string_value(json_object_get(args, "format"));
	struct chardev *c = dev ? board_find_chardev(m, dev) : NULL;

	fail(e, "GenericError", "");
	*base64 = format && !strcmp(format, "base64");
	if (format && !*base64 && strcmp(format, "utf8"))
		snprintf(e->desc, sizeof(e->desc), "Parameter 'format' does not accept value '%s'",
			 format);
	else if (!c)
		snprintf(e->desc, sizeof(e->desc), "Device '%s' not found", dev ? dev : "");
	else if (!chardev_is_ringbuf(c))
		snprintf(e->desc, sizeof(e->desc), "%s is not a ringbuf device", dev);
	else
		return c;
	return NULL;
}

CMD(cmd_ringbuf_write)
{
	const char *data = json_string_value(json_object_get(args, "data"));
	struct chardev *c;
	uint8_t *bytes;
	long n;
	bool base64;

	if (!(c = ringbuf_args(m, args, &base64, e)))
		return -1;
	if (!base64) {
		chardev_write(c, data, strlen(data));
		return 0;
	}
	bytes = malloc(strlen(data) / 4 * 3 + 1);
	n = bytes ? base64_decode(data, bytes) : -1;
	if (n >= 0)
		chardev_write(c, bytes, (size_t)n);
	free(bytes);
	return n < 0 ? fail(e, "GenericError", "Base64 data contains invalid characters") : 0;
}

/* utf8: the bytes up to the first NUL, as QEMU hands them over; what is
 * not UTF-8 becomes '?' (JSON strings are UTF-8). */
static json_t *ringbuf_text(uint8_t *buf, size_t n, bool base64)
{
	char *b64;
	json_t *s;

	if (base64) {
		b64 = malloc(BASE64_LEN(n) + 1);
		if (!b64)
			return NULL;
		base64_encode(buf, n, b64);
		s = json_string(b64);
		free(b64);
		return s;
	}
	n = strnlen((char *)buf, n);
	s = json_stringn((char *)buf, n);
	for (size_t i = 0; !s && i < n; i++)
		buf[i] = buf[i] < 0x80 ? buf[i] : '?';
	return s ? s : json_stringn((char *)buf, n);
}

CMD(cmd_ringbuf_read)
{
	json_int_t size = json_integer_value(json_object_get(args, "size"));
	struct chardev *c;
	uint8_t *buf;
	size_t n;
	bool base64;

	if (!(c = ringbuf_args(m, args, &base64, e)))
		return -1;
	if (size <= 0)
		return fail(e, "GenericError", "size must be greater than zero");
	if (size > CLI_RINGBUF_MAX) /* no ring holds more */
		size = CLI_RINGBUF_MAX;
	buf = malloc((size_t)size);
	if (!buf)
		return fail(e, "GenericError", "out of memory");
	n = chardev_ringbuf_read(c, buf, (size_t)size);
	*ret = ringbuf_text(buf, n, base64);
	free(buf);
	return *ret ? 0 : fail(e, "GenericError", "out of memory");
}

static void quit_now(struct machine *m)
{
	machine_host_quit(m, "host-qmp-quit");
}

CMD(cmd_quit)
{
	e->after_reply = quit_now;
	return 0;
}

CMD(cmd_human_monitor_command)
{
	const char *line = json_string_value(json_object_get(args, "command-line"));
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	if (!line)
		return fail(e, "GenericError", "Parameter 'command-line' is missing");
	if (no_guest(m, e) < 0)
		return -1;
	out = open_memstream(&text, &size);
	if (!out)
		return fail(e, "GenericError", "out of memory");
	monitor_execute(hmp, line, out);
	fclose(out);
	*ret = json_string(text ? text : "");
	free(text);
	if (!*ret) /* not UTF-8: an `x /c` of guest bytes, say */
		*ret = json_string("(output is not valid UTF-8)\r\n");
	return 0;
}

static const struct qmp_command commands[] = {
	{"qmp_capabilities", cmd_capabilities, "?enable:any"},
	{"query-version", cmd_query_version, NULL},
	{"query-commands", cmd_query_commands, NULL},
	{"query-status", cmd_query_status, NULL},
	{"query-name", cmd_query_name, NULL},
	{"query-uuid", cmd_query_uuid, NULL},
	{"query-kvm", cmd_query_kvm, NULL},
	{"query-target", cmd_query_target, NULL},
	{"query-machines", cmd_query_machines, NULL},
	{"query-cpus-fast", cmd_query_cpus_fast, NULL},
	{"query-chardev", cmd_query_chardev, NULL},
	{"query-block", cmd_query_block, NULL},
	{"blockdev-change-medium", cmd_blockdev_change_medium,
	 "?device:str,?id:str,filename:str,?format:str"},
	{"eject", cmd_eject, "?device:str,?id:str,?force:bool"},
	{"blockdev-open-tray", cmd_blockdev_open_tray, "?device:str,?id:str,?force:bool"},
	{"blockdev-close-tray", cmd_blockdev_close_tray, "?device:str,?id:str"},
	{"query-pci", cmd_query_pci, NULL},
	{"stop", cmd_stop, NULL},
	{"cont", cmd_cont, NULL},
	{"system_reset", cmd_system_reset, NULL},
	{"system_powerdown", cmd_system_powerdown, NULL},
	{"set_link", cmd_set_link, "name:str,up:bool"},
	{"ringbuf-write", cmd_ringbuf_write, "device:str,data:str,?format:str"},
	{"ringbuf-read", cmd_ringbuf_read, "device:str,size:int,?format:str"},
	{"balloon", qmp_balloon, "value:int"},
	{"query-balloon", qmp_query_balloon, NULL},
	{"qom-get", qmp_qom_get, "path:str,property:str"},
	{"qom-set", qmp_qom_set, "path:str,property:str,value:any"},
	{"quit", cmd_quit, NULL},
	{"human-monitor-command", cmd_human_monitor_command, "command-line:str,?cpu-index:int"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

CMD(cmd_query_commands)
{
	json_t *list = json_array();

	const struct qmp_command *c;

	for (size_t i = 0; (c = qmp_command_at(i)); i++)
		json_array_append_new(list, json_pack("{s:s}", "name", c->name));
	*ret = list;
	return 0;
}

const struct qmp_command *qmp_command_at(size_t i)
{
	if (i < N_COMMANDS)
		return &commands[i];
	i -= N_COMMANDS;
	for (size_t j = 0; qmp_libvirt_commands[j].name; j++, i--)
		if (i == 0)
			return &qmp_libvirt_commands[j];
	for (size_t j = 0; qmp_migration_commands[j].name; j++, i--)
		if (i == 0)
			return &qmp_migration_commands[j];
	for (size_t j = 0; qmp_fd_commands[j].name; j++, i--)
		if (i == 0)
			return &qmp_fd_commands[j];
	for (size_t j = 0; qmp_hotplug_commands[j].name; j++, i--)
		if (i == 0)
			return &qmp_hotplug_commands[j];
	return NULL;
}

const struct qmp_command *qmp_find_command(const char *name)
{
	const struct qmp_command *c;

	for (size_t i = 0; (c = qmp_command_at(i)); i++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

void qmp_commands_init(struct machine *m)
{
	if (!hmp)
		hmp = monitor_new(m, NULL);
}

void qmp_commands_free(void)
{
	monitor_free(hmp);
	hmp = NULL;
}
