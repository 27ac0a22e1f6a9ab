/* boot.c — -kernel: read the file, offer it to each loader in turn, and
 * turn the winner's boot_cpu_state into vCPU registers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "vmm/machine.h"

#define KERNEL_MAX_SIZE (1ull << 30)
#define NOT_A_KERNEL "not a kernel vmm can boot (not multiboot, a Linux bzImage or a PVH ELF)"

/* Multiboot has no tables of its own, so the VMM adds the MP table and
 * ACPI (smp.elf needs one) after the image is loaded; the loader sees an
 * e820 map with that page reserved, so modules never land on it. The Linux
 * and PVH loaders do both themselves. */
static int multiboot_with_tables(const struct boot_request *req, struct boot_cpu_state *cpu,
				 char *err, size_t errlen)
{
	struct boot_request mb = *req;
	struct e820_map e820;
	int ret;

	if (fw_e820_with_tables(req->e820, &e820) < 0)
		return snprintf(err, errlen, "e820: too many entries"), -ENOSPC;
	mb.e820 = &e820;
	ret = multiboot_load(&mb, cpu, err, errlen);
	if (ret)
		return ret;
	return fw_tables_build(req, NULL, err, errlen);
}

/* Tried in order; the first that does not answer -ENOEXEC wins.
 * Multiboot first: its header is searched for explicitly, while the
 * Linux and PVH loaders recognise their own formats. */
static const struct {
	const char *name;
	boot_loader_fn load;
} loaders[] = {
	{"multiboot", multiboot_with_tables},
	{"linux", linux_load},
	{"pvh", pvh_load},
};

/* The image is read into its own anonymous mapping, not malloc's heap,
 * and unmapped once loaded: that returns its pages (8 MiB for a distro
 * kernel) to the host at once. A malloc'ed buffer this size that is freed
 * also raises glibc's dynamic mmap threshold to its size, so the next one
 * lands on the heap and stays resident there after its free. */
static void release_file(uint8_t *data, size_t size)
{
	if (data)
		munmap(data, size);
}

/* The whole of the open file fd (path for messages) into a fresh mapping. */
static int read_fd(int fd, const char *path, uint8_t **data, size_t *size, char *err,
		   size_t errlen)
{
	struct stat st;
	size_t done = 0;
	void *buf;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
	    (uint64_t)st.st_size > KERNEL_MAX_SIZE) {
		snprintf(err, errlen, "-kernel %s: not a regular, non-empty file under 1 GiB",
			 path);
		return -1;
	}
	buf = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (buf == MAP_FAILED) {
		snprintf(err, errlen, "-kernel %s: out of memory", path);
		return -1;
	}
	*data = buf;
	while (done < (size_t)st.st_size) {
		ssize_t n = pread(fd, *data + done, (size_t)st.st_size - done, (off_t)done);

		if (n <= 0) {
			snprintf(err, errlen, "-kernel %s: read: %s", path,
				 n < 0 ? strerror(errno) : "file shrank");
			release_file(*data, (size_t)st.st_size);
			*data = NULL;
			return -1;
		}
		done += (size_t)n;
	}
	*size = done;
	return 0;
}

static int open_kernel(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		snprintf(err, errlen, "-kernel: could not load kernel '%s': %s", path,
			 strerror(errno));
	return fd;
}

/* A loader's signature: a multiboot header (magic, flags and checksum
 * summing to 0, 4-aligned in the first 8 KiB), a Linux setup header
 * ("HdrS" at 0x202) or an ELF image (PVH, multiboot ELF). */
static bool looks_bootable(const uint8_t *k, size_t size)
{
	for (size_t off = 0; off + 12 <= size && off < 8192; off += 4) {
		uint32_t w[3];

		memcpy(w, k + off, sizeof(w));
		if (w[0] == 0x1badb002u && w[0] + w[1] + w[2] == 0)
			return true;
	}
	if (size > 0x206 && !memcmp(k + 0x202, "HdrS", 4))
		return true;
	return size > 4 && !memcmp(k,
				   "\x7f"
				   "ELF",
				   4);
}

/* -initrd: one file, or multiboot's "file args,file2" list (",," a comma). */
static int check_initrd(const char *list, char *err, size_t errlen)
{
	char path[4096];

	if (access(list, R_OK) == 0)
		return 0;
	while (*list) {
		size_t n = 0;

		for (; *list && !(*list == ',' && list[1] != ','); list++) {
			if (*list == ',')
				list++;
			if (n < sizeof(path) - 1)
				path[n++] = *list;
		}
		path[n] = 0;
		path[strcspn(path, " ")] = 0; /* the module's arguments follow */
		if (access(path, R_OK) < 0) {
			snprintf(err, errlen, "-initrd: could not load initrd '%s': %s", path,
				 strerror(errno));
			return -1;
		}
		list += *list == ',';
	}
	return 0;
}

int boot_check_kernel(const struct vmm_config *cfg, char *err, size_t errlen)
{
	uint8_t *data = NULL;
	size_t size = 0;
	int fd, ret;
	bool ok;

	if (!cfg->kernel)
		return cfg->initrd
		       ? snprintf(err, errlen, "-initrd only allowed with -kernel option"),
		       -1 : 0;
	fd = open_kernel(cfg->kernel, err, errlen);
	if (fd < 0)
		return -1;
	ret = read_fd(fd, cfg->kernel, &data, &size, err, errlen);
	close(fd);
	if (ret < 0)
		return -1;
	ok = looks_bootable(data, size);
	release_file(data, size);
	if (!ok) {
		snprintf(err, errlen, "-kernel %s: " NOT_A_KERNEL, cfg->kernel);
		return -1;
	}
	return cfg->initrd ? check_initrd(cfg->initrd, err, errlen) : 0;
}

/* What SeaBIOS would do before booting: PIIX3 PIRQA-D to the IRQs the
 * DSDT's _PRT promises (firmware/acpi.c); on q35 the ICH9's PIRQA-H, its
 * ACPI PM block at ACPI_PM_BASE, and the ECAM window the MCFG names. */
static void route_pci_irqs(struct machine *m)
{
	const uint8_t piix3_devfn = 1 << 3, pirq_reg = 0x60;

	if (!m->pci)
		return;
	if (m->lpc) {
		ich9_lpc_firmware_setup(m->lpc, ACPI_PM_BASE, pc_pirq_gsi);
		q35_mch_enable_ecam(m->i440fx);
		return;
	}
	for (unsigned i = 0; i < 4; i++)
		pci_cfg_write(m->pci, piix3_devfn, pirq_reg + i, 1, pc_pirq_gsi[i]);
}

/* What a BIOS leaves behind: the host bridge's PAM registers put shadow
 * RAM behind 0xc0000-0xfffff, read-write, so that the loaders' ELF
 * segments there and the RSDP in the BIOS area are what the guest reads. */
static void shadow_bios_area(struct machine *m)
{
	if (m->i440fx)
		i440fx_shadow_all(m->i440fx);
}

/* -device pvpanic's port, for the DSDT; 0 without one. */
uint16_t boot_pvpanic_port(const struct vmm_config *cfg)
{
	for (unsigned i = 0; i < cfg->n_devices; i++)
		if (cfg->devices[i].kind == DEVICE_PVPANIC)
			return cfg->devices[i].iobase;
	return 0;
}

/* -device intel-iommu's DMAR table flags (firmware/acpi.c); 0: none. */
unsigned boot_dmar_flags(const struct iommu_spec *s)
{
	if (!s->present)
		return 0;
	return ACPI_DMAR_PRESENT | (s->intremap ? ACPI_DMAR_INTR_REMAP : 0) |
	       (s->intremap && !s->eim ? ACPI_DMAR_X2APIC_OPT_OUT : 0);
}

/* Offer the image to each loader in turn: 0, or -1 with err set. */
static int run_loaders(struct machine *m, const struct boot_request *req, char *err,
		       size_t errlen)
{
	const struct vmm_config *cfg = m->cfg;
	char why[256] = "";

	shadow_bios_area(m);
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
		int ret;

		memset(&m->boot, 0, sizeof(m->boot));
		ret = loaders[i].load(req, &m->boot, why, sizeof(why));
		if (ret == 0) {
			m->direct_boot = true;
			route_pci_irqs(m);
			/* QEMU boots multiboot kernels through SeaBIOS */
			if (m->pci && loaders[i].load == multiboot_with_tables)
				fw_pci_setup(m->pci, cfg->q35);
			return 0;
		}
		if (ret != -ENOEXEC) {
			snprintf(err, errlen, "-kernel %s: %s: %s", cfg->kernel, loaders[i].name,
				 why[0] ? why : strerror(-ret));
			return -1;
		}
	}
	snprintf(err, errlen, "-kernel %s: " NOT_A_KERNEL, cfg->kernel);
	return -1;
}

int boot_load_kernel(struct machine *m, char *err, size_t errlen)
{
	const struct vmm_config *cfg = m->cfg;
	struct boot_request req;
	uint8_t *kernel = NULL;
	size_t kernel_size = 0;
	int ret;

	/* Read again on each reset: the loaders copy what they need into
	 * guest RAM, so no copy is kept between boots. */
	if (m->kernel_fd < 0 && (m->kernel_fd = open_kernel(cfg->kernel, err, errlen)) < 0)
		return -1;
	if (read_fd(m->kernel_fd, cfg->kernel, &kernel, &kernel_size, err, errlen) < 0)
		return -1;
	req = (struct boot_request){
		.kernel_path = cfg->kernel,
		.kernel = kernel,
		.kernel_size = kernel_size,
		.initrd_path = cfg->initrd,
		.cmdline = cfg->append ? cfg->append : "",
		.ncpus = m->ncpus,
		.apic_ids = m->apic_ids,
		.mem = &m->mem,
		.e820 = &m->e820,
		.no_acpi = cfg->lv.no_acpi,
		.pvpanic_port = boot_pvpanic_port(cfg),
		.dmar = boot_dmar_flags(&cfg->iommu),
		.q35 = cfg->q35,
		.no_s3 = cfg->lv.no_s3,
	};
	ret = run_loaders(m, &req, err, errlen);
	release_file(kernel, kernel_size);
	return ret;
}

/* Flat 4 GiB segments; code is 32-bit (db) or 64-bit (l). */
static struct kvm_segment flat_segment(uint16_t selector, bool code, bool long_mode)
{
	return (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = selector,
		.type = code ? 0xb : 0x3, /* execute/read or read/write, accessed */
		.present = 1,
		.s = 1,
		.g = 1,
		.db = code && long_mode ? 0 : 1,
		.l = code && long_mode,
	};
}

#define BOOT_CS 0x10
#define BOOT_DS 0x18
#define CR0_PE 0x1ull
#define CR0_MP 0x2ull
#define CR0_ET 0x10ull
#define CR0_NE 0x20ull
#define CR0_WP 0x10000ull
#define CR0_AM 0x40000ull
#define CR0_PG 0x80000000ull
#define CR4_PAE 0x20ull
#define EFER_LME 0x100ull
#define EFER_LMA 0x400ull

void boot_state_to_regs(const struct boot_cpu_state *b, struct kvm_regs *regs,
			struct kvm_sregs *sregs)
{
	bool lm = b->mode == BOOT_MODE_LONG64;

	if (b->mode == BOOT_MODE_RESET)
		return; /* the power-on state is already what KVM gave us */
	memset(regs, 0, sizeof(*regs));
	regs->rip = b->rip;
	regs->rsp = b->rsp;
	regs->rax = b->rax;
	regs->rbx = b->rbx;
	regs->rcx = b->rcx;
	regs->rdx = b->rdx;
	regs->rsi = b->rsi;
	regs->rdi = b->rdi;
	regs->rflags = 0x2;

	sregs->cs = flat_segment(BOOT_CS, true, lm);
	sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss =
		flat_segment(BOOT_DS, false, lm);
	sregs->gdt.base = b->gdt_base;
	sregs->gdt.limit = b->gdt_base ? b->gdt_limit : 0;
	sregs->idt.base = 0;
	sregs->idt.limit = 0;
	/* Caches on (CD/NW clear); paging only for the 64-bit entry. */
	sregs->cr0 = CR0_PE | CR0_ET;
	sregs->cr4 = 0;
	sregs->efer = 0;
	sregs->cr3 = 0;
	if (lm) {
		sregs->cr0 |= CR0_PG | CR0_MP | CR0_NE | CR0_WP | CR0_AM;
		sregs->cr4 = CR4_PAE;
		sregs->cr3 = b->cr3;
		sregs->efer = EFER_LME | EFER_LMA;
	}
}

int boot_apply(struct machine *m)
{
	struct vcpu *bsp = &m->vcpus[0];
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	int ret;

	if (m->boot.mode == BOOT_MODE_RESET)
		return 0;
	ret = kvm_vcpu_get_sregs(&bsp->kvm, &sregs);
	if (ret < 0)
		return ret;
	boot_state_to_regs(&m->boot, &regs, &sregs);
	ret = kvm_vcpu_set_sregs(&bsp->kvm, &sregs);
	if (ret == 0)
		ret = kvm_vcpu_set_regs(&bsp->kvm, &regs);
	return ret;
}
