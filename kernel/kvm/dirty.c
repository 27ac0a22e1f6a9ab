/* dirty.c — dirty page logging over the guest RAM's memory slots, for live
 * migration (see kvm.h, kvm_vm_dirty_log_start). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel/kvm/kvm.h"

#define PAGE 4096u

static int dirty_ioctl(int fd, unsigned long req, void *arg)
{
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

/* The slot's host memory lies inside [hva, hva+size). */
static bool slot_inside(const struct kvm_slot *s, const void *hva, uint64_t size)
{
	const uint8_t *base = hva, *at = s->hva;

	return s->used && !(s->flags & KVM_MEM_READONLY) && at >= base &&
	       (uint64_t)(at - base) + s->size <= size;
}

int kvm_vm_dirty_log_start(struct kvm_vm *vm, const void *hva, uint64_t size)
{
	struct kvm_enable_cap cap = {.cap = KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
				     .args = {KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE}};
	int r;

	/* Without the capability (older hosts) KVM_GET_DIRTY_LOG clears and
	 * re-protects the whole slot itself: the same result, coarser. */
	vm->manual_dirty_protect = dirty_ioctl(vm->fd, KVM_CHECK_EXTENSION,
					       (void *)KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2) > 0 &&
				   dirty_ioctl(vm->fd, KVM_ENABLE_CAP, &cap) == 0;
	for (int i = 0; i < KVM_MAX_SLOTS; i++) {
		if (!slot_inside(&vm->slots[i], hva, size))
			continue;
		r = kvm_vm_set_dirty_logging(vm, i, true);
		if (r < 0) {
			kvm_vm_dirty_log_stop(vm, hva, size);
			return r;
		}
	}
	return 0;
}

/* OR the slot's bits (n pages) into bitmap from bit `first` on. */
static void or_bits(uint64_t *bitmap, uint64_t first, const uint64_t *slot_bits, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (slot_bits[i / 64] >> (i % 64) & 1)
			bitmap[(first + i) / 64] |= 1ull << ((first + i) % 64);
}

static int sync_slot(struct kvm_vm *vm, int slot, uint64_t *bits)
{
	struct kvm_slot *s = &vm->slots[slot];
	struct kvm_dirty_log log = {.slot = (uint32_t)slot, .dirty_bitmap = bits};
	struct kvm_clear_dirty_log clear = {.slot = (uint32_t)slot,
					    .num_pages = (uint32_t)(s->size / PAGE),
					    .dirty_bitmap = bits};
	int r = dirty_ioctl(vm->fd, KVM_GET_DIRTY_LOG, &log);

	/* The caller copies these pages after this returns: a write after
	 * the clear is logged again, so nothing is lost between the two. */
	if (r == 0 && vm->manual_dirty_protect)
		r = dirty_ioctl(vm->fd, KVM_CLEAR_DIRTY_LOG, &clear);
	return r < 0 ? r : 0;
}

int kvm_vm_dirty_log_sync(struct kvm_vm *vm, const void *hva, uint64_t size, uint64_t *bitmap)
{
	for (int i = 0; i < KVM_MAX_SLOTS; i++) {
		struct kvm_slot *s = &vm->slots[i];
		uint64_t pages = s->size / PAGE, *bits;
		int r;

		if (!slot_inside(s, hva, size) || !(s->flags & KVM_MEM_LOG_DIRTY_PAGES))
			continue;
		bits = calloc((pages + 63) / 64, sizeof(uint64_t));
		if (!bits)
			return -ENOMEM;
		r = sync_slot(vm, i, bits);
		if (r == 0)
			or_bits(bitmap,
				(uint64_t)((const uint8_t *)s->hva - (const uint8_t *)hva) / PAGE,
				bits, pages);
		free(bits);
		if (r < 0)
			return r;
	}
	return 0;
}

void kvm_vm_dirty_log_stop(struct kvm_vm *vm, const void *hva, uint64_t size)
{
	for (int i = 0; i < KVM_MAX_SLOTS; i++)
		if (slot_inside(&vm->slots[i], hva, size) &&
		    vm->slots[i].flags & KVM_MEM_LOG_DIRTY_PAGES)
			kvm_vm_set_dirty_logging(vm, i, false);
}
