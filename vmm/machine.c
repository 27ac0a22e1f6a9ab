/* machine.c — VM creation, the PC memory map, vCPU threads and their
 * pause/resume/reset protocol, and the way out (exit status). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/iommu/intel_iommu.h"
#include "devices/isa/acpi_pm.h"
#include "devices/isa/debug_exit.h"
#include "devices/isa/debugcon.h"
#include "devices/isa/dma8237.h"
#include "devices/isa/fw_cfg.h"
#include "devices/isa/i8042.h"
#include "devices/isa/port92.h"
#include "devices/isa/serial.h"
#include "devices/pci/i440fx.h"
#include "devices/pci/pci.h"
#include "devices/pci/piix3.h"
#include "devices/storage/atapi.h"
#include "devices/storage/ide.h"
#include "devices/testdev/edu.h"
#include "devices/testdev/pci_testdev.h"
#include "devices/timer/rtc.h"
#include "devices/virtio/virtio.h"
#include "vmm/vserial.h"
#include "vmm/chardev.h"
#include "vmm/control/monitor.h"
#include "vmm/machine.h"

/* The signal that kicks a vCPU thread out of KVM_RUN. */
#define SIG_KICK SIGUSR1

/* ---------------------------------------------------------- memory map */

void mem_layout_for(uint64_t ram_size, struct mem_layout *l)
{
	/* As QEMU's i440FX machine: all RAM below the PCI hole when it fits,
	 * else 3 GiB below (gigabyte-aligned) and the rest above 4 GiB. */
	uint64_t low = ram_size >= PC_PCI_HOLE_START ? 0xc0000000ull : ram_size;

	l->below_4g = low;
	l->above_4g = ram_size - low;
}

void mem_layout_q35(uint64_t ram_size, struct mem_layout *l)
{
	uint64_t low = ram_size >= Q35_ECAM_BASE ? 0x80000000ull : ram_size;

	l->below_4g = low;
	l->above_4g = ram_size - low;
}

static int add_ram(struct machine *m, uint64_t gpa, uint64_t size, uint8_t *hva, char *err,
		   size_t errlen)
{
	int slot;

	if (!size)
		return 0;
	slot = kvm_vm_add_mem(&m->vm, gpa, size, hva, 0);
	if (slot < 0) {
		snprintf(err, errlen, "KVM_SET_USER_MEMORY_REGION at %#llx (%llu KiB): %s",
			 (unsigned long long)gpa, (unsigned long long)size >> 10, strerror(-slot));
		return -1;
	}
	m->mem.r[m->mem.n++] = (struct guest_ram_region){gpa, size, hva};
	return 0;
}

#define HUGE_PAGE (2ull << 20)

/* Anonymous memory for the guest, 2 MiB aligned so transparent huge pages
 * can back it (MADV_HUGEPAGE, as QEMU asks): fewer TLB and EPT misses, and
 * O_DIRECT disk I/O into guest RAM pins one page per 2 MiB instead of 512.
 * MADV_MERGEABLE stays, as QEMU's mem-merge=on: when ksmd runs it splits
 * the huge pages it merges, and leaves the rest alone. */
static void *map_guest_ram(size_t size)
{
	size_t slack = HUGE_PAGE;
	uint8_t *p = mmap(NULL, size + slack, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t at;

	if (p == MAP_FAILED)
		return MAP_FAILED;
	at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (at > (uintptr_t)p)
		munmap(p, at - (uintptr_t)p);
	munmap((uint8_t *)at + size, (uintptr_t)p + size + slack - (at + size));
	madvise((void *)at, size, MADV_HUGEPAGE);
	madvise((void *)at, size, MADV_MERGEABLE);
	return (void *)at;
}

static int setup_ram(struct machine *m, char *err, size_t errlen)
{
	const struct mem_layout *l = &m->layout;
	uint64_t low_end;

	if (m->cfg->q35)
		mem_layout_q35(m->cfg->ram_size, &m->layout);
	else
		mem_layout_for(m->cfg->ram_size, &m->layout);
	m->ram_map_size = m->cfg->ram_size;
	m->ram = map_guest_ram(m->ram_map_size);
	if (m->ram == MAP_FAILED) {
		m->ram = NULL;
		snprintf(err, errlen, "-m: cannot allocate %llu MiB of guest RAM: %s",
			 (unsigned long long)(m->cfg->ram_size >> 20), strerror(errno));
		return -1;
	}
	m->mem.ram_size = m->cfg->ram_size;
	/* What devices write, for live migration (devices/dev_host.h). */
	m->mem.touched = calloc((m->ram_map_size / 4096 + 63) / 64, sizeof(uint64_t));
	m->mem.pinned = calloc((m->ram_map_size / 4096 + 63) / 64, sizeof(uint64_t));
	if (!m->mem.touched || !m->mem.pinned) {
		snprintf(err, errlen, "out of memory for the page bitmaps of %llu MiB",
			 (unsigned long long)(m->ram_map_size >> 20));
		return -1;
	}
	m->mem.touched_base = m->ram;
	m->mem.touched_size = m->ram_map_size;
	/* The host block stays contiguous: guest address == offset below 4G. */
	low_end = l->below_4g < PC_LOW_RAM_END ? l->below_4g : PC_LOW_RAM_END;
	if (add_ram(m, 0, low_end, m->ram, err, errlen) < 0)
		return -1;
	if (l->below_4g > PC_HIGH_RAM_START &&
	    add_ram(m, PC_HIGH_RAM_START, l->below_4g - PC_HIGH_RAM_START,
		    m->ram + PC_HIGH_RAM_START, err, errlen) < 0)
		return -1;
	return add_ram(m, PC_4G, l->above_4g, m->ram + l->below_4g, err, errlen);
}

/* pc_mem_map.map: firmware ROM and PAM segments as their own KVM slots. A
 * new mapping replaces every mapping it overlaps. */
static int machine_map(void *opaque, uint64_t gpa, uint64_t size, void *hva, bool read_only)
{
	struct machine *m = opaque;
	struct machine_map *free_map = NULL;
	int slot;

	for (unsigned i = 0; i < MACHINE_MAX_MAPS; i++) {
		struct machine_map *mm = &m->maps[i];

		if (mm->used && mm->gpa < gpa + size && gpa < mm->gpa + mm->size) {
			kvm_vm_remove_mem(&m->vm, mm->slot);
			mm->used = false;
		}
		if (!mm->used && !free_map)
			free_map = mm;
	}
	if (!hva)
		return 0;
	if (!free_map)
		return -ENOSPC;
	slot = kvm_vm_add_mem(&m->vm, gpa, size, hva, read_only ? KVM_MEM_READONLY : 0);
	if (slot < 0)
		return slot;
	*free_map = (struct machine_map){true, gpa, size, slot};
	return 0;
}

/* ------------------------------------------------------------ interrupts */

static void irq_set_level(void *opaque, unsigned gsi, bool level)
{
	struct machine *m = opaque;

	kvm_vm_irq_line(&m->vm, gsi, level);
}

static void irq_msi(void *opaque, uint64_t addr, uint32_t data)
{
	struct machine *m = opaque;

	kvm_vm_signal_msi(&m->vm, addr, data);
}

/* dev_fast_ops: ioeventfd and irqfd on MSI routes for the virtio devices'
 * I/O threads. */
static int fast_ioeventfd(void *opaque, uint64_t addr, unsigned len, int fd, bool assign)
{
	struct machine *m = opaque;

	return kvm_vm_ioeventfd(&m->vm, addr, len, false, -1, fd, assign);
}

static int fast_ioeventfd_match(void *opaque, uint64_t addr, unsigned len, bool pio,
				int64_t datamatch, int fd, bool assign)
{
	struct machine *m = opaque;

	return kvm_vm_ioeventfd(&m->vm, addr, len, pio, datamatch, fd, assign);
}

static int fast_route_add(void *opaque, uint64_t addr, uint32_t data)
{
	struct machine *m = opaque;

	return kvm_vm_msi_route_add(&m->vm, addr, data);
}

static int fast_route_set(void *opaque, int route, uint64_t addr, uint32_t data)
{
	struct machine *m = opaque;

	return kvm_vm_msi_route_set(&m->vm, (unsigned)route, addr, data);
}

static void fast_route_del(void *opaque, int route)
{
	struct machine *m = opaque;

	kvm_vm_msi_route_del(&m->vm, (unsigned)route);
}

static int fast_irqfd(void *opaque, int fd, int route, bool assign)
{
	struct machine *m = opaque;

	return kvm_vm_irqfd(&m->vm, fd, (unsigned)route, -1, assign);
}

/* ---------------------------------------------------------------- vCPUs */

static int save_reset_state(struct vcpu *v)
{
	struct vcpu_reset_state *r = &v->reset;
	int ret;

	ret = kvm_vcpu_get_regs(&v->kvm, &r->regs);
	if (!ret)
		ret = kvm_vcpu_get_sregs(&v->kvm, &r->sregs);
	if (!ret)
		ret = kvm_vcpu_get_fpu(&v->kvm, &r->fpu);
	if (!ret && v->m->cfg->irqchip != IRQCHIP_OFF) /* no APIC in KVM when off */
		ret = kvm_vcpu_get_lapic(&v->kvm, &r->lapic);
	if (!ret)
		ret = kvm_vcpu_get_mp_state(&v->kvm, &r->mp_state);
	return ret;
}

static int restore_reset_state(struct vcpu *v)
{
	const struct vcpu_reset_state *r = &v->reset;
	int ret;

	ret = kvm_vcpu_set_sregs(&v->kvm, &r->sregs);
	if (!ret)
		ret = kvm_vcpu_set_regs(&v->kvm, &r->regs);
	if (!ret)
		ret = kvm_vcpu_set_fpu(&v->kvm, &r->fpu);
	if (!ret && v->m->cfg->irqchip != IRQCHIP_OFF)
		ret = kvm_vcpu_set_lapic(&v->kvm, &r->lapic);
	if (!ret)
		ret = kvm_vcpu_set_mp_state(&v->kvm, r->mp_state);
	return ret;
}

/* KVM's supported CPUID, with each vCPU's place in the topology. */
static int setup_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *c = v->m->cpuid;
	int tsc_khz;

	/* Idempotent on the shared copy: the model and switches only clear or
	 * set the same bits, the topology is rewritten for this vCPU. */
	cpuid_apply(c, &v->m->cfg->cpu, &v->m->cfg->topo, v->index);
	tsc_khz = kvm_vcpu_get_tsc_khz(&v->kvm);
	if (tsc_khz > 0 && c->nent < KVM_MAX_CPUID_ENTRIES) /* a stable rate for kvmclock */
		cpuid_set_tsc_leaf(c, tsc_khz);
	if (v->m->cfg->irqchip == IRQCHIP_OFF)
		irqchip_off_cpuid(v->m->ic, c);
	return kvm_vcpu_set_cpuid(&v->kvm, c);
}

static int create_vcpus(struct machine *m, char *err, size_t errlen)
{
	int max = kvm_max_vcpus(&m->sys), ret;

	if ((int)m->cfg->smp > max) {
		snprintf(err, errlen, "-smp: %u vCPUs requested, KVM allows %d", m->cfg->smp, max);
		return -1;
	}
	ret = kvm_get_supported_cpuid(&m->sys, &m->cpuid);
	if (ret < 0) {
		snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(-ret));
		return -1;
	}
	cpuid_add_topology_leaves(m->cpuid, KVM_MAX_CPUID_ENTRIES, &m->cfg->topo);
	m->vcpus = calloc(m->cfg->smp, sizeof(*m->vcpus));
	if (!m->vcpus) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < m->cfg->smp; i++) {
		struct vcpu *v = &m->vcpus[i];

		v->m = m;
		v->index = i;
		/* KVM's vCPU id is the initial (x2)APIC ID, as in QEMU */
		m->apic_ids[i] = (uint8_t)topo_apic_id(&m->cfg->topo, i); /* cli checked: < 255 */
		ret = kvm_vcpu_create(&m->vm, m->apic_ids[i], &v->kvm);
		if (ret == 0)
			m->ncpus++;
		if (ret == 0)
			ret = setup_cpuid(v);
		if (ret == 0)
			ret = save_reset_state(v);
		if (ret < 0) {
			snprintf(err, errlen, "vCPU %u: %s", i, strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static int setup_irqchip(struct machine *m, char *err, size_t errlen)
{
	int ret = kvm_vm_create_irqchip(&m->vm);

	if (ret < 0) {
		snprintf(err, errlen, "KVM_CREATE_IRQCHIP: %s", strerror(-ret));
		return -1;
	}
	ret = m->cfg->no_pit ? 0 : kvm_vm_create_pit2(&m->vm);
	if (ret < 0) {
		snprintf(err, errlen, "KVM_CREATE_PIT2: %s", strerror(-ret));
		return -1;
	}
	for (unsigned i = 0; i < 3; i++) {
		m->reset_chips[i].chip_id = i; /* PIC master, PIC slave, IOAPIC */
		ret = kvm_vm_get_irqchip(&m->vm, &m->reset_chips[i]);
		if (ret < 0) {
			snprintf(err, errlen, "KVM_GET_IRQCHIP: %s", strerror(-ret));
			return -1;
		}
	}
	return 0;
}

static int setup_host(struct machine *m, char *err, size_t errlen)
{
	m->host.pio = iobus_new("io");
	m->host.mmio = iobus_new("memory");
	m->host.loop = evloop_new();
	m->host.mem = &m->mem;
	m->host.irq = (struct irq_sink){irq_set_level, irq_msi, m};
	m->host.fast = (struct dev_fast_ops){fast_ioeventfd, fast_route_add, fast_route_set,
					     fast_route_del,	fast_irqfd,	m,
					     fast_ioeventfd_match};
	m->mem_map = (struct pc_mem_map){machine_map, m};
	if (!m->host.pio || !m->host.mmio || !m->host.loop) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static void kick_handler(int sig)
{
}

static void init_fields(struct machine *m, const struct vmm_config *cfg)
{
	memset(m, 0, sizeof(*m));
	m->cfg = cfg;
	m->sys.fd = m->vm.fd = m->signal_fd = m->kernel_fd = -1;
	m->debug.step_cpu = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
}

int machine_init(struct machine *m, const struct vmm_config *cfg, char *err, size_t errlen)
{
	struct sigaction sa = {.sa_handler = kick_handler};

	init_fields(m, cfg);
	sigemptyset(&sa.sa_mask);
	sigaction(SIG_KICK, &sa, NULL); /* no SA_RESTART: KVM_RUN returns EINTR */

	/* VMM_KVM_DEVICE: another device node, which tests use to make KVM
	 * unavailable on a host that has it */
	if (kvm_open(&m->sys, getenv("VMM_KVM_DEVICE"), err, errlen) < 0)
		return -1;
	if (kvm_require_caps(&m->sys, kvm_vmm_caps, kvm_vmm_caps_count, err, errlen) < 0)
		return -1;
	if (kvm_vm_create(&m->sys, &m->vm, err, errlen) < 0)
		return -1;
	/* The irqchip before the vCPUs: KVM then creates every vCPU but 0 in
	 * KVM_MP_STATE_UNINITIALIZED, waiting in KVM_RUN for INIT + SIPI from
	 * the guest (smp.elf, Linux), and save_reset_state() keeps that. */
	if (setup_ram(m, err, errlen) < 0 ||
	    (cfg->irqchip == IRQCHIP_ON ? setup_irqchip(m, err, errlen)
					: irqchip_init_vm(m, err, errlen)) < 0 ||
	    create_vcpus(m, err, errlen) < 0 || setup_host(m, err, errlen) < 0 ||
	    irqchip_init_devices(m, err, errlen) < 0)
		return -1;
	e820_build(&m->mem, &m->e820);
	if (cfg->q35) /* as SeaBIOS reserves it */
		e820_reserve(&m->e820, Q35_ECAM_BASE, Q35_ECAM_SIZE);
	return 0;
}

int machine_init_none(struct machine *m, const struct vmm_config *cfg, char *err, size_t errlen)
{
	init_fields(m, cfg);
	return setup_host(m, err, errlen);
}

void machine_destroy(struct machine *m)
{
	machine_control_destroy(m);
	for (unsigned i = 0; i < m->ncpus; i++)
		kvm_vcpu_destroy(&m->vcpus[i].kvm);
	free(m->vcpus);
	free(m->cpuid);
	if (m->kernel_fd >= 0)
		close(m->kernel_fd);
	for (unsigned i = 0; i < CLI_MAX_SERIALS; i++) {
		serial_free(m->serial[i]);
		chardev_free(m->serial_chr[i]);
	}
	monitor_free(m->monitor[0]);
	monitor_free(m->monitor[1]);
	chardev_free(m->monitor_chr);
	for (unsigned i = 0; i < CLI_MAX_CHARDEVS; i++)
		chardev_free(m->spare_chr[i]);
	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++)
		debug_exit_free(m->debug_exit[i]);
	i8042_free(m->i8042);
	rtc_free(m->rtc);
	acpi_pm_free(m->acpi_pm);
	debugcon_free(m->debugcon);
	port92_free(m->port92);
	dma8237_free(m->dma);
	for (unsigned i = 0; i < CLI_MAX_DEVICES; i++) {
		edu_free(m->edu[i]);
		pci_testdev_free(m->pci_testdev[i]);
		uhci_free(m->uhci[i]);
		xhci_free(m->xhci[i]);
	}
	intel_iommu_free(m->iommu);
	irqchip_destroy(m);
	if (m->debugcon_fd > STDERR_FILENO)
		close(m->debugcon_fd);
	fw_cfg_free(m->fw_cfg);
	board_free_nics(m);
	vmm_wlan_free(m->wlan);
	for (unsigned i = 0; i < CLI_MAX_RNG; i++)
		virtio_rng_free(m->rng[i]);
	vmm_vserial_free(m->vserial);
	vmm_balloon_free(m->balloon);
	for (unsigned i = 0; i < CLI_MAX_VIRTIO_DRIVES; i++) {
		virtio_blk_free(m->vblk[i]);
		block_close(m->vdisks[i]);
	}
	board_free_ahcis(m);
	ide_free(m->ide);
	for (unsigned i = 0; i < CLI_MAX_DRIVES; i++) {
		block_close(m->disks[i]);
		atapi_free(m->cdroms[i]);
	}
	piix3_free(m->piix3);
	for (unsigned i = 0; i < CLI_MAX_ROOT_PORTS; i++)
		pcie_root_port_free(m->root_ports[i]);
	ich9_smbus_free(m->smbus);
	ich9_lpc_free(m->lpc);
	i440fx_free(m->i440fx);
	pci_bus_free(m->pci);
	kvm_vm_destroy(&m->vm);
	bios_free(&m->bios);
	kvm_close(&m->sys);
	if (m->ram)
		munmap(m->ram, m->ram_map_size);
	free(m->mem.touched);
	free(m->mem.pinned);
	iobus_free(m->host.pio);
	iobus_free(m->host.mmio);
	evloop_free(m->host.loop);
}

/* --------------------------------------------------------- pause/resume */

void vcpu_kick(struct vcpu *v)
{
	if (v->m->ic)
		irqchip_off_kick(v); /* a vCPU sleeping in HLT (kernel_irqchip=off) */
	v->kvm.run->immediate_exit = 1;
	if (v->started)
		pthread_kill(v->thread.id, SIG_KICK);
}

void machine_pause(struct machine *m)
{
	pthread_mutex_lock(&m->lock);
	if (m->pause_depth++ == 0) {
		atomic_store(&m->pause_req, 1);
		for (unsigned i = 0; i < m->ncpus; i++)
			vcpu_kick(&m->vcpus[i]);
		pthread_cond_broadcast(&m->cond); /* a vCPU in vcpu_debug_exit() */
	}
	while (m->n_parked < m->ncpus && !atomic_load(&m->quit))
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

void machine_resume(struct machine *m)
{
	pthread_mutex_lock(&m->lock);
	if (m->pause_depth && --m->pause_depth == 0) {
		atomic_store(&m->pause_req, 0);
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
}

void machine_stop_for(struct machine *m, enum run_state why)
{
	if (m->user_paused)
		return;
	m->user_paused = true;
	m->stop_state = why; /* before STOP: listeners ask why */
	machine_pause(m);
	machine_event(m, "STOP", NULL);
}

void machine_user_stop(struct machine *m)
{
	machine_stop_for(m, RUN_STATE_PAUSED);
}

void machine_user_cont(struct machine *m)
{
	if (!m->user_paused)
		return;
	m->user_paused = false;
	machine_resume(m);
	machine_event(m, "RESUME", NULL);
}

/* --------------------------------------------------------------- reset */

void machine_system_reset(struct machine *m)
{
	char err[256];

	machine_pause(m);
	dev_reset_all(&m->host);
	for (unsigned i = 0; i < 3 && !m->ic; i++)
		kvm_vm_set_irqchip(&m->vm, &m->reset_chips[i]);
	for (unsigned i = 0; i < m->ncpus; i++)
		if (restore_reset_state(&m->vcpus[i]) < 0)
			fprintf(stderr, "vmm: vCPU %u: cannot reset its state\n", i);
	if (m->direct_boot) {
		/* No firmware to reload the kernel: do what it would have. */
		if (boot_load_kernel(m, err, sizeof(err)) < 0 || boot_apply(m) < 0) {
			fprintf(stderr, "vmm: reset: %s\n", err);
			machine_fail(m);
		}
	}
	machine_resume(m);
}

/* ACPI S3 resume (main thread, vCPUs paused): what the firmware does on
 * the wake: the vCPUs as after reset, the BSP in real mode at the waking
 * vector the guest left in the FACS. RAM and devices keep their state. */
void machine_s3_resume(struct machine *m)
{
	uint32_t vector = fw_acpi_waking_vector(&m->mem);
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	for (unsigned i = 0; i < m->ncpus; i++)
		if (restore_reset_state(&m->vcpus[i]) < 0)
			fprintf(stderr, "vmm: vCPU %u: cannot reset its state\n", i);
	if (kvm_vcpu_get_sregs(&m->vcpus[0].kvm, &sregs) < 0 ||
	    kvm_vcpu_get_regs(&m->vcpus[0].kvm, &regs) < 0)
		return;
	sregs.cs.selector = (uint16_t)(vector >> 4);
	sregs.cs.base = vector & ~0xfu;
	regs.rip = vector & 0xf;
	if (kvm_vcpu_set_sregs(&m->vcpus[0].kvm, &sregs) < 0 ||
	    kvm_vcpu_set_regs(&m->vcpus[0].kvm, &regs) < 0)
		fprintf(stderr, "vmm: S3 resume: cannot set the waking vector\n");
}

/* ------------------------------------------------------- exit requests */

struct exit_request {
	struct machine *m;
	int status;
};

void machine_request_exit(struct machine *m, int status)
{
	pthread_mutex_lock(&m->lock);
	if (!atomic_load(&m->quit)) {
		m->exit_status = status;
		atomic_store(&m->quit, true);
		for (unsigned i = 0; i < m->ncpus; i++)
			vcpu_kick(&m->vcpus[i]);
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	evloop_stop(m->host.loop);
}

/* ------------------------------------------------------------- running */

int machine_start(struct machine *m, char *err, size_t errlen)
{
	if (m->cfg->start_paused || m->cfg->incoming) {
		/* Paused before any thread runs: they park before KVM_RUN.
		 * -incoming runs them once the stream is loaded. */
		m->user_paused = true;
		m->stop_state = RUN_STATE_PRELAUNCH;
		m->pause_depth = 1;
		atomic_store(&m->pause_req, 1);
	}
	for (unsigned i = 0; i < m->ncpus; i++) {
		struct vcpu *v = &m->vcpus[i];
		int ret = dev_thread_create(&v->thread, vcpu_thread, v);

		if (ret) {
			snprintf(err, errlen, "cannot start vCPU thread: %s", strerror(ret));
			machine_request_exit(m, VMM_EXIT_USAGE);
			return -1;
		}
		v->started = true;
	}
	return 0;
}

int machine_run(struct machine *m)
{
	evloop_run(m->host.loop);
	machine_request_exit(m, m->exit_status);
	for (unsigned i = 0; i < m->ncpus; i++)
		if (m->vcpus[i].started)
			dev_thread_join(&m->vcpus[i].thread);
	return m->exit_status;
}
