/* kvm.h — the one place that talks to /dev/kvm.
 *
 * Thin, typed wrappers around the KVM ioctls: the system fd (API check,
 * capabilities, supported CPUID), a VM (memory slots, in-kernel irqchip and
 * PIT, interrupt lines, MSI, ioeventfd, irqfd) and its vCPUs (run with the
 * mmap'ed struct kvm_run, register state, guest debug).
 *
 * Every function returns 0 (or a non-negative value where said) on success
 * and -errno on failure; nothing prints. Functions taking `err` write a
 * one-line, user-readable reason there.
 *
 * The structures are public so that the exit path can read vcpu->run
 * directly: the hot loop is KVM_RUN plus a switch on run->exit_reason.
 */
#ifndef VMM_KERNEL_KVM_H
#define VMM_KERNEL_KVM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KVM_DEVICE_PATH "/dev/kvm"
#define KVM_MAX_SLOTS 32
#define KVM_MAX_CPUID_ENTRIES 256

struct kvm_sys {
	int fd;
	int api_version;
	size_t run_size; /* KVM_GET_VCPU_MMAP_SIZE */
};

struct kvm_slot {
	bool used;
	uint64_t gpa, size;
	void *hva;
	uint32_t flags; /* KVM_MEM_READONLY, KVM_MEM_LOG_DIRTY_PAGES */
};

/* GSIs 0-23 are the in-kernel irqchip's pins; MSI routes get the GSIs
 * above. KVM_SET_GSI_ROUTING replaces the whole table, so the VM keeps a
 * copy of what it installed. */
#define KVM_IRQCHIP_GSIS 24
#define KVM_MAX_MSI_ROUTES 256

struct kvm_msi_route {
	bool used;
	uint64_t addr;
	uint32_t data;
};

struct kvm_vm {
	struct kvm_sys *sys;
	int fd;
	struct kvm_slot slots[KVM_MAX_SLOTS];
	pthread_mutex_t route_lock;		      /* routes may change from any thread */
	struct kvm_msi_route msi[KVM_MAX_MSI_ROUTES]; /* GSI KVM_IRQCHIP_GSIS + i */
	/* kernel_irqchip=split: GSIs 0-23 are the userspace I/O APIC's MSIs */
	bool split_irqchip;
	bool manual_dirty_protect; /* KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2 is on */
	uint64_t ioapic_addr[KVM_IRQCHIP_GSIS];
	uint32_t ioapic_data[KVM_IRQCHIP_GSIS];
};

struct kvm_vcpu {
	struct kvm_vm *vm;
	int fd;
	unsigned id;
	struct kvm_run *run;
};

/* A capability the VMM cannot work without, with the name users see. */
struct kvm_cap_need {
	long cap;
	const char *name;
};

/* ------------------------------------------------------------- system */

/* Open path (KVM_DEVICE_PATH when NULL) and check the API version. On
 * failure err says what to do (e.g. add the user to group kvm). */
int kvm_open(struct kvm_sys *sys, const char *path, char *err, size_t errlen);
void kvm_close(struct kvm_sys *sys);
/* KVM_CHECK_EXTENSION on the system fd: > 0 supported (often a count). */
int kvm_check_cap(struct kvm_sys *sys, long cap);
/* 0 when every capability in need[0..n) is present; otherwise -ENOTSUP
 * and err names the first missing one. */
int kvm_require_caps(struct kvm_sys *sys, const struct kvm_cap_need *need, size_t n, char *err,
		     size_t errlen);
/* The capabilities vmm needs; kvm_open does not check them (tests may). */
extern const struct kvm_cap_need kvm_vmm_caps[];
extern const size_t kvm_vmm_caps_count;
/* Fill cpuid (entries allocated for KVM_MAX_CPUID_ENTRIES) with what KVM
 * supports. The caller owns *cpuid (free()). */
int kvm_get_supported_cpuid(struct kvm_sys *sys, struct kvm_cpuid2 **cpuid);
/* Maximum vCPUs per VM (KVM_CAP_MAX_VCPUS, falling back to NR_VCPUS). */
int kvm_max_vcpus(struct kvm_sys *sys);
/* Human name for a KVM_EXIT_* reason ("IO", "MMIO", ...). */
const char *kvm_exit_name(uint32_t reason);

/* ----------------------------------------------------------------- VM */

/* Creates an x86 VM and places the TSS and identity-map pages (needed by
 * VMX for real mode) just below the BIOS at 0xfffbc000..0xfffc0000. */
int kvm_vm_create(struct kvm_sys *sys, struct kvm_vm *vm, char *err, size_t errlen);
void kvm_vm_destroy(struct kvm_vm *vm);
/* Memory slots. Returns the slot number used (>= 0) or -errno. */
int kvm_vm_add_mem(struct kvm_vm *vm, uint64_t gpa, uint64_t size, void *hva, uint32_t flags);
int kvm_vm_remove_mem(struct kvm_vm *vm, int slot);
/* Toggle KVM_MEM_LOG_DIRTY_PAGES on a slot. */
int kvm_vm_set_dirty_logging(struct kvm_vm *vm, int slot, bool on);
/* Fetch and clear the dirty bitmap of a slot: one bit per 4 KiB page,
 * bitmap holds (size/4096 + 63) / 64 words. */
int kvm_vm_get_dirty_log(struct kvm_vm *vm, int slot, uint64_t *bitmap);
/* Dirty logging over the slots that map host memory inside [hva, hva+size)
 * (guest RAM; firmware and PAM slots elsewhere are left alone). Start turns
 * on KVM_MEM_LOG_DIRTY_PAGES on each and, where the host has
 * KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2, asks for manual protection: a sync
 * then re-protects only the pages it reports (KVM_CLEAR_DIRTY_LOG) instead
 * of the kernel clearing the whole log inside KVM_GET_DIRTY_LOG. Sync ORs
 * the pages written since the last sync into bitmap, one bit per 4 KiB
 * page from hva ((size/4096 + 63) / 64 words). Stop turns logging off. */
int kvm_vm_dirty_log_start(struct kvm_vm *vm, const void *hva, uint64_t size);
int kvm_vm_dirty_log_sync(struct kvm_vm *vm, const void *hva, uint64_t size, uint64_t *bitmap);
void kvm_vm_dirty_log_stop(struct kvm_vm *vm, const void *hva, uint64_t size);
/* In-kernel PIC + IOAPIC (+ LAPICs) and the PIT (i8254 at 0x40, with a
 * dummy speaker port 0x61). */
int kvm_vm_create_irqchip(struct kvm_vm *vm);
int kvm_vm_create_pit2(struct kvm_vm *vm);
/* Save/restore one in-kernel irqchip (KVM_IRQCHIP_PIC_MASTER, ..._SLAVE,
 * ..._IOAPIC) — used to put it back to its power-on state on reset. */
int kvm_vm_get_irqchip(struct kvm_vm *vm, struct kvm_irqchip *chip);
int kvm_vm_set_irqchip(struct kvm_vm *vm, const struct kvm_irqchip *chip);
int kvm_vm_irq_line(struct kvm_vm *vm, unsigned gsi, bool level);
int kvm_vm_signal_msi(struct kvm_vm *vm, uint64_t addr, uint32_t data);
/* ioeventfd: a guest write to addr (len bytes; 0 = any) signals fd without
 * an exit to userspace. datamatch < 0 matches any value. */
int kvm_vm_ioeventfd(struct kvm_vm *vm, uint64_t addr, unsigned len, bool pio, int64_t datamatch,
		     int fd, bool assign);
/* irqfd: writing fd injects gsi; resamplefd (or -1) for level-triggered. */
int kvm_vm_irqfd(struct kvm_vm *vm, int fd, unsigned gsi, int resamplefd, bool assign);
/* MSI routes (KVM_SET_GSI_ROUTING, the irqchip's default routes kept):
 * add returns the new route's GSI (>= KVM_IRQCHIP_GSIS) or -errno
 * (-ENOSPC when all KVM_MAX_MSI_ROUTES are used); set retargets one; del
 * frees it. An irqfd bound to the GSI then delivers that MSI. */
int kvm_vm_msi_route_add(struct kvm_vm *vm, uint64_t addr, uint32_t data);
int kvm_vm_msi_route_set(struct kvm_vm *vm, unsigned gsi, uint64_t addr, uint32_t data);
int kvm_vm_msi_route_del(struct kvm_vm *vm, unsigned gsi);

/* --------------------------------------------------------------- vCPU */

int kvm_vcpu_create(struct kvm_vm *vm, unsigned id, struct kvm_vcpu *vcpu);
void kvm_vcpu_destroy(struct kvm_vcpu *vcpu);
/* One KVM_RUN: 0, or -EINTR when a signal or run->immediate_exit stopped
 * it, or another -errno. */
int kvm_vcpu_run(struct kvm_vcpu *vcpu);
int kvm_vcpu_get_regs(struct kvm_vcpu *vcpu, struct kvm_regs *regs);
int kvm_vcpu_set_regs(struct kvm_vcpu *vcpu, const struct kvm_regs *regs);
int kvm_vcpu_get_sregs(struct kvm_vcpu *vcpu, struct kvm_sregs *sregs);
int kvm_vcpu_set_sregs(struct kvm_vcpu *vcpu, const struct kvm_sregs *sregs);
int kvm_vcpu_get_fpu(struct kvm_vcpu *vcpu, struct kvm_fpu *fpu);
int kvm_vcpu_set_fpu(struct kvm_vcpu *vcpu, const struct kvm_fpu *fpu);
/* Read or write one MSR. */
int kvm_vcpu_get_msr(struct kvm_vcpu *vcpu, uint32_t index, uint64_t *value);
int kvm_vcpu_set_msr(struct kvm_vcpu *vcpu, uint32_t index, uint64_t value);
int kvm_vcpu_set_cpuid(struct kvm_vcpu *vcpu, const struct kvm_cpuid2 *cpuid);
int kvm_vcpu_get_lapic(struct kvm_vcpu *vcpu, struct kvm_lapic_state *lapic);
int kvm_vcpu_set_lapic(struct kvm_vcpu *vcpu, const struct kvm_lapic_state *lapic);
int kvm_vcpu_get_mp_state(struct kvm_vcpu *vcpu, uint32_t *state);
int kvm_vcpu_set_mp_state(struct kvm_vcpu *vcpu, uint32_t state);
int kvm_vcpu_get_events(struct kvm_vcpu *vcpu, struct kvm_vcpu_events *ev);
int kvm_vcpu_set_events(struct kvm_vcpu *vcpu, const struct kvm_vcpu_events *ev);
/* Guest debug: single step (KVM_DEBUG_STEP), INT3 to the VMM
 * (KVM_DEBUG_SW_BP: software breakpoints) and up to 4 debug registers:
 * breakpoints and watchpoints (n may be 0; nothing at all disables
 * debugging). Stops arrive as KVM_EXIT_DEBUG. -EINVAL for n > 4, a bad
 * type or length, or an address not aligned to its length. */
#define KVM_DEBUG_STEP 1u
#define KVM_DEBUG_SW_BP 2u
enum kvm_hw_bp_type { KVM_HW_BP_EXEC = 0, KVM_HW_BP_WRITE = 1, KVM_HW_BP_ACCESS = 3 };
struct kvm_hw_bp {
	uint64_t addr;
	enum kvm_hw_bp_type type;
	unsigned len; /* 1, 2, 4 or 8 bytes; 1 for KVM_HW_BP_EXEC */
};
int kvm_vcpu_set_guest_debug(struct kvm_vcpu *vcpu, unsigned flags, const struct kvm_hw_bp *bps,
			     unsigned n);

/* ------------------------------------------------- irqchip modes (irqchip.c)
 * -machine kernel_irqchip=split: local APICs in KVM, the rest in vmm;
 * kernel_irqchip=off: no irqchip in KVM at all. */

/* KVM_CAP_SPLIT_IRQCHIP with ioapic_pins GSIs reserved for the userspace
 * I/O APIC (before any vCPU exists). */
int kvm_vm_enable_split_irqchip(struct kvm_vm *vm, unsigned ioapic_pins);
/* With a split irqchip, GSIs 0-23 route as MSIs the messages the
 * userspace I/O APIC's pins send (addr[i], data[i]): KVM learns from them
 * which vectors are level triggered and exits with KVM_EXIT_IOAPIC_EOI on
 * their EOI. The MSI routes above stay. */
int kvm_vm_set_ioapic_routes(struct kvm_vm *vm, const uint64_t *addr, const uint32_t *data);
/* KVM_INTERRUPT: queue an external interrupt (the PIC's INTA vector);
 * only without an in-kernel PIC. */
int kvm_vcpu_interrupt(struct kvm_vcpu *vcpu, unsigned vector);
/* KVM_NMI: queue an NMI. */
int kvm_vcpu_nmi(struct kvm_vcpu *vcpu);
/* KVM_CAP_X86_USER_SPACE_MSR: accesses to filtered MSRs exit to
 * userspace (KVM_EXIT_X86_RDMSR / WRMSR) instead of raising #GP. */
int kvm_vm_enable_user_msr_exits(struct kvm_vm *vm);
/* KVM_X86_SET_MSR_FILTER: the MSRs in ranges (at most 256 each) go to
 * userspace, every other MSR stays with KVM. */
struct kvm_msr_range {
	uint32_t base, count;
};
int kvm_vm_msr_filter_to_user(struct kvm_vm *vm, const struct kvm_msr_range *ranges, unsigned n);
/* KVM_GET_TSC_KHZ: the guest TSC's frequency (kHz, >= 0) or -errno. */
int kvm_vcpu_get_tsc_khz(struct kvm_vcpu *vcpu);

/* ------------------------------------------------- saving state (save.c)
 * What a snapshot or migration reads and writes beyond the registers. */

/* Bytes the XSAVE buffer of a vCPU needs: KVM_CAP_XSAVE2's answer, at
 * least sizeof(struct kvm_xsave). */
size_t kvm_xsave_size(struct kvm_vm *vm);
/* KVM_GET_XSAVE (or XSAVE2 when size > 4 KiB) / KVM_SET_XSAVE. */
int kvm_vcpu_get_xsave(struct kvm_vcpu *vcpu, void *buf, size_t size);
int kvm_vcpu_set_xsave(struct kvm_vcpu *vcpu, const void *buf, size_t size);
int kvm_vcpu_get_xcrs(struct kvm_vcpu *vcpu, struct kvm_xcrs *xcrs);
int kvm_vcpu_set_xcrs(struct kvm_vcpu *vcpu, const struct kvm_xcrs *xcrs);
int kvm_vcpu_get_debugregs(struct kvm_vcpu *vcpu, struct kvm_debugregs *dr);
int kvm_vcpu_set_debugregs(struct kvm_vcpu *vcpu, const struct kvm_debugregs *dr);
/* KVM_GET_MSR_INDEX_LIST: the MSRs KVM saves and restores. *list is
 * malloc'd (the caller frees); returns their count or -errno. */
int kvm_msr_index_list(struct kvm_sys *sys, uint32_t **list);
/* KVM_GET_MSRS / KVM_SET_MSRS over e[0..n): how many were done (KVM stops
 * at the first it refuses) or -errno. */
int kvm_vcpu_get_msrs(struct kvm_vcpu *vcpu, struct kvm_msr_entry *e, unsigned n);
int kvm_vcpu_set_msrs(struct kvm_vcpu *vcpu, const struct kvm_msr_entry *e, unsigned n);
/* The VM's kvmclock (KVM_GET_CLOCK / KVM_SET_CLOCK, nanoseconds). */
int kvm_vm_get_clock(struct kvm_vm *vm, struct kvm_clock_data *c);
int kvm_vm_set_clock(struct kvm_vm *vm, uint64_t ns);
/* The in-kernel PIT (KVM_GET_PIT2 / KVM_SET_PIT2). */
int kvm_vm_get_pit2(struct kvm_vm *vm, struct kvm_pit_state2 *pit);
int kvm_vm_set_pit2(struct kvm_vm *vm, const struct kvm_pit_state2 *pit);

#endif /* VMM_KERNEL_KVM_H */
