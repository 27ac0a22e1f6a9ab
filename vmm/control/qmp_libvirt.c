/* qmp_libvirt.c — the QMP commands a management layer (libvirt's QEMU
 * driver) needs beyond the basic set in qmp_commands.c: introspection for
 * its capability probe (query-qmp-schema, qom-list-types, ...), the block
 * nodes and devices it checks at start, and the migration and job queries
 * it makes on every (re)connection.
 *
 * Everything here describes what vmm really has. The schema lists vmm's
 * own commands and events with their arguments; the types are the
 * devices vmm can build. The one deliberate exception is noted at
 * qom-list-properties.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backends.h"
#include "vmm/chardev.h"
#include "vmm/control/qmp_args.h"
#include "vmm/control/qmp_commands.h"

#define CMD(name)                                                                                  \
	static int name(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e)

static int fail(struct qmp_error *e, const char *cls, const char *fmt, const char *what)
{
	snprintf(e->cls, sizeof(e->cls), "%s", cls);
	snprintf(e->desc, sizeof(e->desc), fmt, what);
	return -1;
}

/* A string argument, or NULL with e filled. */
static const char *arg_str(json_t *args, const char *name, struct qmp_error *e)
{
	const char *s = json_string_value(json_object_get(args, name));

	if (!s)
		fail(e, "GenericError", "Parameter '%s' is missing or not a string", name);
	return s;
}

/* ----------------------------------------------------- types and devices */

/* Every virtio-pci device's transport switches (cli_virtio_transport_prop),
 * which libvirt writes for its non-transitional models. */
#define VIRTIO_TRANSPORT_PROPS "disable-legacy:OnOffAuto,disable-modern:bool"
/* Each virtio device also answers to QEMU's NAME-non-transitional (modern
 * only, which vmm's are): listing those is what makes libvirt place
 * virtio devices on PCIe root ports (its "virtio-pci-non-transitional"
 * capability) rather than behind a DMI-to-PCI bridge vmm does not have. */
#define BLK_PROPS                                                                                  \
	"drive:str,bootindex:int32,serial:str,addr:int32,num-queues:uint16,write-cache:OnOffAuto," \
	"id:str," VIRTIO_TRANSPORT_PROPS
#define NET_PROPS                                                                                  \
	"netdev:str,mac:str,addr:int32,mq:bool,vectors:uint32,id:str," VIRTIO_TRANSPORT_PROPS
#define RNG_PROPS "rng:str,max-bytes:uint64,period:uint32,addr:int32,id:str," VIRTIO_TRANSPORT_PROPS
#define SERIAL_PROPS "max_ports:uint32,addr:int32,id:str," VIRTIO_TRANSPORT_PROPS
#define BALLOON_PROPS                                                                              \
	"deflate-on-oom:bool,free-page-reporting:bool,guest-stats-polling-interval:int,addr:"      \
	"int32,"                                                                                   \
	"id:str," VIRTIO_TRANSPORT_PROPS

/* The QOM types vmm has: its machine, accelerator, devices, objects.
 * No tcg-accel: vmm cannot run a guest without KVM. */
static const struct {
	const char *name, *parent;
	const char *props; /* device-list-properties: "name:type,..." */
} types[] = {
	{"pc-i440fx-7.2-machine", "generic-pc-machine", NULL},
	{"pc-q35-7.2-machine", "generic-pc-machine", NULL},
	{"none-machine", "machine", NULL},
	{"kvm-accel", "accel", NULL},
	{"i440FX-pcihost", "pci-host-bridge", NULL},
	{"PIIX3", "pci-device", NULL},
	{"piix3-ide", "pci-ide", NULL},
	/* disable_s3/_s4 (-global, QEMU's uint8): libvirt refuses a domain's
	 * <pm> without them */
	{"PIIX4_PM", "pci-device", "disable_s3:uint8,disable_s4:uint8"},
	{"ICH9-LPC", "pci-device", "disable_s3:uint8,disable_s4:uint8"},
	{"q35-pcihost", "pcie-host-bridge", NULL},
	{"ICH9-SMB", "pci-device", NULL},
	{"pcie-root-port", "pcie-root-port-base",
	 "port:uint8,chassis:uint8,slot:uint16,addr:int32,multifunction:bool,id:str"},
	{"ich9-ahci", "ahci", "addr:int32,id:str"},
	{"ide-hd", "ide-device", "drive:str,bus:str,unit:uint32,bootindex:int32,id:str,write-cache:OnOffAuto"},
	{"ide-cd", "ide-device", "drive:str,bus:str,unit:uint32,bootindex:int32,id:str,write-cache:OnOffAuto"},
	{"mc146818rtc", "isa-device", NULL},
	{"i8042", "isa-device", NULL},
	{"isa-serial", "isa-device", "chardev:str,index:uint32,id:str"},
	{"isa-debug-exit", "isa-device", "iobase:uint32,iosize:uint32"},
	{"pvpanic", "isa-device", "ioport:uint16"},
	{"pc-testdev", "isa-device", NULL},
	{"intel-iommu", "x86-iommu", "intremap:bool,eim:bool"},
	{"edu", "pci-device", "addr:int32,id:str"},
	{"pci-testdev", "pci-device", "addr:int32,id:str"},
	{"virtio-wlan-pci", "virtio-pci", "medium:str,addr:int32,id:str," VIRTIO_TRANSPORT_PROPS},
	{"virtio-blk-pci", "virtio-pci", BLK_PROPS},
	{"virtio-blk-pci-non-transitional", "virtio-blk-pci-base", BLK_PROPS},
	{"virtio-net-pci", "virtio-pci", NET_PROPS},
	{"virtio-net-pci-non-transitional", "virtio-net-pci-base", NET_PROPS},
	{"virtio-rng-pci", "virtio-pci", RNG_PROPS},
	{"virtio-rng-pci-non-transitional", "virtio-rng-pci-base", RNG_PROPS},
	{"piix3-usb-uhci", "pci-uhci-usb",
	 "addr:int32,multifunction:bool,bandwidth:uint32,maxframes:uint32"},
	{"qemu-xhci", "pci-xhci", "p2:uint32,p3:uint32,streams:bool,addr:int32,multifunction:bool"},
	{"virtio-serial-pci", "virtio-pci", SERIAL_PROPS},
	{"virtio-serial-pci-non-transitional", "virtio-serial-pci-base", SERIAL_PROPS},
	{"virtio-serial-bus", "bus", NULL},
	{"virtserialport", "virtio-serial-port", "chardev:str,nr:uint32,name:str,id:str"},
	{"virtconsole", "virtserialport", "chardev:str,nr:uint32,name:str,id:str"},
	{"virtio-balloon-pci", "virtio-pci", BALLOON_PROPS},
	{"virtio-balloon-pci-non-transitional", "virtio-balloon-pci-base", BALLOON_PROPS},
	{"memory-backend-ram", "memory-backend", NULL},
	{"rng-random", "rng-backend", NULL},
	{"rng-builtin", "rng-backend", NULL},
	{"secret", "object", NULL},
};

#define N_TYPES (sizeof(types) / sizeof(types[0]))

static int find_type(const char *name)
{
	for (size_t i = 0; i < N_TYPES; i++)
		if (!strcmp(types[i].name, name))
			return (int)i;
	return -1;
}

/* "a:str,b:int" as [{"name": "a", "type": "str"}, ...]. */
static json_t *props_json(const char *props)
{
	json_t *list = json_array();
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", props ? props : "");
	for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(p, ':');

		if (colon)
			*colon = 0;
		json_array_append_new(
			list, json_pack("{s:s,s:s}", "name", p, "type", colon ? colon + 1 : "str"));
	}
	return list;
}

CMD(cmd_qom_list_types)
{
	const char *implements = json_string_value(json_object_get(args, "implements"));
	json_t *list = json_array();

	for (size_t i = 0; i < N_TYPES; i++)
		if (!implements || !strcmp(implements, types[i].name) ||
		    !strcmp(implements, types[i].parent))
			json_array_append_new(list, json_pack("{s:s,s:s}", "name", types[i].name,
							      "parent", types[i].parent));
	*ret = list;
	return 0;
}

CMD(cmd_device_list_properties)
{
	const char *name = arg_str(args, "typename", e);
	int t;

	if (!name)
		return -1;
	t = find_type(name);
	if (t < 0 || !types[t].props)
		return fail(e, "DeviceNotFound", "Device '%s' not found", name);
	*ret = props_json(types[t].props);
	return 0;
}

/* libvirt 9.0 dereferences the answer for memory-backend-file without
 * checking for an error, so that type (which vmm does not have) gets an
 * empty property list instead of DeviceNotFound; libvirt then offers no
 * file-backed memory, which is right. */
CMD(cmd_qom_list_properties)
{
	const char *name = arg_str(args, "typename", e);

	if (!name)
		return -1;
	if (!strcmp(name, "memory-backend-ram"))
		*ret = props_json("size:int");
	else if (find_type(name) >= 0 || !strcmp(name, "memory-backend-file"))
		*ret = json_array();
	else
		return fail(e, "DeviceNotFound", "Class '%s' not found", name);
	return 0;
}

static void add_peripheral(json_t *list, const char *id, const char *type)
{
	char child[64];

	snprintf(child, sizeof(child), "child<%s>", type);
	json_array_append_new(list, json_pack("{s:s,s:s}", "name", id, "type", child));
}

/* virtio-serial controllers and ports with an id. */
static void add_vserial_peripherals(json_t *list, const struct vserial_config *vs)
{
	for (unsigned i = 0; i < vs->n_buses; i++)
		if (vs->buses[i].id[0])
			add_peripheral(list, vs->buses[i].id, "virtio-serial-pci");
	for (unsigned i = 0; i < vs->n_ports; i++)
		if (vs->ports[i].id[0])
			add_peripheral(list, vs->ports[i].id,
				       vs->ports[i].console ? "virtconsole" : "virtserialport");
}

/* /machine/peripheral: the devices given an id= (libvirt's aliases). */
CMD(cmd_qom_list)
{
	const char *path = arg_str(args, "path", e);
	json_t *list;

	if (!path)
		return -1;
	list = json_array();
	if (!strcmp(path, "/machine/peripheral")) {
		for (unsigned i = 0; i < m->cfg->n_vblk; i++)
			if (m->cfg->vblk[i].id[0])
				json_array_append_new(list, json_pack("{s:s,s:s}", "name",
								      m->cfg->vblk[i].id, "type",
								      "child<virtio-blk-pci>"));
		for (unsigned i = 0; i < m->cfg->n_nics; i++)
			if (m->cfg->nics[i].id[0])
				json_array_append_new(list, json_pack("{s:s,s:s}", "name",
								      m->cfg->nics[i].id, "type",
								      "child<virtio-net-pci>"));
		add_vserial_peripherals(list, &m->cfg->vserial);
		if (vmm_balloon_id(m))
			json_array_append_new(list,
					      json_pack("{s:s,s:s}", "name", vmm_balloon_id(m),
							"type", "child<virtio-balloon-pci>"));
	} else if ((*ret = qmp_balloon_qom_list(m, path))) {
		json_decref(list);
		return 0;
	} else if (strncmp(path, "/machine/unattached/device[", 27)) {
		/* the vCPUs are there, with no properties to read */
		json_decref(list);
		return fail(e, "DeviceNotFound", "Device '%s' not found", path);
	}
	*ret = list;
	return 0;
}

/* ------------------------------------------------------- block devices */

CMD(cmd_query_named_block_nodes)
{
	json_t *list = json_array();

	for (unsigned i = 0; i < m->cfg->n_vblk; i++) {
		const struct drive_spec *d = &m->cfg->vdrives[m->cfg->vblk[i].drive];
		struct block_dev *b = m->vdisks[i];
		bool layered = d->node_file[0] && strcmp(d->node_file, d->id);

		if (!b)
			continue;
		json_array_append_new(
			list, qmp_block_node(d->id, NULL, b, layered ? d->node_file : NULL));
		if (layered)
			json_array_append_new(list, qmp_block_node(d->node_file, "file", b, NULL));
	}
	*ret = list;
	return 0;
}

void qmp_virtio_block_info(struct machine *m, json_t *list)
{
	for (unsigned i = 0; i < m->cfg->n_vblk; i++) {
		const struct virtio_blk_spec *v = &m->cfg->vblk[i];
		const struct drive_spec *d = &m->cfg->vdrives[v->drive];
		struct block_dev *b = m->vdisks[i];
		json_t *ins;

		if (!b)
			continue;
		ins = qmp_block_node(d->id, NULL, b, NULL);
		json_array_append_new(list,
				      json_pack("{s:s,s:s,s:b,s:b,s:s,s:o}", "device",
						v->id[0] ? "" : d->id, "qdev",
						v->id[0] ? v->id : d->id, "locked", 0, "removable",
						0, "type", "unknown", "inserted", ins));
	}
}

/* ---------------------------------------------------- jobs */

/* No block or migration jobs exist in vmm. */
CMD(cmd_query_jobs)
{
	*ret = json_array();
	return 0;
}

/* ---------------------------------------------------- introspection */

/* The options with parameters, for query-command-line-options. */
static const struct {
	const char *option, *params;
} cli_options[] = {
	{"machine", "type:string,accel:string,kernel_irqchip:string,pit:boolean,usb:boolean,"
		    "dump-guest-core:boolean,memory-backend:string"},
	{"boot", "order:string,strict:boolean"},
	{"rtc", "base:string,clock:string,driftfix:string"},
	{"overcommit", "mem-lock:boolean,cpu-pm:boolean"},
	{"msg", "timestamp:boolean"},
	{"accel", "accel:string"},
	{"drive", "file:string,format:string,if:string,index:number,id:string,readonly:boolean,"
		  "cache:string"},
	{"chardev", "backend:string,id:string,path:string,fd:string,server:boolean,wait:boolean"},
	{"mon", "chardev:string,mode:string"},
	{"action", "reboot:string,shutdown:string,panic:string"},
};

CMD(cmd_query_command_line_options)
{
	const char *want = json_string_value(json_object_get(args, "option"));
	json_t *list = json_array();

	for (size_t i = 0; i < sizeof(cli_options) / sizeof(cli_options[0]); i++)
		if (!want || !strcmp(want, cli_options[i].option))
			json_array_append_new(list, json_pack("{s:s,s:o}", "option",
							      cli_options[i].option, "parameters",
							      props_json(cli_options[i].params)));
	*ret = list;
	return 0;
}

static const char *const events[][2] = {
	{"STOP", ""},
	{"RESUME", ""},
	{"DEVICE_DELETED", "?device:str,path:str"},
	{"POWERDOWN", ""},
	{"RESET", "guest:bool,reason:str"},
	{"SHUTDOWN", "guest:bool,reason:str"},
	{"GUEST_PANICKED", "action:str"},
	{"GUEST_CRASHLOADED", "action:str"},
	{"DEVICE_TRAY_MOVED", "device:str,id:str,tray-open:bool"},
	{"VSERPORT_CHANGE", "id:str,open:bool"},
	{"BALLOON_CHANGE", "actual:int"},
	{"MIGRATION", "status:str"},
};

/* An object type "name" with members from "a:t,?b:t" (vmm/qmp_args.h). */
static json_t *object_type(const char *name, const char *members)
{
	json_t *list = json_array();
	const char *cursor = members;
	struct qmp_arg a;

	while (qmp_arg_next(&cursor, &a)) {
		json_t *mem;

		if (!strcmp(a.name, "*"))
			continue; /* the device's own properties: not members */
		mem = json_pack("{s:s,s:s}", "name", a.name, "type", a.type);

		if (a.optional)
			json_object_set_new(mem, "default", json_null());
		json_array_append_new(list, mem);
	}
	return json_pack("{s:s,s:s,s:o}", "name", name, "meta-type", "object", "members", list);
}

CMD(cmd_query_qmp_schema)
{
	static const char *const builtins[][2] = {
		{"str", "string"}, {"int", "int"}, {"bool", "boolean"}, {"any", "value"}};
	json_t *list = json_array();
	const struct qmp_command *c;
	char type[64];
	json_t *cmd;

	for (size_t i = 0; (c = qmp_command_at(i)); i++) {
		snprintf(type, sizeof(type), "%s-arg", c->name);
		json_array_append_new(list, object_type(type, c->args));
		cmd = json_pack("{s:s,s:s,s:s,s:s}", "name", c->name, "meta-type", "command",
				"arg-type", type, "ret-type", "any");
		/* device_add takes a device as -device's JSON spells it */
		if (!strcmp(c->name, "device_add"))
			json_object_set_new(cmd, "features", json_pack("[s]", "json-cli-hotplug"));
		json_array_append_new(list, cmd);
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(type, sizeof(type), "%s-arg", events[i][0]);
		json_array_append_new(list, object_type(type, events[i][1]));
		json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "name", events[i][0],
						      "meta-type", "event", "arg-type", type));
	}
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "name", builtins[i][0],
						      "meta-type", "builtin", "json-type",
						      builtins[i][1]));
	*ret = list;
	return 0;
}

const struct qmp_command qmp_libvirt_commands[] = {
	{"query-qmp-schema", cmd_query_qmp_schema, NULL},
	{"query-command-line-options", cmd_query_command_line_options, "?option:str"},
	{"qom-list-types", cmd_qom_list_types, "?implements:str,?abstract:bool"},
	{"qom-list-properties", cmd_qom_list_properties, "typename:str"},
	{"device-list-properties", cmd_device_list_properties, "typename:str"},
	{"qom-list", cmd_qom_list, "path:str"},
	{"query-named-block-nodes", cmd_query_named_block_nodes, "?flat:bool"},
	{"query-jobs", cmd_query_jobs, NULL},
	{NULL, NULL, NULL},
};
