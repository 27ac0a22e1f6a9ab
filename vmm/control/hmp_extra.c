/* hmp_extra.c — more of QEMU's HMP: info version|kvm|name|uuid|chardev|
 * qtree and memsave / pmemsave (guest memory to a file). The monitor's
 * table (monitor.c) points here. As in QEMU, `info chardev` and the PCI
 * part of `info qtree` print what the QMP queries answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "vmm/control/gdbstub.h"
#include "vmm/control/monitor.h"
#include "vmm/control/qmp_commands.h"

#define ISA_IO_END 0x1000 /* ISA devices decode ports below; PCI BARs sit above */

void hmp_info_version(void *opaque, FILE *out)
{
	fprintf(out, "vmm %s\n", VMM_VERSION);
}

void hmp_info_kvm(void *opaque, FILE *out)
{
	fprintf(out, "kvm support: enabled\n");
}

void hmp_info_name(void *opaque, FILE *out)
{
	const struct machine *m = opaque;

	if (m->cfg->name)
		fprintf(out, "%s\n", m->cfg->name);
}

void hmp_info_uuid(void *opaque, FILE *out)
{
	const struct machine *m = opaque;
	char uuid[37];

	cli_uuid_string(m->cfg, uuid);
	fprintf(out, "%s\n", uuid);
}

/* The answer of a QMP query (NULL if it failed). */
static json_t *qmp_query(struct machine *m, const char *name)
{
	const struct qmp_command *c = qmp_find_command(name);
	struct qmp_error e = {0};
	json_t *ret = NULL;

	if (!c || c->fn(m, NULL, &ret, &e) < 0)
		return NULL;
	return ret;
}

/* serial0: filename=stdio */
void hmp_info_chardev(void *opaque, FILE *out)
{
	json_t *list = qmp_query(opaque, "query-chardev"), *c;
	size_t i;

	json_array_foreach(list, i, c)
		fprintf(out, "%s: filename=%s\n", json_string_value(json_object_get(c, "label")),
			json_string_value(json_object_get(c, "filename")));
	json_decref(list);
}

/* QEMU's HMP form of ring data: a backslash doubled, control bytes other
 * than newline and tab as \uXXXX. */
static void print_ring_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\\')
			fputs("\\\\", out);
		else if ((ch < 0x20 && ch != '\n' && ch != '\t') || ch == 0x7f)
			fprintf(out, "\\u%04X", ch);
		else
			fputc(ch, out);
	}
	fputc('\n', out);
}

void hmp_ringbuf(struct machine *m, int argc, char **argv, FILE *out, bool read)
{
	const struct qmp_command *c = qmp_find_command(read ? "ringbuf-read" : "ringbuf-write");
	struct qmp_error e = {0};
	json_t *args, *ret = NULL;
	long long size = 0;
	char *end = NULL;

	if (read && argc == 3)
		size = strtoll(argv[2], &end, 0);
	if (argc != 3 || !m || (read && (end == argv[2] || *end))) {
		fprintf(out, "usage: %s DEVICE %s\n", argv[0], read ? "SIZE" : "DATA");
		return;
	}
	args = read ? json_pack("{s:s,s:I}", "device", argv[1], "size", (json_int_t)size)
		    : json_pack("{s:s,s:s}", "device", argv[1], "data", argv[2]);
	if (!args || c->fn(m, args, &ret, &e) < 0)
		fprintf(out, "Error: %s\n", args ? e.desc : "out of memory");
	else if (read)
		print_ring_text(out, json_string_value(ret));
	json_decref(args);
	json_decref(ret);
}

static void qtree_pci_dev(FILE *out, struct machine *m, json_t *dev)
{
	json_t *cls = json_object_get(dev, "class_info"), *id = json_object_get(dev, "id"), *r;
	unsigned slot = (unsigned)json_integer_value(json_object_get(dev, "slot"));
	unsigned fn = (unsigned)json_integer_value(json_object_get(dev, "function"));
	const struct pci_dev *d = pci_bus_find(m->pci, (uint8_t)(slot << 3 | fn));
	const char *desc = json_string_value(json_object_get(cls, "desc"));
	size_t i;

	fprintf(out, "      dev: %s, id \"\"\n", d && d->name ? d->name : "?");
	fprintf(out, "        addr = %02x.%x\n", slot, fn);
	fprintf(out,
		"        class %s, addr 00:%02x.%x, pci id %04llx:%04llx (sub %04llx:%04llx)\n",
		desc ? desc : "Class", slot, fn,
		(long long)json_integer_value(json_object_get(id, "vendor")),
		(long long)json_integer_value(json_object_get(id, "device")),
		(long long)json_integer_value(json_object_get(id, "subsystem-vendor")),
		(long long)json_integer_value(json_object_get(id, "subsystem")));
	json_array_foreach(json_object_get(dev, "regions"), i, r)
	{
		long long a = json_integer_value(json_object_get(r, "address"));
		long long size = json_integer_value(json_object_get(r, "size"));
		bool io = !strcmp(json_string_value(json_object_get(r, "type")), "io");

		fprintf(out, "        bar %lld: %s at %#llx [%#llx]\n",
			(long long)json_integer_value(json_object_get(r, "bar")),
			io ? "i/o" : "mem", a < 0 ? -1ll : a, a < 0 ? -2ll : a + size - 1);
	}
}

static void qtree_isa_region(const struct io_region *r, void *arg)
{
	FILE *out = arg;

	/* isa_empty's placeholders for absent devices are not devices */
	if (r->base >= ISA_IO_END || (r->name && strstr(r->name, "(absent)")))
		return;
	fprintf(out, "      dev: %s, id \"\"\n", r->name ? r->name : "?");
	fprintf(out, "        ioport %#llx-%#llx\n", (unsigned long long)r->base,
		(unsigned long long)(r->base + r->len - 1));
}

/* The device tree as QEMU prints it: the PCI bus behind the host bridge
 * with each function's ids and BARs, then the ISA devices by port. */
void hmp_info_qtree(void *opaque, FILE *out)
{
	struct machine *m = opaque;
	json_t *buses = qmp_query(m, "query-pci"), *dev;
	size_t i;

	fprintf(out, "bus: main-system-bus\n  type System\n");
	fprintf(out, "  dev: i440FX-pcihost, id \"\"\n    bus: pci.0\n      type PCI\n");
	json_array_foreach(json_object_get(json_array_get(buses, 0), "devices"), i, dev)
		qtree_pci_dev(out, m, dev);
	json_decref(buses);
	fprintf(out, "  dev: PIIX3, id \"\"\n    bus: isa.0\n      type ISA\n");
	iobus_foreach(m->host.pio, qtree_isa_region, out);
}

void hmp_gdbserver(void *opaque, int argc, char **argv, FILE *out)
{
	struct machine *m = opaque;
	const char *dev = argc > 1 ? argv[1] : "tcp::1234";
	struct listen_spec spec;
	char err[200];

	if (!strcmp(dev, "none")) {
		gdbstub_hmp(opaque, NULL, dev, out);
		return;
	}
	/* Opening a listening socket is set-up work, off the sandbox's list. */
	if (m->cfg->control.sandbox.on) {
		fprintf(out,
			"gdbserver: not under -sandbox on (it opens a socket); start vmm "
			"with -gdb %s instead\n",
			dev);
		return;
	}
	if (cli_parse_listen(dev, false, &spec, err, sizeof(err)) < 0) {
		fprintf(out, "gdbserver: %s\n", err);
		return;
	}
	gdbstub_hmp(opaque, &spec, dev, out);
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* memsave ADDR SIZE FILE (virtual, through vCPU 0) / pmemsave (physical). */
void hmp_save_memory(struct machine *m, int argc, char **argv, FILE *out, bool virt)
{
	uint64_t addr, size;
	uint8_t buf[4096];
	FILE *f;

	if (argc != 4 || parse_u64(argv[1], &addr) < 0 || parse_u64(argv[2], &size) < 0) {
		fprintf(out, "usage: %s ADDR SIZE FILE\n", argv[0]);
		return;
	}
	f = fopen(argv[3], "wb");
	if (!f) {
		fprintf(out, "%s: cannot open %s: %s\n", argv[0], argv[3], strerror(errno));
		return;
	}
	for (uint64_t done = 0; done < size;) {
		size_t n = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		int ret = virt ? vcpu_read_linear(&m->vcpus[0], addr + done, buf, n)
			       : guest_mem_read(&m->mem, addr + done, buf, n);

		if (ret < 0) {
			fprintf(out, "%s: cannot access memory at %#llx\n", argv[0],
				(unsigned long long)(addr + done));
			break;
		}
		if (fwrite(buf, 1, n, f) != n) {
			fprintf(out, "%s: cannot write %s\n", argv[0], argv[3]);
			break;
		}
		done += n;
	}
	if (fclose(f) != 0)
		fprintf(out, "%s: cannot write %s\n", argv[0], argv[3]);
}
