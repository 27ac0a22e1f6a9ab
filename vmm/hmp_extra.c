/* hmp_extra.c — more of QEMU's HMP: info version|kvm|name|uuid and
 * memsave / pmemsave (guest memory to a file). The monitor's table
 * (monitor.c) points here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build/config.h"
#include "vmm/monitor.h"

static void info_version(void *opaque, FILE *out)
{
	fprintf(out, "vmm %s\n", VMM_VERSION);
}

static void info_kvm(void *opaque, FILE *out)
{
	fprintf(out, "kvm support: enabled\n");
}

static void info_name(void *opaque, FILE *out)
{
	const struct machine *m = opaque;

	if (m->cfg->name)
		fprintf(out, "%s\n", m->cfg->name);
}

static void info_uuid(void *opaque, FILE *out)
{
	const struct machine *m = opaque;
	char uuid[37];

	cli_uuid_string(m->cfg, uuid);
	fprintf(out, "%s\n", uuid);
}

void hmp_extra_init(struct machine *m)
{
	monitor_add_info("version", "the vmm version", info_version, m);
	monitor_add_info("kvm", "whether KVM is in use (always)", info_kvm, m);
	monitor_add_info("name", "the guest name (-name)", info_name, m);
	monitor_add_info("uuid", "the machine UUID", info_uuid, m);
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
