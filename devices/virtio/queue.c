/* queue.c — split virtqueues (virtio 1.x, section 2.7): walking
 * descriptor chains (with INDIRECT_DESC), returning them on the used ring
 * and EVENT_IDX notification suppression.
 *
 * Every value read from a ring is guest-controlled and may change under
 * us: each descriptor is copied once before it is used, every index is
 * bounded, every buffer goes through guest_mem_ptr, and a chain visits
 * at most as many descriptors as its table holds (so a loop ends). */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/virtio/virtio.h"

static uint16_t load16_acquire(const __virtio16 *p)
{
	return le16toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

static int fail(struct virtq *q, const char *why)
{
	if (!q->broken)
		q->broken = why;
	return -EINVAL;
}

void virtq_reset(struct virtq *q, uint16_t max_size)
{
	memset(q, 0, sizeof(*q));
	q->max_size = q->size = max_size;
	q->msix_vector = VIRTIO_MSI_NO_VECTOR;
}

/* Host pointer for a ring part of len bytes aligned to align, or NULL.
 * The device writes through it as long as the driver runs: pinned. */
static void *map_ring(const struct guest_mem *mem, uint64_t gpa, uint64_t len, uint64_t align)
{
	if (gpa & (align - 1))
		return NULL;
	return guest_mem_pin(mem, gpa, len);
}

/* Map the three rings of q->size entries (a power of two). */
static int map_rings(struct virtq *q)
{
	uint16_t n = q->size;

	q->vr.num = n;
	/* the trailing u16 is used_event / avail_event (EVENT_IDX) */
	q->vr.desc = map_ring(q->mem, q->desc_gpa, 16ull * n, VRING_DESC_ALIGN_SIZE);
	q->vr.avail = map_ring(q->mem, q->avail_gpa, 6ull + 2ull * n, VRING_AVAIL_ALIGN_SIZE);
	q->vr.used = map_ring(q->mem, q->used_gpa, 6ull + 8ull * n, VRING_USED_ALIGN_SIZE);
	if (!q->vr.desc || !q->vr.avail || !q->vr.used)
		return fail(q, "a ring lies outside guest RAM or is misaligned");
	return 0;
}

int virtq_restore(struct virtq *q, const struct guest_mem *mem, bool event_idx, bool indirect,
		  uint16_t last_avail, uint16_t used_idx)
{
	uint16_t n = q->size;

	q->mem = mem;
	q->event_idx = event_idx;
	q->indirect = indirect;
	q->broken = NULL;
	if (n == 0 || n > q->max_size || (n & (n - 1)))
		return fail(q, "queue size is not a power of two up to the maximum");
	if (map_rings(q) < 0)
		return -EINVAL;
	/* Guest RAM is loaded before the device: the rings must agree with
	 * the indices, else the tree and the memory are not one snapshot. */
	if (load16_acquire(&q->vr.used->idx) != used_idx)
		return fail(q, "the used index differs from the used ring's");
	if ((uint16_t)(load16_acquire(&q->vr.avail->idx) - last_avail) > n)
		return fail(q, "the next available entry is not within a ring of the avail index");
	if ((uint16_t)(last_avail - used_idx) > n)
		return fail(q, "more entries taken than the ring holds beyond the used index");
	q->last_avail = last_avail;
	q->used_idx = used_idx;
	return 0;
}

int virtq_start(struct virtq *q, const struct guest_mem *mem, bool event_idx, bool indirect)
{
	uint16_t n = q->size;

	q->mem = mem;
	q->event_idx = event_idx;
	q->indirect = indirect;
	q->last_avail = q->used_idx = 0;
	q->signalled_valid = false;
	q->broken = NULL;
	if (n == 0 || n > q->max_size || (n & (n - 1)))
		return fail(q, "queue size is not a power of two up to the maximum");
	if (map_rings(q) < 0)
		return -EINVAL;
	/* the device owns used->idx: start from what is there after reset */
	__atomic_store_n(&q->vr.used->idx, 0, __ATOMIC_RELEASE);
	q->vr.used->flags = 0;
	return 0;
}

static int add_buf(struct virtq *q, struct virtq_chain *c, uint64_t gpa, uint32_t len,
		   bool writable)
{
	unsigned n = c->n_out + c->n_in;
	uint8_t *p;

	if (!writable && c->n_in)
		return fail(q, "a device-readable descriptor follows a writable one");
	if (len == 0)
		return 0; /* nothing to transfer; not an error */
	if (n == VIRTQ_MAX_CHAIN)
		return fail(q, "descriptor chain too long");
	p = guest_mem_ptr(q->mem, gpa, len);
	if (!p)
		return fail(q, "a descriptor's buffer lies outside guest RAM");
	c->buf[n] = (struct virtq_buf){p, len};
	if (writable) {
		c->n_in++;
		c->in_len += len;
	} else {
		c->n_out++;
		c->out_len += len;
	}
	return 0;
}

/* The indirect table a descriptor names, checked: *n entries. */
static const struct vring_desc *indirect_table(struct virtq *q, const struct vring_desc *d,
					       uint16_t flags, unsigned *n)
{
	uint32_t len = le32toh(d->len);
	const struct vring_desc *t;

	if (!q->indirect) {
		fail(q, "indirect descriptor without VIRTIO_RING_F_INDIRECT_DESC");
		return NULL;
	}
	if (flags & VRING_DESC_F_NEXT) {
		fail(q, "indirect descriptor with NEXT set");
		return NULL;
	}
	if (len == 0 || len % sizeof(struct vring_desc) || len / 16 > VIRTQ_MAX_CHAIN) {
		fail(q, "indirect table length is 0, not a multiple of 16 or too long");
		return NULL;
	}
	t = guest_mem_ptr(q->mem, le64toh(d->addr), len);
	if (!t)
		fail(q, "indirect table lies outside guest RAM");
	*n = len / 16;
	return t;
}

/* Follow a chain through table[0..n) from index i; at most one level of
 * indirection. */
static int walk(struct virtq *q, struct virtq_chain *c, const struct vring_desc *table, unsigned n,
		uint16_t i, bool in_indirect)
{
	for (unsigned count = 1;; count++) {
		struct vring_desc d;
		uint16_t flags;

		if (count > n)
			return fail(q, in_indirect
					       ? "loop in an indirect descriptor table"
					       : "descriptor chain longer than the queue (a loop)");
		memcpy(&d, &table[i], sizeof(d)); /* one read: the guest may change it */
		flags = le16toh(d.flags);
		if (flags & VRING_DESC_F_INDIRECT) {
			const struct vring_desc *t;
			unsigned tn;

			if (in_indirect)
				return fail(q, "indirect descriptor inside an indirect table");
			t = indirect_table(q, &d, flags, &tn);
			return t ? walk(q, c, t, tn, 0, true) : -EINVAL;
		}
		if (add_buf(q, c, le64toh(d.addr), le32toh(d.len), flags & VRING_DESC_F_WRITE))
			return -EINVAL;
		if (!(flags & VRING_DESC_F_NEXT))
			return 0;
		i = le16toh(d.next);
		if (i >= n)
			return fail(q, "next descriptor index beyond the table");
	}
}

int virtq_pop(struct virtq *q, struct virtq_chain *c)
{
	uint16_t avail, pending, head;

	if (q->broken)
		return -EINVAL;
	avail = load16_acquire(&q->vr.avail->idx);
	pending = (uint16_t)(avail - q->last_avail);
	if (pending > q->vr.num)
		return fail(q, "avail index moved by more than the queue size");
	if (!pending)
		return 0;
	head = le16toh(__atomic_load_n(&q->vr.avail->ring[q->last_avail & (q->vr.num - 1)],
				       __ATOMIC_RELAXED));
	if (head >= q->vr.num)
		return fail(q, "avail ring names a descriptor beyond the queue");
	c->head = head;
	c->n_out = c->n_in = 0;
	c->out_len = c->in_len = 0;
	if (walk(q, c, q->vr.desc, q->vr.num, head, false) < 0)
		return -EINVAL;
	q->last_avail++;
	return 1;
}

void virtq_unpop(struct virtq *q, uint16_t n)
{
	q->last_avail = (uint16_t)(q->last_avail - n);
}

/* Mark the device-writable buffers of the chain at head again (through
 * guest_mem_ptr): the device wrote them since virtq_pop marked them, maybe
 * after a live migration's pass took that mark. The chain was checked at
 * pop; a guest that rewrote it since gets its own pages wrong, nothing
 * more, so anything odd just ends the walk. */
static void mark_written(struct virtq *q, uint16_t head)
{
	const struct vring_desc *table = q->vr.desc;
	unsigned n = q->vr.num, i = head;
	bool in_indirect = false;

	for (unsigned count = 0; count < n && i < n;) {
		struct vring_desc d;
		uint16_t flags;

		memcpy(&d, &table[i], sizeof(d));
		flags = le16toh(d.flags);
		if ((flags & VRING_DESC_F_INDIRECT) && !in_indirect) {
			n = le32toh(d.len) / sizeof(d);
			table = guest_mem_ptr(q->mem, le64toh(d.addr), (uint64_t)n * sizeof(d));
			if (!table || n > VIRTQ_MAX_CHAIN)
				return;
			in_indirect = true;
			i = 0;
			count = 0;
			continue;
		}
		if (flags & VRING_DESC_F_WRITE)
			guest_mem_ptr(q->mem, le64toh(d.addr), le32toh(d.len));
		if (!(flags & VRING_DESC_F_NEXT))
			return;
		i = le16toh(d.next);
		count++;
	}
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t len)
{
	vring_used_elem_t *e = &q->vr.used->ring[q->used_idx & (q->vr.num - 1)];

	if (guest_mem_tracking(q->mem))
		mark_written(q, head);
	e->id = htole32(head);
	e->len = htole32(len);
	q->used_idx++;
	/* the element is visible before the index that publishes it */
	__atomic_store_n(&q->vr.used->idx, htole16(q->used_idx), __ATOMIC_RELEASE);
}

bool virtq_should_notify(struct virtq *q)
{
	uint16_t old = q->signalled_used, new = q->used_idx;
	bool valid = q->signalled_valid;

	/* our used->idx store before the driver's suppression fields */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!q->event_idx)
		return !(le16toh(__atomic_load_n(&q->vr.avail->flags, __ATOMIC_RELAXED)) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	q->signalled_used = new;
	q->signalled_valid = true;
	return !valid || vring_need_event(le16toh(__atomic_load_n(&vring_used_event(&q->vr),
								  __ATOMIC_RELAXED)),
					  new, old);
}

void virtq_set_notify(struct virtq *q, bool enable)
{
	if (q->event_idx) {
		/* leaving avail_event behind is what suppresses doorbells */
		if (enable)
			__atomic_store_n(&vring_avail_event(&q->vr), htole16(q->last_avail),
					 __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&q->vr.used->flags, htole16(enable ? 0 : VRING_USED_F_NO_NOTIFY),
				 __ATOMIC_RELAXED);
	}
	/* the store before the caller's next look at avail->idx */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

bool virtq_has_avail(const struct virtq *q)
{
	return !q->broken && load16_acquire(&q->vr.avail->idx) != q->last_avail;
}

size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst, size_t len)
{
	uint8_t *d = dst;
	size_t done = 0;

	for (unsigned i = 0; i < c->n_out && done < len; i++) {
		const struct virtq_buf *b = &c->buf[i];
		size_t n;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n = b->len - off < len - done ? b->len - off : len - done;
		memcpy(d + done, b->ptr + off, n);
		done += n;
		off = 0;
	}
	return done;
}

size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off, const void *src, size_t len)
{
	const uint8_t *s = src;
	size_t done = 0;

	for (unsigned i = c->n_out; i < c->n_out + c->n_in && done < len; i++) {
		const struct virtq_buf *b = &c->buf[i];
		size_t n;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n = b->len - off < len - done ? b->len - off : len - done;
		memcpy(b->ptr + off, s + done, n);
		done += n;
		off = 0;
	}
	return done;
}
