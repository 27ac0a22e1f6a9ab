/* cli_help.c — the help verbs, printed in QEMU's layout with vmm's content:
 * -cpu help, -machine help, -device help, -device NAME,help, -netdev help.
 *
 * Tools read these (libvirt's probe, virt-install, kvm-unit-tests grep
 * `-device help`), so the layout is QEMU 7.2's line for line. Each
 * property row also holds a sample value: tests/unit/vmm/test_cli_help.c
 * parses every listed property with it, so the list cannot name a
 * property the parser refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/cli/cli.h"

/* QEMU's device categories, in the order it prints them. */
enum dev_category { CAT_BRIDGE, CAT_USB, CAT_STORAGE, CAT_NETWORK, CAT_INPUT, CAT_MISC, CAT_COUNT };
static const char *const category_names[CAT_COUNT] = {"Controller/Bridge/Hub", "USB", "Storage",
						      "Network", "Input", "Misc"};

#define PCI_ADDR_PROP                                                                              \
	{                                                                                          \
		"addr", "int32", "PCI slot[.function] in hex, e.g. 04.0 or 04", "-1", "05.0"       \
	}

#define MULTIFUNCTION_PROP                                                                         \
	{                                                                                          \
		"multifunction", "bool", "on/off", "false", "off"                                  \
	}

static const struct cli_device_help devices[] = {
	{"piix3-usb-uhci",
	 "PCI",
	 NULL,
	 NULL,
	 CAT_USB,
	 {NULL},
	 NULL,
	 {PCI_ADDR_PROP,
	  MULTIFUNCTION_PROP,
	  {"bandwidth", "uint32", "accepted (no device to schedule)", "1280", "1280"},
	  {"maxframes", "uint32", "accepted (no device to schedule)", "128", "128"}}},
	{"qemu-xhci",
	 "PCI",
	 NULL,
	 NULL,
	 CAT_USB,
	 {NULL},
	 NULL,
	 {PCI_ADDR_PROP,
	  MULTIFUNCTION_PROP,
	  {"p2", "uint32", "USB 2 ports (1-15)", "4", "15"},
	  {"p3", "uint32", "USB 3 ports (1-15)", "4", "15"},
	  {"streams", "bool", "on/off: accepted (no device to stream to)", "true", "off"}}},
	{"virtio-blk-pci",
	 "PCI",
	 "virtio-blk",
	 NULL,
	 CAT_STORAGE,
	 {"-drive", "if=none,id=d0,file=/dev/null"},
	 "drive=d0",
	 {PCI_ADDR_PROP,
	  {"bootindex", "int32", NULL, NULL, "1"},
	  {"drive", "str", "the -drive or -blockdev it serves", NULL, "d0"},
	  {"num-queues", "uint16", "request queues (1-16)", "1", "2"},
	  {"serial", "str", "the disk's serial number (up to 20 characters)", NULL, "disk0"},
	  {"write-cache", "OnOffAuto", "off: each write reaches the medium before it completes",
	   "auto", "off"}}},
	{"ich9-ahci", "PCI", "ahci", NULL, CAT_STORAGE, {NULL}, "id=sata0", {PCI_ADDR_PROP}},
	{"ide-cd",
	 "IDE",
	 NULL,
	 "virtual IDE CD-ROM",
	 CAT_STORAGE,
	 {"-drive", "if=none,id=d0,file=/dev/null", "-device", "ahci,id=sata0"},
	 "bus=sata0.1",
	 {{"bootindex", "int32", NULL, NULL, "1"},
	  {"bus", "str", "the AHCI port (ID.0-ID.5) or IDE bus (ide.0, ide.1)", NULL, "sata0.2"},
	  {"drive", "str", "the -drive or -blockdev holding the medium (none: empty)", NULL, "d0"},
	  {"unit", "uint32", "the IDE unit (0 master, 1 slave)", NULL, "1"}}},
	{"ide-hd",
	 "IDE",
	 NULL,
	 "virtual IDE disk",
	 CAT_STORAGE,
	 {"-drive", "if=none,id=d0,file=/dev/null", "-device", "ahci,id=sata0"},
	 "drive=d0,bus=sata0.0",
	 {{"bootindex", "int32", NULL, NULL, "1"},
	  {"bus", "str", "the AHCI port (ID.0-ID.5) or IDE bus (ide.0, ide.1)", NULL, "sata0.3"},
	  {"drive", "str", "the -drive or -blockdev it serves", NULL, "d0"},
	  {"unit", "uint32", "the IDE unit (0 master, 1 slave)", NULL, "1"},
	  {"write-cache", "OnOffAuto", "off: each write reaches the medium before it completes",
	   "auto", "off"}}},
	{"virtio-net-pci",
	 "PCI",
	 "virtio-net",
	 NULL,
	 CAT_NETWORK,
	 {"-netdev", "user,id=n0"},
	 "netdev=n0",
	 {PCI_ADDR_PROP,
	  {"mac", "str", "Ethernet address, e.g. 52:54:00:12:34:56", NULL, "52:54:00:12:34:99"},
	  {"mq", "bool", "on/off: one queue pair per -netdev queue", "false", "on"},
	  {"netdev", "str", "the -netdev backend it uses", NULL, "n0"},
	  {"vectors", "uint32", "accepted; vmm sizes MSI-X by the queues", NULL, "4"}}},
	{"virtio-wlan-pci",
	 "PCI",
	 NULL,
	 "mac80211_hwsim radio on a wlan-medium",
	 CAT_NETWORK,
	 {"-object", "wlan-medium,id=w0,country=DE"},
	 "medium=w0",
	 {PCI_ADDR_PROP, {"medium", "str", "the -object wlan-medium it joins", NULL, "w0"}}},
	{"virtio-rng-pci",
	 "PCI",
	 "virtio-rng",
	 NULL,
	 CAT_MISC,
	 {"-object", "rng-random,id=r0,filename=/dev/urandom"},
	 "rng=r0",
	 {PCI_ADDR_PROP,
	  {"max-bytes", "uint64", "bytes the guest may take per period", "9223372036854775807",
	   "1024"},
	  {"period", "uint32", "the max-bytes window in milliseconds", "65536", "1000"},
	  {"rng", "link<rng-backend>", "the -object rng-random or rng-builtin it reads", NULL,
	   "r0"}}},
	{"virtio-balloon-pci",
	 "PCI",
	 "virtio-balloon",
	 NULL,
	 CAT_MISC,
	 {NULL},
	 "id=balloon0",
	 {PCI_ADDR_PROP,
	  {"deflate-on-oom", "bool", "on/off", "false", "on"},
	  {"free-page-reporting", "bool", "on/off", "false", "on"},
	  {"guest-stats-polling-interval", "int", "seconds between guest-stats updates (0: none)",
	   "0", "5"}}},
	{"isa-serial",
	 "ISA",
	 NULL,
	 NULL,
	 CAT_INPUT,
	 {"-chardev", "null,id=c0"},
	 "chardev=c0",
	 {{"chardev", "str", "the -chardev behind the port", NULL, "c0"},
	  {"index", "uint32", "COM port number (0-3)", NULL, "1"}}},
	{"virtconsole",
	 "virtio-serial-bus",
	 NULL,
	 NULL,
	 CAT_INPUT,
	 {"-device", "virtio-serial-pci,id=vs0", "-chardev", "null,id=c0"},
	 NULL,
	 {{"chardev", "str", "ID of a chardev to use as a backend", NULL, "c0"},
	  {"name", "str", NULL, NULL, "org.test.0"},
	  {"nr", "uint32", NULL, "4294967295", "0"}}},
	{"virtio-serial-pci",
	 "PCI",
	 "virtio-serial",
	 NULL,
	 CAT_INPUT,
	 {NULL},
	 NULL,
	 {PCI_ADDR_PROP, {"max_ports", "uint32", "ports on its bus (1-31)", "31", "4"}}},
	{"virtserialport",
	 "virtio-serial-bus",
	 NULL,
	 NULL,
	 CAT_INPUT,
	 {"-device", "virtio-serial-pci,id=vs0", "-chardev", "null,id=c0"},
	 NULL,
	 {{"chardev", "str", "ID of a chardev to use as a backend", NULL, "c0"},
	  {"name", "str", NULL, NULL, "org.qemu.guest_agent.0"},
	  {"nr", "uint32", NULL, "4294967295", "1"}}},
	{"edu", "PCI", NULL, NULL, CAT_MISC, {NULL}, NULL, {PCI_ADDR_PROP}},
	{"pcie-root-port",
	 "PCI",
	 NULL,
	 "PCI Express root port (needs -M q35); its id= is the bus= of the device behind it",
	 CAT_BRIDGE,
	 {"-machine", "q35"},
	 "id=pci.1",
	 {PCI_ADDR_PROP,
	  {"chassis", "uint8", NULL, "0", "1"},
	  {"multifunction", "bool", "on/off: more functions in its slot", "false", "on"},
	  {"port", "uint8", "PCIe port number", "0", "16"},
	  {"slot", "uint16", "physical slot number", "0", "2"}}},
	{"intel-iommu",
	 "System",
	 NULL,
	 "Intel VT-d DMA remapping unit (needs -M q35)",
	 CAT_MISC,
	 {"-machine", "q35,kernel_irqchip=split", "-kernel", "k"},
	 "intremap=on",
	 {{"eim", "bool", "on/off: x2APIC interrupt remapping; as intremap if not given", NULL,
	   "on"},
	  {"intremap", "bool", "on/off: interrupt remapping", "false", "on"}}},
	{"isa-debug-exit",
	 "ISA",
	 NULL,
	 NULL,
	 CAT_MISC,
	 {NULL},
	 NULL,
	 {{"iobase", "uint32", NULL, "1281", "0xf4"}, {"iosize", "uint32", NULL, "2", "4"}}},
	{"pc-testdev", "ISA", NULL, NULL, CAT_MISC, {NULL}, NULL, {{NULL}}},
	{"pci-testdev", "PCI", NULL, "PCI test device", CAT_MISC, {NULL}, NULL, {PCI_ADDR_PROP}},
	{"pvpanic",
	 "ISA",
	 NULL,
	 NULL,
	 CAT_MISC,
	 {NULL},
	 NULL,
	 {{"ioport", "uint16", NULL, "1285", "0x506"}}},
};
#define N_DEVICES (sizeof(devices) / sizeof(devices[0]))

const struct cli_device_help *cli_device_help_find(const char *name)
{
	for (size_t i = 0; i < N_DEVICES; i++)
		if (!strcmp(devices[i].name, name) ||
		    (devices[i].alias && !strcmp(devices[i].alias, name)))
			return &devices[i];
	return NULL;
}

const struct cli_device_help *cli_device_help_at(size_t i)
{
	return i < N_DEVICES ? &devices[i] : NULL;
}

/* -device help: "NAME devices:" groups, one line per device, a blank line
 * after each group. */
static void list_devices(FILE *out)
{
	for (int cat = 0; cat < CAT_COUNT; cat++) {
		bool any = false;

		for (size_t i = 0; i < N_DEVICES; i++) {
			const struct cli_device_help *d = &devices[i];

			if ((int)d->category != cat)
				continue;
			if (!any)
				fprintf(out, "%s devices:\n", category_names[cat]);
			any = true;
			fprintf(out, "name \"%s\", bus %s", d->name, d->bus);
			if (d->alias)
				fprintf(out, ", alias \"%s\"", d->alias);
			if (d->desc)
				fprintf(out, ", desc \"%s\"", d->desc);
			fputc('\n', out);
		}
		if (any)
			fputc('\n', out);
	}
}

/* -device NAME,help: "  name=<type>", padded, " - description (default: x)"
 * when there is either, properties in name order (QEMU sorts them). */
static void list_properties(FILE *out, const struct cli_device_help *d)
{
	const struct cli_device_prop *sorted[CLI_DEVICE_MAX_PROPS];
	size_t n = 0;

	for (; n < CLI_DEVICE_MAX_PROPS && d->props[n].name; n++) {
		size_t j = n;

		while (j > 0 && strcmp(sorted[j - 1]->name, d->props[n].name) > 0) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = &d->props[n];
	}
	if (!n) {
		fprintf(out, "There are no options for %s.\n", d->name);
		return;
	}
	fprintf(out, "%s options:\n", d->name);
	for (size_t i = 0; i < n; i++) {
		const struct cli_device_prop *p = sorted[i];
		char left[64];

		snprintf(left, sizeof(left), "%s=<%s>", p->name, p->type);
		if (!p->desc && !p->def) {
			fprintf(out, "  %s\n", left);
			continue;
		}
		fprintf(out, "  %-22s - %s", left, p->desc ? p->desc : "");
		if (p->def)
			fprintf(out, " (default: %s)", p->def);
		fputc('\n', out);
	}
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* -cpu help: "x86 NAME  description", then the feature flags, wrapped. */
static void list_cpus(FILE *out)
{
	static const char *const extra[][2] = {
		{"max", "the same as host"},
		{"vmm", "old name of baseline"},
	};
	const char *names[256];
	size_t col = 0, n;

	fprintf(out, "Available CPUs:\n");
	for (unsigned i = 0; i < CPU_MODEL_COUNT; i++)
		fprintf(out, "x86 %-20s  %s\n", cpu_model_name(i), cpu_model_desc(i));
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		fprintf(out, "x86 %-20s  %s\n", extra[i][0], extra[i][1]);
	fprintf(out, "\nRecognized CPUID flags:\n");
	for (n = 0; n < 256 && cpu_feature_name(n); n++)
		names[n] = cpu_feature_name(n);
	qsort(names, n, sizeof(names[0]), compare_names);
	for (size_t i = 0; i < n; i++) {
		const char *f = names[i];

		if (col && col + 1 + strlen(f) > 75) {
			fputc('\n', out);
			col = 0;
		}
		col += (size_t)fprintf(out, "%s%s", col ? " " : "  ", f);
	}
	fprintf(out, "\n\n");
}

/* -machine help: "NAME  description", aliases and the default marked. */
static void list_machines(FILE *out)
{
	static const char *const rows[][2] = {
		{"pc", "Standard PC (i440FX + PIIX, 1996) (alias of pc-i440fx-7.2)"},
		{"pc-i440fx-7.2", "Standard PC (i440FX + PIIX, 1996) (default)"},
		{"q35", "Standard PC (Q35 + ICH9, 2009) (alias of pc-q35-7.2)"},
		{"pc-q35-7.2", "Standard PC (Q35 + ICH9, 2009)"},
		{"none", "empty machine"},
	};

	fprintf(out, "Supported machines are:\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		fprintf(out, "%-20s %s\n", rows[i][0], rows[i][1]);
}

int cli_print_help_topic(FILE *out, const struct vmm_config *cfg, char *err, size_t errlen)
{
	const struct cli_device_help *d;

	switch (cfg->help_topic) {
	case CLI_HELP_CPU:
		list_cpus(out);
		return 0;
	case CLI_HELP_MACHINE:
		list_machines(out);
		return 0;
	case CLI_HELP_DEVICES:
		list_devices(out);
		return 0;
	case CLI_HELP_DEVICE:
		d = cli_device_help_find(cfg->help_device);
		if (!d) {
			snprintf(err, errlen, "-device %s,help: Device '%s' not found",
				 cfg->help_device, cfg->help_device);
			return -1;
		}
		list_properties(out, d);
		return 0;
	case CLI_HELP_NETDEV:
		fprintf(out, "Available netdev backend types:\ntap\nuser\n");
		return 0;
	case CLI_HELP_NONE:
		break;
	}
	return 0;
}
