/* Unit tests for the help verbs and --help (vmm/cli_help.c, cli.c) and for
 * -smp as QEMU 7.2 reads it (vmm/topology.c). The expected -smp messages
 * and topologies are what qemu-system-x86_64 7.2 prints and reports
 * (query-cpus-fast) for the same -smp; tests/integration/cli-qemu.sh
 * compares the messages with a running QEMU. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/check_run.h"
#include "tests/unit/vmm/cli_args.h"
#include "vmm/cli/cli.h"

static struct vmm_config cfg;
static char err[512];

#define PARSE(...) cli_parse_list((const char *const[]){__VA_ARGS__, NULL}, &cfg, err, sizeof(err))

/* What a help topic prints, in a buffer the caller frees. */
static char *help_text(void)
{
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(cli_print_help_topic(f, &cfg, why, sizeof(why)), 0);
	fclose(f);
	return buf;
}

static char *usage_text(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cli_usage(f, "vmm");
	fclose(f);
	return buf;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

START_TEST(cpu_help)
{
	char line[128], *out;

	ck_assert_int_eq(PARSE("-cpu", "help"), 0);
	ck_assert_int_eq(cfg.help_topic, CLI_HELP_CPU);
	ck_assert_int_eq(PARSE("-cpu", "?", "-m", "bogus"), 0); /* help first, as QEMU */
	out = help_text();
	ck_assert(!strncmp(out, "Available CPUs:\n", 16));
	for (unsigned i = 0; cpu_model_name(i); i++) { /* QEMU's "x86 %-20s  %s" */
		snprintf(line, sizeof(line), "x86 %-20s  %s", cpu_model_name(i), cpu_model_desc(i));
		ck_assert_msg(has_line(out, line), "missing '%s'", line);
		/* and every model listed is one -cpu takes */
		ck_assert_int_eq(PARSE("-cpu", cpu_model_name(i)), 0);
	}
	ck_assert_ptr_nonnull(strstr(out, "\n\nRecognized CPUID flags:\n  "));
	for (unsigned i = 0; cpu_feature_name(i); i++) {
		snprintf(line, sizeof(line), " %s", cpu_feature_name(i));
		ck_assert_msg(strstr(out, line), "flag %s not listed", cpu_feature_name(i));
	}
	for (char *p = strstr(out, "flags:\n") + 7, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		ck_assert_uint_le((size_t)(nl - p), 75); /* wrapped as QEMU wraps */
	}
	free(out);
}
END_TEST

START_TEST(machine_help)
{
	char *out, *p, name[64];
	unsigned defaults = 0;

	ck_assert_int_eq(PARSE("-machine", "help"), 0);
	out = help_text();
	ck_assert(!strncmp(out, "Supported machines are:\n", 24));
	ck_assert(has_line(out, "pc                   Standard PC (i440FX + PIIX, 1996) "
				"(alias of pc-i440fx-7.2)"));
	/* every machine listed is one -machine takes; one is the default */
	for (p = strchr(out, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
		ck_assert_int_eq(sscanf(p, "%63s", name), 1);
		ck_assert_msg(p[strlen(name)] == ' ' && p[20] == ' ' && p[21] != ' ',
			      "layout of '%s'", name);
		defaults += !strncmp(strchr(p, '\n') - 9, "(default)", 9);
		ck_assert_msg(PARSE("-machine", name, "-kernel", "k") == 0, "-machine %s: %s", name,
			      err);
	}
	ck_assert_uint_eq(defaults, 1);
	free(out);
}
END_TEST

/* Every listed device parses with its setup and base properties. */
static int parse_device(const struct cli_device_help *d, const char *extra)
{
	char spec[256];

	snprintf(spec, sizeof(spec), "%s%s%s%s%s", d->name, d->base ? "," : "",
		 d->base ? d->base : "", extra ? "," : "", extra ? extra : "");
	if (d->setup[2])
		return PARSE(d->setup[0], d->setup[1], d->setup[2], d->setup[3], "-device", spec);
	if (d->setup[0])
		return PARSE(d->setup[0], d->setup[1], "-device", spec);
	return PARSE("-device", spec);
}

START_TEST(device_help)
{
	const struct cli_device_help *d;
	char line[256], *out;

	ck_assert_int_eq(PARSE("-device", "help"), 0);
	out = help_text();
	/* QEMU's order: bridges first, then USB, then storage */
	ck_assert(!strncmp(out, "Controller/Bridge/Hub devices:\nname \"pcie-root-port\"", 52));
	ck_assert_ptr_nonnull(strstr(out, "\n\nUSB devices:\nname \"piix3-usb-uhci\", bus PCI\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n\nStorage devices:\nname \"virtio-blk-pci\", bus PCI, "
					  "alias \"virtio-blk\"\n"));
	for (size_t i = 0; (d = cli_device_help_at(i)); i++) {
		snprintf(line, sizeof(line), "name \"%s\", bus %s", d->name, d->bus);
		ck_assert_msg(strstr(out, line), "%s not listed", d->name);
		ck_assert_msg(parse_device(d, NULL) == 0, "-device %s: %s", d->name, err);
	}
	ck_assert_ptr_nonnull(strstr(out, "\n\nMisc devices:\n"));
	free(out);
	/* an alias is the device */
	ck_assert_int_eq(PARSE("-netdev", "user,id=n0", "-device", "virtio-net,netdev=n0"), 0);
	ck_assert_uint_eq(cfg.n_nics, 1);
	ck_assert_int_eq(PARSE("-device", "e1000"), -1);
}
END_TEST

START_TEST(device_properties)
{
	const struct cli_device_help *d;
	char line[256], *out, *why = err;

	for (size_t i = 0; (d = cli_device_help_at(i)); i++) {
		snprintf(line, sizeof(line), "%s,help", d->name);
		ck_assert_int_eq(PARSE("-device", line), 0);
		ck_assert_int_eq(cfg.help_topic, CLI_HELP_DEVICE);
		out = help_text();
		if (!d->props[0].name) {
			snprintf(line, sizeof(line), "There are no options for %s.\n", d->name);
			ck_assert_str_eq(out, line);
		} else {
			snprintf(line, sizeof(line), "%s options:\n", d->name);
			ck_assert(!strncmp(out, line, strlen(line)));
		}
		for (const struct cli_device_prop *p = d->props; p->name; p++) {
			char *at;

			snprintf(line, sizeof(line), "\n  %s=<%s>", p->name, p->type);
			at = strstr(out, line);
			ck_assert_msg(at, "%s: %s not listed", d->name, p->name);
			/* QEMU's column: the dash at 25, or " - " after a longer name */
			if (p->desc || p->def)
				ck_assert_msg(at[1 + 25] == '-' || !strncmp(at + strlen(line), " - ", 3),
					      "%s", line);
			snprintf(line, sizeof(line), "%s=%s", p->name, p->sample);
			ck_assert_msg(parse_device(d, line) == 0, "-device %s,%s: %s", d->name,
				      line, why);
		}
		free(out);
		/* a property the list does not name is refused */
		ck_assert_msg(parse_device(d, "frobnicate=1") == -1, "%s", d->name);
	}
	ck_assert_int_eq(PARSE("-device", "virtio-net,?"), 0);
	ck_assert_str_eq(cfg.help_device, "virtio-net");
	out = help_text();
	ck_assert(!strncmp(out, "virtio-net-pci options:\n", 24));
	ck_assert(has_line(out, "  mq=<bool>              - on/off: one queue pair per -netdev "
				"queue (default: false)"));
	free(out);
	ck_assert_int_eq(PARSE("-device", "e1000,help"), 0);
	ck_assert_int_eq(cli_print_help_topic(stdout, &cfg, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "-device e1000,help: Device 'e1000' not found");
}
END_TEST

START_TEST(netdev_help)
{
	char *out, *p, spec[64];

	ck_assert_int_eq(PARSE("-netdev", "help"), 0);
	out = help_text();
	ck_assert(!strncmp(out, "Available netdev backend types:\n", 32));
	for (p = strchr(out, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
		snprintf(spec, sizeof(spec), "%.*s,id=x", (int)strcspn(p, "\n"), p);
		ck_assert_msg(PARSE("-netdev", spec) == 0, "-netdev %s: %s", spec, err);
	}
	free(out);
}
END_TEST

/* An argument list that parses for each option --help lists; options
 * that need another first name it. Refused options (vmm lacks the
 * feature) have none: their error must still not be "unknown option". */
static const struct {
	const char *opt;
	const char *args[4];
} examples[] = {
	{"-m", {"512"}},
	{"-smp", {"4,sockets=2,cores=2"}},
	{"-cpu", {"qemu64,+x2apic"}},
	{"-kernel", {"k.elf"}},
	{"-initrd", {"initrd.img"}},
	{"-append", {"console=ttyS0"}},
	{"-nographic", {NULL}},
	{"-serial", {"null"}},
	{"-monitor", {"none"}},
	{"-device", {"pc-testdev"}},
	{"-netdev", {"user,id=n0"}},
	{"-nic", {"user"}},
	{"-net", {"none"}},
	{"-nodefaults", {NULL}},
	{"-no-reboot", {NULL}},
	{"-vnc", {"none"}},
	{"-enable-kvm", {NULL}},
	{"-global", {"kvm-pit.lost_tick_policy=discard"}},
	{"-S", {NULL}},
	{"-incoming", {"defer"}},
	{"-name", {"guest=g1"}},
	{"-hda", {"disk.img"}},
	{"-hdb", {"disk.img"}},
	{"-hdc", {"disk.img"}},
	{"-hdd", {"disk.img"}},
	{"-cdrom", {"install.iso"}},
	{"-drive", {"file=disk.img,format=raw,if=virtio"}},
	{"-snapshot", {NULL}},
	{"-bios", {"bios.bin"}},
	{"-boot", {"order=c"}},
	{"-debugcon", {"null"}},
	{"-action", {"reboot=shutdown"}},
	{"-no-shutdown", {NULL}},
	{"-qmp", {"unix:q.sock,server,nowait"}},
	{"-chardev", {"socket,id=c0,path=q.sock,server=on,wait=off"}},
	{"-mon",
	 {"chardev=c0,mode=control", "-chardev", "socket,id=c0,path=q.sock,server=on,wait=off"}},
	{"-gdb", {"tcp::1234"}},
	{"-s", {NULL}},
	{"-daemonize", {NULL}},
	{"-pidfile", {"vmm.pid"}},
	{"-no-user-config", {NULL}},
	{"-accel", {"kvm"}},
	{"-object", {"memory-backend-ram,id=r0,size=64M"}},
	{"-blockdev", {"driver=file,node-name=f0,filename=disk.img"}},
	{"-overcommit", {"mem-lock=off"}},
	{"-uuid", {"6b1f2a6e-5f0c-4b0e-9d3b-2a1f0e9c8d7b"}},
	{"-display", {"none"}},
	{"-usb", {NULL}},
	{"-audiodev", {"none,id=a0"}},
	{"-rtc", {"base=utc"}},
	{"-no-acpi", {NULL}},
	{"-no-hpet", {NULL}},
	{"-msg", {"timestamp=on"}},
	{"-sandbox", {"on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"}},
	{"-runas", {"nobody"}},
	{"-chroot", {"/"}},
	{"-machine", {"pc,kernel_irqchip=split"}},
	{"-M", {"q35", "-kernel", "k"}},
	{"-help", {NULL}},
	{"-h", {NULL}},
	{"-version", {NULL}},
};

static int parse_example(size_t i)
{
	const char *argv[8] = {NULL};
	unsigned n = 0;

	if (examples[i].args[1]) { /* what it depends on first */
		argv[n++] = examples[i].args[1];
		argv[n++] = examples[i].args[2];
	}
	argv[n++] = examples[i].opt;
	if (examples[i].args[0])
		argv[n++] = examples[i].args[0];
	return cli_parse_list(argv, &cfg, err, sizeof(err));
}

/* --help is generated from the option table: every option the parser
 * takes is in it, every option in it parses, and no line is cut. */
START_TEST(usage_round_trip)
{
	char *out = usage_text(), *p, name[64];
	unsigned listed = 0, display = 0;

	for (size_t i = 0; cli_option_name(i); i++) {
		snprintf(name, sizeof(name), "\n  %s ", cli_option_name(i));
		ck_assert_msg(strstr(out, name), "%s missing from --help", cli_option_name(i));
	}
	for (p = out; (p = strstr(p, "\n  -")); p++) {
		size_t i, len = strcspn(p + 3, " \n");

		snprintf(name, sizeof(name), "%.*s", (int)len, p + 3);
		display += !strcmp(name, "-display");
		for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++)
			if (!strcmp(examples[i].opt, name))
				break;
		ck_assert_msg(i < sizeof(examples) / sizeof(examples[0]),
			      "%s in --help: add an example to this test", name);
		ck_assert_msg(parse_example(i) == 0, "%s: %s", name, err);
		listed++;
	}
	ck_assert_uint_eq(listed, sizeof(examples) / sizeof(examples[0]));
	ck_assert_uint_eq(display, 1);
	ck_assert_ptr_nonnull(strstr(out, "spawn=...,resourcecontrol=...]\n"));
	ck_assert_ptr_nonnull(strstr(out, "PVH"));
	free(out);
}
END_TEST

struct smp_case {
	const char *arg;
	unsigned cpus, sockets, dies, cores, threads;
	const char *error; /* QEMU 7.2's message, or NULL */
};

/* qemu-system-x86_64 -M pc -smp ARG (7.2): the topology query-cpus-fast
 * reports, or the error it prints. */
static const struct smp_case smp_cases[] = {
	{"4", 4, 1, 1, 4, 1, NULL},
	{"4,sockets=2", 4, 2, 1, 2, 1, NULL},
	{"sockets=2,cores=2", 4, 2, 1, 2, 1, NULL},
	{"4,sockets=2,cores=2", 4, 2, 1, 2, 1, NULL},
	{"cpus=6,cores=3", 6, 2, 1, 3, 1, NULL},
	{"8,dies=2,cores=2,threads=2", 8, 1, 2, 2, 2, NULL},
	{"0", 1, 1, 1, 1, 1, NULL}, /* deprecated: a warning, then as not given */
	{"sockets=0,cores=2", 2, 1, 1, 2, 1, NULL},
	{"4,sockets=2,cores=3", 0, 0, 0, 0, 0,
	 "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (2) * "
	 "dies (1) * cores (3) * threads (0) != maxcpus (4)"},
	{"4,sockets=2,cores=2,threads=2", 0, 0, 0, 0, 0,
	 "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (2) * "
	 "dies (1) * cores (2) * threads (2) != maxcpus (4)"},
	{"cpus=3,cores=2", 0, 0, 0, 0, 0,
	 "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (1) * "
	 "dies (1) * cores (2) * threads (1) != maxcpus (3)"},
	{"4,maxcpus=2", 0, 0, 0, 0, 0,
	 "Invalid CPU topology: maxcpus must be equal to or greater than smp: sockets (1) * "
	 "dies (1) * cores (2) * threads (1) == maxcpus (2) < smp_cpus (4)"},
	{"300", 0, 0, 0, 0, 0,
	 "Invalid SMP CPUs 300. The max CPUs supported by machine 'pc-i440fx-7.2' is 255"},
	{"foo=1", 0, 0, 0, 0, 0, "Parameter 'smp.foo' is unexpected"},
	{"x", 0, 0, 0, 0, 0, "Parameter 'smp.cpus' expects integer"},
	/* values whose products would overflow */
	{"sockets=65536,threads=65536", 0, 0, 0, 0, 0, "Parameter 'smp.sockets' is above 65535"},
	{"4,sockets=65535,dies=65535,threads=65535", 0, 0, 0, 0, 0,
	 "Invalid CPU topology: product of the hierarchy must match maxcpus: sockets (65535) * "
	 "dies (65535) * cores (0) * threads (65535) != maxcpus (4)"},
	/* vmm's own limits: no CPU hot-plug, xAPIC IDs */
	{"2,maxcpus=4", 0, 0, 0, 0, 0,
	 "maxcpus=4 above the 2 CPUs present needs CPU hot-plug, which vmm does not have"},
	{"sockets=65,cores=3", 0, 0, 0, 0, 0,
	 "this topology needs APIC IDs up to 258; vmm's xAPIC machine has at most 254"},
	{"sockets=64,cores=3", 192, 64, 1, 3, 1, NULL}, /* the last APIC ID is 254 */
};

START_TEST(smp_topology)
{
	const struct smp_case *c = &smp_cases[_i];
	char want[300];

	if (c->error) {
		ck_assert_int_eq(PARSE("-smp", c->arg), -1);
		snprintf(want, sizeof(want), "-smp: %s", c->error);
		ck_assert_str_eq(err, want);
		return;
	}
	ck_assert_msg(PARSE("-smp", c->arg) == 0, "-smp %s: %s", c->arg, err);
	ck_assert_uint_eq(cfg.smp, c->cpus);
	ck_assert_uint_eq(cfg.topo.sockets, c->sockets);
	ck_assert_uint_eq(cfg.topo.dies, c->dies);
	ck_assert_uint_eq(cfg.topo.cores, c->cores);
	ck_assert_uint_eq(cfg.topo.threads, c->threads);
}
END_TEST

START_TEST(smp_machine_and_irqchip)
{
	/* the limit names the machine, whichever order the options come in */
	ck_assert_int_eq(PARSE("-smp", "300", "-M", "q35"), -1);
	ck_assert_ptr_nonnull(strstr(err, "machine 'pc-q35-7.2'"));
	/* vmm's own APICs take the topology's IDs, gaps included */
	ck_assert_int_eq(PARSE("-smp", "sockets=2,cores=3", "-machine", "kernel_irqchip=off"), 0);
	ck_assert_uint_eq(cfg.smp, 6);
	ck_assert_int_eq(PARSE("-smp", "cores=4", "-machine", "kernel_irqchip=off"), 0);
	ck_assert_int_eq(PARSE("-m", "64"), 0);
	ck_assert_uint_eq(cfg.smp, 1);
}
END_TEST

/* QEMU's APIC IDs: a field per level, each as wide as its count needs. */
START_TEST(apic_id_layout)
{
	static const unsigned sockets2_cores3[] = {0, 1, 2, 4, 5, 6};
	static const unsigned dies2_cores3_threads2[] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13};

	ck_assert_int_eq(PARSE("-smp", "sockets=2,cores=3"), 0);
	for (unsigned i = 0; i < 6; i++)
		ck_assert_uint_eq(topo_apic_id(&cfg.topo, i), sockets2_cores3[i]);
	ck_assert_int_eq(PARSE("-smp", "12,dies=2,cores=3,threads=2"), 0);
	ck_assert_uint_eq(topo_core_offset(&cfg.topo), 1);
	ck_assert_uint_eq(topo_die_offset(&cfg.topo), 3);
	ck_assert_uint_eq(topo_pkg_offset(&cfg.topo), 4);
	for (unsigned i = 0; i < 12; i++)
		ck_assert_uint_eq(topo_apic_id(&cfg.topo, i), dies2_cores3_threads2[i]);
	ck_assert_int_eq(PARSE("-smp", "4"), 0); /* one socket of 4 cores: dense */
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(topo_apic_id(&cfg.topo, i), i);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vmm_cli_help");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cpu_help);
	tcase_add_test(tc, machine_help);
	tcase_add_test(tc, device_help);
	tcase_add_test(tc, device_properties);
	tcase_add_test(tc, netdev_help);
	tcase_add_test(tc, usage_round_trip);
	tcase_add_loop_test(tc, smp_topology, 0, sizeof(smp_cases) / sizeof(smp_cases[0]));
	tcase_add_test(tc, smp_machine_and_irqchip);
	tcase_add_test(tc, apic_id_layout);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
