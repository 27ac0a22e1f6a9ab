/* virtio.c — the kit's virtio 1.x PCI driver (see virtio.h). Runs in ring 3:
 * PCI configuration through ports 0xcf8/0xcfc, the virtio structures by
 * MMIO through the kit's identity map of 0-4 GiB.
 */
#include <linux/pci_regs.h>

#include "virtio.h"

#define PCI_CONF_ADDR 0xcf8
#define PCI_CONF_DATA 0xcfc
#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_PCI_TRANSITIONAL_BASE 0x1000
#define VIRTIO_PCI_MODERN_BASE 0x1040
/* Where BARs the firmware left unassigned (direct kernel boot) or put above
 * the kit's 4 GiB identity map go: in the PCI hole, clear of RAM (-m up to
 * 3 GiB) and of what SeaBIOS assigns (top-down from 0xfebfffff). */
#define KIT_BAR_BASE 0xd8000000u
#define FOUR_GIB 0x100000000ull

/* ------------------------------------------------------ PCI config space */

static void pci_select(uint8_t devfn, uint8_t off)
{
	outl(PCI_CONF_ADDR, 0x80000000u | (uint32_t)devfn << 8 | (off & 0xfcu));
}

uint32_t pci_read32(uint8_t devfn, uint8_t off)
{
	pci_select(devfn, off);
	return inl(PCI_CONF_DATA);
}

void pci_write32(uint8_t devfn, uint8_t off, uint32_t v)
{
	pci_select(devfn, off);
	outl(PCI_CONF_DATA, v);
}

uint16_t pci_read16(uint8_t devfn, uint8_t off)
{
	pci_select(devfn, off);
	return inw(PCI_CONF_DATA + (off & 2));
}

void pci_write16(uint8_t devfn, uint8_t off, uint16_t v)
{
	pci_select(devfn, off);
	outw(PCI_CONF_DATA + (off & 2), v);
}

uint8_t pci_read8(uint8_t devfn, uint8_t off)
{
	pci_select(devfn, off);
	return inb(PCI_CONF_DATA + (off & 3));
}

/* ------------------------------------------------------------------ BARs */

static uint32_t next_free_bar = KIT_BAR_BASE;

/* Give memory BAR n a 32-bit address in the kit's hole (decoding is off
 * while it moves). Returns the address, 0 on failure. */
static uint64_t bar_assign(uint8_t devfn, unsigned n, bool is64)
{
	uint8_t off = (uint8_t)(PCI_BASE_ADDRESS_0 + 4 * n);
	uint16_t cmd = pci_read16(devfn, PCI_COMMAND);
	uint32_t size, addr;

	pci_write16(devfn, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
	pci_write32(devfn, off, 0xffffffffu);
	size = ~(pci_read32(devfn, off) & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK) + 1;
	if (is64)
		pci_write32(devfn, off + 4, 0);
	if (!size || (size & (size - 1))) {
		printf("virtio: %02x.%u: BAR%u sizes to %x\n", devfn >> 3, devfn & 7, n, size);
		return 0;
	}
	addr = (next_free_bar + size - 1) & ~(size - 1);
	next_free_bar = addr + size;
	pci_write32(devfn, off, addr);
	pci_write16(devfn, PCI_COMMAND, cmd);
	printf("virtio: %02x.%u: BAR%u (%u bytes) assigned at %x\n", devfn >> 3, devfn & 7, n, size,
	       addr);
	return addr;
}

/* The address of memory BAR n, assigned first if it has none we can reach. */
static uint64_t bar_address(uint8_t devfn, unsigned n)
{
	uint8_t off = (uint8_t)(PCI_BASE_ADDRESS_0 + 4 * n);
	uint32_t lo = pci_read32(devfn, off);
	bool is64 = (lo & PCI_BASE_ADDRESS_MEM_TYPE_MASK) == PCI_BASE_ADDRESS_MEM_TYPE_64;
	uint64_t addr = lo & (uint32_t)PCI_BASE_ADDRESS_MEM_MASK;

	if (n > 5 || (lo & PCI_BASE_ADDRESS_SPACE_IO))
		return 0;
	if (is64)
		addr |= (uint64_t)pci_read32(devfn, off + 4) << 32;
	if (addr && addr < FOUR_GIB)
		return addr;
	return bar_assign(devfn, n, is64);
}

/* ---------------------------------------------------------- capabilities */

static volatile uint8_t *cap_pointer(uint8_t devfn, uint8_t cap)
{
	uint8_t bar = pci_read8(devfn, cap + offsetof(struct virtio_pci_cap, bar));
	uint32_t offset = pci_read32(devfn, cap + offsetof(struct virtio_pci_cap, offset));
	uint64_t base = bar_address(devfn, bar);

	return base ? (volatile uint8_t *)(uintptr_t)(base + offset) : NULL;
}

/* Walk the capability list; the first capability of each virtio type wins
 * (the spec lets a device offer alternatives, in order of preference). */
static void map_caps(struct vdev *d)
{
	uint8_t devfn = d->devfn;
	uint8_t cap = pci_read8(devfn, PCI_CAPABILITY_LIST) & 0xfc;

	for (unsigned guard = 0; cap && guard < 48; guard++) {
		uint8_t id = pci_read8(devfn, cap), type;

		if (id != PCI_CAP_ID_VNDR)
			goto next;
		type = pci_read8(devfn, cap + offsetof(struct virtio_pci_cap, cfg_type));
		if (type == VIRTIO_PCI_CAP_COMMON_CFG && !d->common)
			d->common = (volatile void *)cap_pointer(devfn, cap);
		else if (type == VIRTIO_PCI_CAP_NOTIFY_CFG && !d->notify_base) {
			d->notify_base = cap_pointer(devfn, cap);
			d->notify_mult = pci_read32(devfn, cap + sizeof(struct virtio_pci_cap));
		} else if (type == VIRTIO_PCI_CAP_ISR_CFG && !d->isr)
			d->isr = cap_pointer(devfn, cap);
		else if (type == VIRTIO_PCI_CAP_DEVICE_CFG && !d->device_cfg)
			d->device_cfg = cap_pointer(devfn, cap);
	next:
		cap = pci_read8(devfn, cap + 1) & 0xfc;
	}
}

/* Modern (0x1040 + type) or transitional (0x1000-0x103f, type in the
 * subsystem id: QEMU's default on a PCI bus) with this virtio type. */
static bool is_virtio_type(uint8_t devfn, uint16_t type)
{
	uint32_t id = pci_read32(devfn, PCI_VENDOR_ID);
	uint16_t device = (uint16_t)(id >> 16);

	if ((id & 0xffff) != VIRTIO_VENDOR)
		return false;
	if (device == VIRTIO_PCI_MODERN_BASE + type)
		return true;
	return device >= VIRTIO_PCI_TRANSITIONAL_BASE && device < VIRTIO_PCI_MODERN_BASE &&
	       pci_read16(devfn, PCI_SUBSYSTEM_ID) == type;
}

bool vdev_find(struct vdev *d, uint16_t type, unsigned nth)
{
	memset(d, 0, sizeof(*d));
	for (unsigned devfn = 0; devfn < 256; devfn++) {
		if (!is_virtio_type((uint8_t)devfn, type) || nth--)
			continue;
		d->devfn = (uint8_t)devfn;
		d->device_id = pci_read16(d->devfn, PCI_DEVICE_ID);
		pci_write16(d->devfn, PCI_COMMAND,
			    pci_read16(d->devfn, PCI_COMMAND) | PCI_COMMAND_MEMORY |
				    PCI_COMMAND_MASTER);
		map_caps(d);
		if (!d->common || !d->notify_base || !d->isr) {
			printf("virtio: %02x.%u: missing common/notify/ISR capability\n",
			       devfn >> 3, devfn & 7);
			return false;
		}
		return true;
	}
	printf("virtio: no virtio device of type %u (%x:%x) on PCI bus 0\n", type, VIRTIO_VENDOR,
	       VIRTIO_PCI_MODERN_BASE + type);
	return false;
}

/* --------------------------------------------------------------- status */

uint8_t vdev_status(const struct vdev *d)
{
	return d->common->device_status;
}

bool vdev_reset(struct vdev *d)
{
	d->common->device_status = 0;
	/* The spec: the driver waits until the device reads back 0 (each
	 * read is an exit: 10000 is a second or so on slow hosts). */
	for (unsigned i = 0; i < 10000; i++)
		if (d->common->device_status == 0)
			return true;
	printf("virtio: device status stays %x after reset\n", d->common->device_status);
	return false;
}

uint64_t vdev_offered(struct vdev *d)
{
	d->common->device_feature_select = 0;
	uint64_t lo = d->common->device_feature;
	d->common->device_feature_select = 1;
	return (uint64_t)d->common->device_feature << 32 | lo;
}

bool vdev_negotiate(struct vdev *d, uint64_t wanted)
{
	volatile struct virtio_pci_common_cfg *c = d->common;
	uint64_t offered;

	if (!vdev_reset(d))
		return false;
	c->device_status = VIRTIO_CONFIG_S_ACKNOWLEDGE;
	c->device_status = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;
	offered = vdev_offered(d);
	if (!(offered >> VIRTIO_F_VERSION_1 & 1)) {
		printf("virtio: device does not offer VERSION_1 (features %lx)\n", offered);
		return false;
	}
	d->features = offered & (wanted | 1ull << VIRTIO_F_VERSION_1);
	c->guest_feature_select = 0;
	c->guest_feature = (uint32_t)d->features;
	c->guest_feature_select = 1;
	c->guest_feature = (uint32_t)(d->features >> 32);
	c->device_status =
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK;
	if (!(c->device_status & VIRTIO_CONFIG_S_FEATURES_OK)) {
		printf("virtio: device refused features %lx\n", d->features);
		return false;
	}
	return true;
}

void vdev_ready(struct vdev *d)
{
	d->common->device_status |= VIRTIO_CONFIG_S_DRIVER_OK;
}

uint64_t vdev_cfg_read(struct vdev *d, unsigned off, unsigned size)
{
	volatile uint8_t *p = d->device_cfg + off;
	uint8_t gen;
	uint64_t v;

	if (!d->device_cfg)
		return 0;
	do {
		gen = d->common->config_generation;
		switch (size) {
		case 1:
			v = *p;
			break;
		case 2:
			v = *(volatile uint16_t *)p;
			break;
		case 4:
			v = *(volatile uint32_t *)p;
			break;
		default: {
			uint32_t lo = *(volatile uint32_t *)p, hi = *(volatile uint32_t *)(p + 4);

			v = (uint64_t)hi << 32 | lo;
		}
		}
	} while (gen != d->common->config_generation);
	return v;
}

/* ---------------------------------------------------------------- queues */

/* One page each for the descriptor table, the avail and the used ring. */
static uint8_t ring_mem[VDEV_MAX_QUEUES][3][4096] __attribute__((aligned(4096)));
static struct vring_desc indirect_tables[VDEV_MAX_QUEUES][VQ_MAX_SIZE][VQ_MAX_INDIRECT]
	__attribute__((aligned(16)));

static void set_addr(volatile __le32 *lo, volatile __le32 *hi, const void *p)
{
	*lo = (uint32_t)(uintptr_t)p;
	*hi = (uint32_t)((uintptr_t)p >> 32);
}

bool vq_init(struct vq *q, struct vdev *d, uint16_t index, uint16_t max_size)
{
	volatile struct virtio_pci_common_cfg *c = d->common;
	uint16_t size;

	if (index >= VDEV_MAX_QUEUES || index >= c->num_queues) {
		printf("virtio: no queue %u (device has %u)\n", index, c->num_queues);
		return false;
	}
	c->queue_select = index;
	size = c->queue_size;
	if (max_size > VQ_MAX_SIZE)
		max_size = VQ_MAX_SIZE;
	while (size > max_size)
		size /= 2;
	if (!size) {
		printf("virtio: queue %u is not available\n", index);
		return false;
	}
	memset(q, 0, sizeof(*q));
	memset(ring_mem[index], 0, sizeof(ring_mem[index]));
	q->dev = d;
	q->index = index;
	q->size = size;
	q->desc = (void *)ring_mem[index][0];
	q->avail = (void *)ring_mem[index][1];
	q->used = (volatile void *)ring_mem[index][2];
	q->indirect = vdev_has(d, VIRTIO_RING_F_INDIRECT_DESC);
	q->event_idx = vdev_has(d, VIRTIO_RING_F_EVENT_IDX);
	for (uint16_t i = 0; i < size; i++)
		q->desc[i].next = (uint16_t)(i + 1);
	q->num_free = size;
	/* Polled: ask for no interrupts. With EVENT_IDX, used_event is never
	 * reached: it stays half a ring behind the index we have seen. */
	q->avail->flags = q->event_idx ? 0 : VRING_AVAIL_F_NO_INTERRUPT;
	q->avail->ring[size] = 0x8000; /* used_event */

	c->queue_size = size;
	set_addr(&c->queue_desc_lo, &c->queue_desc_hi, q->desc);
	set_addr(&c->queue_avail_lo, &c->queue_avail_hi, q->avail);
	set_addr(&c->queue_used_lo, &c->queue_used_hi, (const void *)q->used);
	/* After the used ring's last element (the spec's avail_event). */
	q->avail_event = (volatile uint16_t *)((uintptr_t)q->used + sizeof(struct vring_used) +
					       size * sizeof(struct vring_used_elem));
	q->notify = (volatile uint16_t *)(d->notify_base + c->queue_notify_off * d->notify_mult);
	c->queue_enable = 1;
	return true;
}

static uint16_t take_desc(struct vq *q)
{
	uint16_t i = q->free_head;

	q->free_head = q->desc[i].next;
	q->num_free--;
	return i;
}

static void fill_desc(struct vring_desc *d, const struct vq_buf *b, uint16_t next, bool last)
{
	d->addr = (uintptr_t)b->addr;
	d->len = b->len;
	d->flags = (uint16_t)((b->device_writes ? VRING_DESC_F_WRITE : 0) |
			      (last ? 0 : VRING_DESC_F_NEXT));
	d->next = last ? 0 : next;
}

bool vq_add(struct vq *q, const struct vq_buf *bufs, unsigned n, void *token)
{
	bool use_indirect = q->indirect && n > 1 && n <= VQ_MAX_INDIRECT;
	unsigned need = use_indirect ? 1 : n;
	uint16_t head;

	if (!n || q->num_free < need)
		return false;
	head = q->free_head;
	if (use_indirect) {
		struct vring_desc *t = indirect_tables[q->index][head];

		take_desc(q);
		for (unsigned i = 0; i < n; i++)
			fill_desc(&t[i], &bufs[i], (uint16_t)(i + 1), i == n - 1);
		q->desc[head] =
			(struct vring_desc){(uintptr_t)t, n * sizeof(*t), VRING_DESC_F_INDIRECT, 0};
	} else {
		for (unsigned i = 0; i < n; i++) {
			uint16_t d = take_desc(q);

			/* After take_desc, free_head is the next one we take. */
			fill_desc(&q->desc[d], &bufs[i], q->free_head, i == n - 1);
		}
	}
	q->token[head] = token;
	q->chain_len[head] = (uint16_t)need;
	q->avail->ring[q->avail_idx % q->size] = head;
	q->avail_idx++;
	return true;
}

void vq_kick(struct vq *q)
{
	uint16_t old = q->kicked_idx, new = q->avail_idx;
	bool notify;

	if (old == new)
		return;
	/* Descriptors and ring entries before the index the device polls. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*(volatile uint16_t *)&q->avail->idx = new;
	q->kicked_idx = new;
	/* The index store before the read of the device's suppression state
	 * (the device does the mirror image): a full fence. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (q->event_idx)
		notify = vring_need_event(*q->avail_event, new, old);
	else
		notify = !(q->used->flags & VRING_USED_F_NO_NOTIFY);
	if (notify) {
		*q->notify = q->index;
		q->kicks++;
	}
}

void *vq_get_used(struct vq *q, uint32_t *len)
{
	uint16_t slot, id;

	if (q->used->idx == q->last_used)
		return NULL;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	slot = q->last_used % q->size;
	id = (uint16_t)q->used->ring[slot].id;
	if (len)
		*len = q->used->ring[slot].len;
	q->last_used++;
	if (q->event_idx)
		*(volatile uint16_t *)&q->avail->ring[q->size] =
			(uint16_t)(q->last_used + 0x8000); /* used_event */
	if (id >= q->size)
		return NULL; /* a device bug; the caller sees "nothing used" */
	/* Give the chain back to the free list. */
	uint16_t last = id;
	for (uint16_t i = 1; i < q->chain_len[id]; i++)
		last = q->desc[last].next;
	q->desc[last].next = q->free_head;
	q->free_head = id;
	q->num_free = (uint16_t)(q->num_free + q->chain_len[id]);
	return q->token[id];
}

struct vring_desc *vq_raw_desc(struct vq *q)
{
	return q->desc;
}

void vq_raw_publish(struct vq *q, uint16_t head)
{
	q->avail->ring[q->avail_idx % q->size] = head;
	q->avail_idx++;
	vq_kick(q);
}
