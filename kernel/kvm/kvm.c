/* kvm.c — /dev/kvm ioctl wrappers (see kvm.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel/kvm/kvm.h"

#define KVM_TSS_ADDR 0xfffbd000ul
#define KVM_IDENTITY_MAP_ADDR 0xfffbc000ull

const struct kvm_cap_need kvm_vmm_caps[] = {
	{KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY"},
	{KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP"},
	{KVM_CAP_PIT2, "KVM_CAP_PIT2"},
	{KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR"},
	{KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID"},
	{KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE"},
	{KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT"},
};
const size_t kvm_vmm_caps_count = sizeof(kvm_vmm_caps) / sizeof(kvm_vmm_caps[0]);

/* ioctl returning -errno instead of -1. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

static void open_advice(const char *path, int e, char *err, size_t errlen)
{
	switch (e) {
	case EACCES:
	case EPERM:
		snprintf(err, errlen,
			 "%s: %s (add your user to group kvm: `sudo usermod -aG kvm $USER`, "
			 "then log in again; or run as root)",
			 path, strerror(e));
		break;
	case ENOENT:
	case ENODEV:
	case ENXIO:
		snprintf(err, errlen,
			 "%s: %s (KVM is not available: enable virtualization in the firmware "
			 "and load kvm_intel or kvm_amd)",
			 path, strerror(e));
		break;
	default:
		snprintf(err, errlen, "%s: %s", path, strerror(e));
	}
}

int kvm_open(struct kvm_sys *sys, const char *path, char *err, size_t errlen)
{
	int r;

	memset(sys, 0, sizeof(*sys));
	path = path ? path : KVM_DEVICE_PATH;
	sys->fd = open(path, O_RDWR | O_CLOEXEC);
	if (sys->fd < 0) {
		r = -errno;
		open_advice(path, -r, err, errlen);
		return r;
	}
	sys->api_version = ioctl(sys->fd, KVM_GET_API_VERSION, 0);
	if (sys->api_version != KVM_API_VERSION) {
		snprintf(err, errlen, "%s: KVM API version %d, vmm needs %d", path,
			 sys->api_version, KVM_API_VERSION);
		r = -ENOTSUP;
		goto fail;
	}
	r = ioctl(sys->fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (r <= 0) {
		r = r < 0 ? -errno : -EINVAL;
		snprintf(err, errlen, "%s: KVM_GET_VCPU_MMAP_SIZE: %s", path, strerror(-r));
		goto fail;
	}
	sys->run_size = (size_t)r;
	return 0;
fail:
	close(sys->fd);
	sys->fd = -1;
	return r;
}

void kvm_close(struct kvm_sys *sys)
{
	if (sys->fd >= 0)
		close(sys->fd);
	sys->fd = -1;
}

int kvm_check_cap(struct kvm_sys *sys, long cap)
{
	return xioctl(sys->fd, KVM_CHECK_EXTENSION, (void *)cap);
}

int kvm_require_caps(struct kvm_sys *sys, const struct kvm_cap_need *need, size_t n, char *err,
		     size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (kvm_check_cap(sys, need[i].cap) <= 0) {
			snprintf(err, errlen,
				 "KVM lacks %s, which vmm needs (host kernel too old?)",
				 need[i].name);
			return -ENOTSUP;
		}
	}
	return 0;
}

int kvm_get_supported_cpuid(struct kvm_sys *sys, struct kvm_cpuid2 **out)
{
	size_t sz =
		sizeof(struct kvm_cpuid2) + KVM_MAX_CPUID_ENTRIES * sizeof(struct kvm_cpuid_entry2);
	struct kvm_cpuid2 *c = calloc(1, sz);
	int r;

	if (!c)
		return -ENOMEM;
	c->nent = KVM_MAX_CPUID_ENTRIES;
	r = xioctl(sys->fd, KVM_GET_SUPPORTED_CPUID, c);
	if (r < 0) {
		free(c);
		return r;
	}
	*out = c;
	return 0;
}

int kvm_max_vcpus(struct kvm_sys *sys)
{
	int n = kvm_check_cap(sys, KVM_CAP_MAX_VCPUS);

	if (n <= 0)
		n = kvm_check_cap(sys, KVM_CAP_NR_VCPUS);
	return n > 0 ? n : 4;
}

const char *kvm_exit_name(uint32_t reason)
{
	static const char *const names[] = {
		[KVM_EXIT_UNKNOWN] = "UNKNOWN",
		[KVM_EXIT_EXCEPTION] = "EXCEPTION",
		[KVM_EXIT_IO] = "IO",
		[KVM_EXIT_HYPERCALL] = "HYPERCALL",
		[KVM_EXIT_DEBUG] = "DEBUG",
		[KVM_EXIT_HLT] = "HLT",
		[KVM_EXIT_MMIO] = "MMIO",
		[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
		[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
		[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
		[KVM_EXIT_INTR] = "INTR",
		[KVM_EXIT_SET_TPR] = "SET_TPR",
		[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
		[KVM_EXIT_NMI] = "NMI",
		[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
		[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
		[KVM_EXIT_IOAPIC_EOI] = "IOAPIC_EOI",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "?";
}

/* ----------------------------------------------------------------- VM */

int kvm_vm_create(struct kvm_sys *sys, struct kvm_vm *vm, char *err, size_t errlen)
{
	uint64_t idmap = KVM_IDENTITY_MAP_ADDR;
	int r;

	memset(vm, 0, sizeof(*vm));
	vm->sys = sys;
	pthread_mutex_init(&vm->route_lock, NULL);
	vm->fd = xioctl(sys->fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		r = vm->fd;
		snprintf(err, errlen, "KVM_CREATE_VM: %s", strerror(-r));
		return r;
	}
	r = xioctl(vm->fd, KVM_SET_TSS_ADDR, (void *)KVM_TSS_ADDR);
	if (r < 0) {
		snprintf(err, errlen, "KVM_SET_TSS_ADDR: %s", strerror(-r));
		goto fail;
	}
	if (kvm_check_cap(sys, KVM_CAP_SET_IDENTITY_MAP_ADDR) > 0) {
		r = xioctl(vm->fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap);
		if (r < 0) {
			snprintf(err, errlen, "KVM_SET_IDENTITY_MAP_ADDR: %s", strerror(-r));
			goto fail;
		}
	}
	return 0;
fail:
	close(vm->fd);
	vm->fd = -1;
	return r;
}

void kvm_vm_destroy(struct kvm_vm *vm)
{
	if (vm->fd >= 0) {
		close(vm->fd);
		pthread_mutex_destroy(&vm->route_lock);
	}
	vm->fd = -1;
}

static int set_slot(struct kvm_vm *vm, int slot)
{
	const struct kvm_slot *s = &vm->slots[slot];
	struct kvm_userspace_memory_region r = {
		.slot = (uint32_t)slot,
		.flags = s->flags,
		.guest_phys_addr = s->gpa,
		.memory_size = s->used ? s->size : 0,
		.userspace_addr = (uint64_t)(uintptr_t)s->hva,
	};

	return xioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &r);
}

int kvm_vm_add_mem(struct kvm_vm *vm, uint64_t gpa, uint64_t size, void *hva, uint32_t flags)
{
	int r;

	if (!size || (gpa | size | (uintptr_t)hva) & 0xfff)
		return -EINVAL;
	for (int i = 0; i < KVM_MAX_SLOTS; i++) {
		if (vm->slots[i].used)
			continue;
		vm->slots[i] = (struct kvm_slot){true, gpa, size, hva, flags};
		r = set_slot(vm, i);
		if (r < 0) {
			vm->slots[i].used = false;
			return r;
		}
		return i;
	}
	return -ENOSPC;
}

int kvm_vm_remove_mem(struct kvm_vm *vm, int slot)
{
	int r;

	if (slot < 0 || slot >= KVM_MAX_SLOTS || !vm->slots[slot].used)
		return -ENOENT;
	vm->slots[slot].used = false;
	vm->slots[slot].flags = 0;
	r = set_slot(vm, slot);
	return r;
}

int kvm_vm_set_dirty_logging(struct kvm_vm *vm, int slot, bool on)
{
	struct kvm_slot *s;
	uint32_t old;
	int r;

	if (slot < 0 || slot >= KVM_MAX_SLOTS || !vm->slots[slot].used)
		return -ENOENT;
	s = &vm->slots[slot];
	old = s->flags;
	s->flags = on ? s->flags | KVM_MEM_LOG_DIRTY_PAGES : s->flags & ~KVM_MEM_LOG_DIRTY_PAGES;
	r = set_slot(vm, slot);
	if (r < 0)
		s->flags = old;
	return r;
}

int kvm_vm_get_dirty_log(struct kvm_vm *vm, int slot, uint64_t *bitmap)
{
	struct kvm_dirty_log log = {.slot = (uint32_t)slot, .dirty_bitmap = bitmap};

	if (slot < 0 || slot >= KVM_MAX_SLOTS || !vm->slots[slot].used)
		return -ENOENT;
	return xioctl(vm->fd, KVM_GET_DIRTY_LOG, &log);
}

int kvm_vm_create_irqchip(struct kvm_vm *vm)
{
	return xioctl(vm->fd, KVM_CREATE_IRQCHIP, NULL);
}

int kvm_vm_create_pit2(struct kvm_vm *vm)
{
	struct kvm_pit_config pit = {.flags = KVM_PIT_SPEAKER_DUMMY};

	return xioctl(vm->fd, KVM_CREATE_PIT2, &pit);
}

int kvm_vm_get_irqchip(struct kvm_vm *vm, struct kvm_irqchip *chip)
{
	return xioctl(vm->fd, KVM_GET_IRQCHIP, chip);
}

int kvm_vm_set_irqchip(struct kvm_vm *vm, const struct kvm_irqchip *chip)
{
	return xioctl(vm->fd, KVM_SET_IRQCHIP, (void *)chip);
}

int kvm_vm_irq_line(struct kvm_vm *vm, unsigned gsi, bool level)
{
	struct kvm_irq_level irq = {.irq = gsi, .level = level};

	return xioctl(vm->fd, KVM_IRQ_LINE, &irq);
}

int kvm_vm_signal_msi(struct kvm_vm *vm, uint64_t addr, uint32_t data)
{
	struct kvm_msi msi = {
		.address_lo = (uint32_t)addr,
		.address_hi = (uint32_t)(addr >> 32),
		.data = data,
	};
	int r = xioctl(vm->fd, KVM_SIGNAL_MSI, &msi);

	return r < 0 ? r : 0;
}

int kvm_vm_ioeventfd(struct kvm_vm *vm, uint64_t addr, unsigned len, bool pio, int64_t datamatch,
		     int fd, bool assign)
{
	struct kvm_ioeventfd ev = {
		.addr = addr,
		.len = len,
		.fd = fd,
	};

	if (pio)
		ev.flags |= KVM_IOEVENTFD_FLAG_PIO;
	if (datamatch >= 0) {
		ev.flags |= KVM_IOEVENTFD_FLAG_DATAMATCH;
		ev.datamatch = (uint64_t)datamatch;
	}
	if (!assign)
		ev.flags |= KVM_IOEVENTFD_FLAG_DEASSIGN;
	return xioctl(vm->fd, KVM_IOEVENTFD, &ev);
}

int kvm_vm_irqfd(struct kvm_vm *vm, int fd, unsigned gsi, int resamplefd, bool assign)
{
	struct kvm_irqfd irqfd = {.fd = (uint32_t)fd, .gsi = gsi};

	if (!assign)
		irqfd.flags |= KVM_IRQFD_FLAG_DEASSIGN;
	else if (resamplefd >= 0) {
		irqfd.flags |= KVM_IRQFD_FLAG_RESAMPLE;
		irqfd.resamplefd = (uint32_t)resamplefd;
	}
	return xioctl(vm->fd, KVM_IRQFD, &irqfd);
}

/* ---------------------------------------------------------- GSI routing */

static void irqchip_entry(struct kvm_irq_routing_entry *e, unsigned gsi, unsigned chip,
			  unsigned pin)
{
	*e = (struct kvm_irq_routing_entry){.gsi = gsi, .type = KVM_IRQ_ROUTING_IRQCHIP};
	e->u.irqchip.irqchip = chip;
	e->u.irqchip.pin = pin;
}

static void msi_entry(struct kvm_irq_routing_entry *e, unsigned gsi, uint64_t addr, uint32_t data)
{
	*e = (struct kvm_irq_routing_entry){.gsi = gsi, .type = KVM_IRQ_ROUTING_MSI};
	e->u.msi.address_lo = (uint32_t)addr;
	e->u.msi.address_hi = (uint32_t)(addr >> 32);
	e->u.msi.data = data;
}

/* The whole table: what KVM's default routing has (GSI 0-15 on both PICs
 * and the IOAPIC, 16-23 on the IOAPIC) plus every MSI route. Called with
 * route_lock held. */
static int install_routes(struct kvm_vm *vm)
{
	size_t max = 16 + KVM_IRQCHIP_GSIS + KVM_MAX_MSI_ROUTES;
	struct kvm_irq_routing *t = calloc(1, sizeof(*t) + max * sizeof(t->entries[0]));
	unsigned n = 0;
	int r;

	if (!t)
		return -ENOMEM;
	for (unsigned gsi = 0; gsi < 16 && !vm->split_irqchip; gsi++)
		irqchip_entry(&t->entries[n++], gsi,
			      gsi < 8 ? KVM_IRQCHIP_PIC_MASTER : KVM_IRQCHIP_PIC_SLAVE, gsi % 8);
	for (unsigned gsi = 0; gsi < KVM_IRQCHIP_GSIS; gsi++) {
		if (vm->split_irqchip)
			msi_entry(&t->entries[n++], gsi, vm->ioapic_addr[gsi],
				  vm->ioapic_data[gsi]);
		else
			irqchip_entry(&t->entries[n++], gsi, KVM_IRQCHIP_IOAPIC, gsi);
	}
	for (unsigned i = 0; i < KVM_MAX_MSI_ROUTES; i++)
		if (vm->msi[i].used)
			msi_entry(&t->entries[n++], KVM_IRQCHIP_GSIS + i, vm->msi[i].addr,
				  vm->msi[i].data);
	t->nr = n;
	r = xioctl(vm->fd, KVM_SET_GSI_ROUTING, t);
	free(t);
	return r < 0 ? r : 0;
}

int kvm_vm_msi_route_add(struct kvm_vm *vm, uint64_t addr, uint32_t data)
{
	int r = -ENOSPC;

	pthread_mutex_lock(&vm->route_lock);
	for (unsigned i = 0; i < KVM_MAX_MSI_ROUTES; i++) {
		if (vm->msi[i].used)
			continue;
		vm->msi[i] = (struct kvm_msi_route){true, addr, data};
		r = install_routes(vm);
		if (r < 0)
			vm->msi[i].used = false;
		else
			r = KVM_IRQCHIP_GSIS + (int)i;
		break;
	}
	pthread_mutex_unlock(&vm->route_lock);
	return r;
}

static struct kvm_msi_route *msi_route(struct kvm_vm *vm, unsigned gsi)
{
	unsigned i = gsi - KVM_IRQCHIP_GSIS;

	if (gsi < KVM_IRQCHIP_GSIS || i >= KVM_MAX_MSI_ROUTES || !vm->msi[i].used)
		return NULL;
	return &vm->msi[i];
}

int kvm_vm_msi_route_set(struct kvm_vm *vm, unsigned gsi, uint64_t addr, uint32_t data)
{
	struct kvm_msi_route *rt;
	int r = -ENOENT;

	pthread_mutex_lock(&vm->route_lock);
	rt = msi_route(vm, gsi);
	if (rt) {
		rt->addr = addr;
		rt->data = data;
		r = install_routes(vm);
	}
	pthread_mutex_unlock(&vm->route_lock);
	return r;
}

int kvm_vm_msi_route_del(struct kvm_vm *vm, unsigned gsi)
{
	struct kvm_msi_route *rt;
	int r = -ENOENT;

	pthread_mutex_lock(&vm->route_lock);
	rt = msi_route(vm, gsi);
	if (rt) {
		rt->used = false;
		r = install_routes(vm);
	}
	pthread_mutex_unlock(&vm->route_lock);
	return r;
}

int kvm_vm_set_ioapic_routes(struct kvm_vm *vm, const uint64_t *addr, const uint32_t *data)
{
	int r;

	pthread_mutex_lock(&vm->route_lock);
	vm->split_irqchip = true;
	memcpy(vm->ioapic_addr, addr, sizeof(vm->ioapic_addr));
	memcpy(vm->ioapic_data, data, sizeof(vm->ioapic_data));
	r = install_routes(vm);
	pthread_mutex_unlock(&vm->route_lock);
	return r;
}

/* --------------------------------------------------------------- vCPU */

int kvm_vcpu_create(struct kvm_vm *vm, unsigned id, struct kvm_vcpu *vcpu)
{
	void *run;

	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->fd = xioctl(vm->fd, KVM_CREATE_VCPU, (void *)(uintptr_t)id);
	if (vcpu->fd < 0)
		return vcpu->fd;
	run = mmap(NULL, vm->sys->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu->fd, 0);
	if (run == MAP_FAILED) {
		int r = -errno;

		close(vcpu->fd);
		vcpu->fd = -1;
		return r;
	}
	vcpu->run = run;
	return 0;
}

void kvm_vcpu_destroy(struct kvm_vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->vm->sys->run_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
}

int kvm_vcpu_run(struct kvm_vcpu *vcpu)
{
	return ioctl(vcpu->fd, KVM_RUN, 0) < 0 ? -errno : 0;
}

int kvm_vcpu_get_regs(struct kvm_vcpu *vcpu, struct kvm_regs *regs)
{
	return xioctl(vcpu->fd, KVM_GET_REGS, regs);
}

int kvm_vcpu_set_regs(struct kvm_vcpu *vcpu, const struct kvm_regs *regs)
{
	return xioctl(vcpu->fd, KVM_SET_REGS, (void *)regs);
}

int kvm_vcpu_get_sregs(struct kvm_vcpu *vcpu, struct kvm_sregs *sregs)
{
	return xioctl(vcpu->fd, KVM_GET_SREGS, sregs);
}

int kvm_vcpu_set_sregs(struct kvm_vcpu *vcpu, const struct kvm_sregs *sregs)
{
	return xioctl(vcpu->fd, KVM_SET_SREGS, (void *)sregs);
}

int kvm_vcpu_get_fpu(struct kvm_vcpu *vcpu, struct kvm_fpu *fpu)
{
	return xioctl(vcpu->fd, KVM_GET_FPU, fpu);
}

int kvm_vcpu_set_fpu(struct kvm_vcpu *vcpu, const struct kvm_fpu *fpu)
{
	return xioctl(vcpu->fd, KVM_SET_FPU, (void *)fpu);
}

struct one_msr {
	struct kvm_msrs hdr;
	struct kvm_msr_entry e;
};

int kvm_vcpu_get_msr(struct kvm_vcpu *vcpu, uint32_t index, uint64_t *value)
{
	struct one_msr m = {.hdr.nmsrs = 1, .e.index = index};
	int r = xioctl(vcpu->fd, KVM_GET_MSRS, &m);

	if (r < 0)
		return r;
	if (r != 1)
		return -EINVAL;
	*value = m.e.data;
	return 0;
}

int kvm_vcpu_set_msr(struct kvm_vcpu *vcpu, uint32_t index, uint64_t value)
{
	struct one_msr m = {.hdr.nmsrs = 1, .e.index = index, .e.data = value};
	int r = xioctl(vcpu->fd, KVM_SET_MSRS, &m);

	if (r < 0)
		return r;
	return r == 1 ? 0 : -EINVAL;
}

int kvm_vcpu_set_cpuid(struct kvm_vcpu *vcpu, const struct kvm_cpuid2 *cpuid)
{
	return xioctl(vcpu->fd, KVM_SET_CPUID2, (void *)cpuid);
}

int kvm_vcpu_get_lapic(struct kvm_vcpu *vcpu, struct kvm_lapic_state *lapic)
{
	return xioctl(vcpu->fd, KVM_GET_LAPIC, lapic);
}

int kvm_vcpu_set_lapic(struct kvm_vcpu *vcpu, const struct kvm_lapic_state *lapic)
{
	return xioctl(vcpu->fd, KVM_SET_LAPIC, (void *)lapic);
}

int kvm_vcpu_get_mp_state(struct kvm_vcpu *vcpu, uint32_t *state)
{
	struct kvm_mp_state mp;
	int r = xioctl(vcpu->fd, KVM_GET_MP_STATE, &mp);

	if (r == 0)
		*state = mp.mp_state;
	return r;
}

int kvm_vcpu_set_mp_state(struct kvm_vcpu *vcpu, uint32_t state)
{
	struct kvm_mp_state mp = {.mp_state = state};

	return xioctl(vcpu->fd, KVM_SET_MP_STATE, &mp);
}

int kvm_vcpu_get_events(struct kvm_vcpu *vcpu, struct kvm_vcpu_events *ev)
{
	return xioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, ev);
}

int kvm_vcpu_set_events(struct kvm_vcpu *vcpu, const struct kvm_vcpu_events *ev)
{
	return xioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, (void *)ev);
}

/* DR7's LEN field for a length of 1, 2, 4 or 8 bytes; -1 otherwise. */
static int dr7_len(unsigned len)
{
	switch (len) {
	case 1: return 0;
	case 2: return 1;
	case 4: return 3;
	case 8: return 2;
	default: return -1;
	}
}

int kvm_vcpu_set_guest_debug(struct kvm_vcpu *vcpu, unsigned flags, const struct kvm_hw_bp *bps,
			     unsigned n)
{
	struct kvm_guest_debug dbg = {0};

	if (n > 4)
		return -EINVAL;
	if (flags || n)
		dbg.control = KVM_GUESTDBG_ENABLE;
	if (flags & KVM_DEBUG_STEP)
		dbg.control |= KVM_GUESTDBG_SINGLESTEP;
	if (flags & KVM_DEBUG_SW_BP)
		dbg.control |= KVM_GUESTDBG_USE_SW_BP;
	if (n)
		dbg.control |= KVM_GUESTDBG_USE_HW_BP;
	for (unsigned i = 0; i < n; i++) {
		int len = bps[i].type == KVM_HW_BP_EXEC ? 0 : dr7_len(bps[i].len);

		if (len < 0 || (bps[i].type != KVM_HW_BP_EXEC && bps[i].type != KVM_HW_BP_WRITE &&
				bps[i].type != KVM_HW_BP_ACCESS) ||
		    (bps[i].type != KVM_HW_BP_EXEC && bps[i].addr % bps[i].len))
			return -EINVAL;
		dbg.arch.debugreg[i] = bps[i].addr;
		/* DR7: local enable Li, then RWi and LENi at bit 16 + 4i */
		dbg.arch.debugreg[7] |= 1ull << (2 * i) |
					(uint64_t)(bps[i].type | (unsigned)len << 2) << (16 + 4 * i);
	}
	return xioctl(vcpu->fd, KVM_SET_GUEST_DEBUG, &dbg);
}
