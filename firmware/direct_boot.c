/* direct_boot.c — what the Linux (bzImage) and PVH loaders share: the MP
 * and ACPI tables in the last 4 KiB of base memory, the e820 map with
 * that area reserved, a flat boot GDT, the command line and the initrd. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/dev_host.h"
#include "firmware/firmware.h"

#define BDA_EBDA_SEG 0x40e	/* BIOS data area: EBDA segment */
#define PAGE 4096ull
#define GiB4 0x100000000ull
#define RSDP_V2_LEN 36
/* A copy of the RSDP in the BIOS area, the other place ACPI says to scan
 * (and the only one kvm-unit-tests scan). */
#define BIOS_AREA_RSDP_GPA 0xe0000u

int fw_tables_build(const struct boot_request *req, uint64_t *rsdp, char *err, size_t errlen)
{
	struct guest_mem *mem = req->mem;
	unsigned ncpus = req->ncpus;
	uint8_t *buf = guest_mem_ptr(mem, FW_TABLES_GPA, FW_TABLES_SIZE);
	uint16_t ebda_seg = FW_TABLES_GPA >> 4;
	int len = 0, mp;

	if (!buf || guest_mem_write(mem, BDA_EBDA_SEG, &ebda_seg, 2) < 0) {
		snprintf(err, errlen, "guest RAM does not cover the BIOS tables at %#x",
			 FW_TABLES_GPA);
		return -EFAULT;
	}
	memset(buf, 0, FW_TABLES_SIZE); /* no RSDP left from an earlier boot */
	if (!req->no_acpi)
		len = acpi_build_dmar(buf, FW_TABLES_SIZE, FW_TABLES_GPA, ncpus, req->apic_ids,
				      req->pvpanic_port,
				      req->dmar | (req->q35 ? ACPI_MACHINE_Q35 : 0) |
					      (req->no_s3 ? ACPI_NO_S3 : 0));
	if (len < 0) {
		snprintf(err, errlen, "ACPI tables for %u CPUs: %s", ncpus, strerror(-len));
		return len;
	}
	len = (len + 15) & ~15;
	/* The MP floating pointer must sit in the last KiB of base memory,
	 * which FW_TABLES_GPA + 0xc00 is; the config table follows it. */
	if (len > 0xc00)
		return snprintf(err, errlen, "ACPI tables too large (%d bytes)", len), -ENOSPC;
	mp = mptable_build(buf + 0xc00, FW_TABLES_SIZE - 0xc00, FW_TABLES_GPA + 0xc00, ncpus,
			   req->apic_ids);
	if (mp < 0) {
		snprintf(err, errlen, "MP table for %u CPUs: %s", ncpus, strerror(-mp));
		return mp;
	}
	if (rsdp)
		*rsdp = req->no_acpi ? 0 : FW_TABLES_GPA;
	/* no shadow RAM there (a bare guest_mem in tests): the EBDA copy stays */
	if (!req->no_acpi)
		guest_mem_write(mem, BIOS_AREA_RSDP_GPA, buf, RSDP_V2_LEN);
	return 0;
}

static uint32_t gm_le32(const struct guest_mem *mem, uint64_t gpa)
{
	uint8_t b[4] = {0};

	guest_mem_read(mem, gpa, b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The RSDP: where fw_tables_build puts it, else where SeaBIOS's table
 * loader did (16-byte aligned in the BIOS area); 0 when none. */
static uint32_t find_rsdp(const struct guest_mem *mem)
{
	uint8_t b[20];

	if (guest_mem_read(mem, FW_TABLES_GPA, b, 8) == 0 && !memcmp(b, "RSD PTR ", 8))
		return FW_TABLES_GPA;
	for (uint32_t at = BIOS_AREA_RSDP_GPA; at < 0x100000; at += 16)
		if (guest_mem_read(mem, at, b, sizeof(b)) == 0 && !memcmp(b, "RSD PTR ", 8) &&
		    fw_checksum(b, sizeof(b)) == 0)
			return at;
	return 0;
}

uint32_t fw_acpi_waking_vector(const struct guest_mem *mem)
{
	uint32_t rsdp = find_rsdp(mem), rsdt = rsdp ? gm_le32(mem, rsdp + 16) : 0;
	uint32_t len = gm_le32(mem, rsdt + 4);

	for (uint32_t at = rsdt + 36; rsdt && len <= FW_TABLES_SIZE && at + 4 <= rsdt + len;
	     at += 4) {
		uint32_t t = gm_le32(mem, at), facs;

		if (gm_le32(mem, t) != 0x50434146u) /* "FACP" */
			continue;
		facs = gm_le32(mem, t + 36);
		return facs ? gm_le32(mem, facs + 12) : 0;
	}
	return 0;
}

static int e820_add(struct e820_map *m, uint64_t addr, uint64_t size, uint32_t type)
{
	if (!size)
		return 0;
	if (m->n == E820_MAX_ENTRIES)
		return -ENOSPC;
	m->e[m->n++] = (struct e820_entry){addr, size, type};
	return 0;
}

int fw_e820_with_tables(const struct e820_map *src, struct e820_map *dst)
{
	const uint64_t lo = FW_TABLES_GPA, hi = FW_TABLES_GPA + FW_TABLES_SIZE;
	int ret = 0;

	dst->n = 0;
	for (unsigned i = 0; i < src->n && !ret; i++) {
		const struct e820_entry *e = &src->e[i];
		uint64_t end = e->addr + e->size;

		if (e->type != E820_RAM || end <= lo || e->addr >= hi) {
			ret = e820_add(dst, e->addr, e->size, e->type);
			continue;
		}
		ret = e820_add(dst, e->addr, e->addr < lo ? lo - e->addr : 0, E820_RAM);
		if (!ret && end > hi)
			ret = e820_add(dst, hi, end - hi, E820_RAM);
	}
	return ret ? ret : e820_add(dst, lo, hi - lo, E820_RESERVED);
}

int fw_write_boot_gdt(struct guest_mem *mem, struct boot_cpu_state *cpu)
{
	static const uint64_t gdt[] = {
		0,
		0x00cf9b000000ffffull, /* 0x08: 32-bit code, flat 4 GiB */
		0x00af9b000000ffffull, /* 0x10: 64-bit code */
		0x00cf93000000ffffull, /* 0x18: data, flat 4 GiB */
	};

	if (guest_mem_write(mem, FW_BOOT_GDT_GPA, gdt, sizeof(gdt)) < 0)
		return -EFAULT;
	cpu->gdt_base = FW_BOOT_GDT_GPA;
	cpu->gdt_limit = sizeof(gdt) - 1;
	return 0;
}

int fw_write_cmdline(const struct boot_request *req, size_t max, char *err, size_t errlen)
{
	size_t len = strlen(req->cmdline) + 1;

	if (len > max || len > FW_CMDLINE_MAX) {
		snprintf(err, errlen, "-append: command line is %zu bytes, the kernel takes %zu",
			 len - 1, (max < FW_CMDLINE_MAX ? max : FW_CMDLINE_MAX) - 1);
		return -E2BIG;
	}
	if (guest_mem_write(req->mem, FW_CMDLINE_GPA, req->cmdline, len) < 0) {
		snprintf(err, errlen, "-append: guest RAM too small for the command line");
		return -EFAULT;
	}
	return 0;
}

uint64_t fw_low_ram_end(const struct e820_map *e820)
{
	uint64_t top = 0;

	for (unsigned i = 0; i < e820->n; i++) {
		const struct e820_entry *e = &e820->e[i];
		uint64_t end = e->addr + e->size;

		if (e->type == E820_RAM && e->addr < GiB4 && end > top)
			top = end < GiB4 ? end : GiB4;
	}
	return top;
}

static int read_all(int fd, uint8_t *dst, uint64_t size)
{
	while (size) {
		ssize_t n = read(fd, dst, size > (1u << 30) ? 1u << 30 : size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		dst += n;
		size -= n;
	}
	return 0;
}

int fw_load_initrd(const struct boot_request *req, const struct e820_map *e820, uint64_t floor,
		   uint64_t limit, uint64_t *gpa, uint64_t *size, char *err, size_t errlen)
{
	uint64_t top = fw_low_ram_end(e820), at;
	struct stat st;
	uint8_t *dst;
	int fd, ret;

	*gpa = *size = 0;
	if (!req->initrd_path)
		return 0;
	fd = open(req->initrd_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err, errlen, "-initrd %s: %s", req->initrd_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	if (limit < top)
		top = limit;
	at = ((uint64_t)st.st_size <= top ? top - st.st_size : 0) & ~(PAGE - 1);
	dst = guest_mem_ptr(req->mem, at, st.st_size);
	if ((uint64_t)st.st_size > top || at < floor || !dst) {
		snprintf(err, errlen,
			 "-initrd %s: %lld MiB does not fit in guest RAM between the kernel "
			 "(ends at %llu MiB) and %llu MiB; raise -m",
			 req->initrd_path, (long long)st.st_size >> 20,
			 (unsigned long long)floor >> 20, (unsigned long long)top >> 20);
		close(fd);
		return -ENOMEM;
	}
	ret = read_all(fd, dst, st.st_size);
	close(fd);
	if (ret < 0) {
		snprintf(err, errlen, "-initrd %s: %s", req->initrd_path, strerror(-ret));
		return ret;
	}
	*gpa = at;
	*size = st.st_size;
	return 0;
}
