/* bus.c — port-I/O and MMIO dispatch: a sorted array of non-overlapping
 * regions searched by bisection under a read lock. Lookups vastly outnumber
 * registrations (which happen at init and on PCI BAR moves), and a flat
 * sorted array keeps the hot path to a few cache lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"

#define MISS_LOG_MAX 256

struct iobus {
	const char *name;
	pthread_rwlock_t lock;
	struct io_region *regions;
	size_t n, cap;
	bool miss_log;
	pthread_mutex_t miss_lock;
	uint64_t missed[MISS_LOG_MAX]; /* addresses already reported */
	size_t n_missed;
};

struct iobus *iobus_new(const char *name)
{
	struct iobus *bus = calloc(1, sizeof(*bus));

	if (!bus)
		return NULL;
	bus->name = name;
	bus->miss_log = true;
	pthread_rwlock_init(&bus->lock, NULL);
	pthread_mutex_init(&bus->miss_lock, NULL);
	return bus;
}

void iobus_free(struct iobus *bus)
{
	if (!bus)
		return;
	pthread_rwlock_destroy(&bus->lock);
	pthread_mutex_destroy(&bus->miss_lock);
	free(bus->regions);
	free(bus);
}

const char *iobus_name(const struct iobus *bus)
{
	return bus->name;
}

void iobus_set_miss_log(struct iobus *bus, bool enabled)
{
	bus->miss_log = enabled;
}

/* Index of the first region whose end is above addr (lower bound). */
static size_t first_ending_after(const struct iobus *bus, uint64_t addr)
{
	size_t lo = 0, hi = bus->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct io_region *r = &bus->regions[mid];

		if (r->base + r->len - 1 < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct io_region *find(const struct iobus *bus, uint64_t addr)
{
	size_t i = first_ending_after(bus, addr);

	if (i < bus->n && bus->regions[i].base <= addr)
		return &bus->regions[i];
	return NULL;
}

static int add_region(struct iobus *bus, const struct io_region *add)
{
	uint64_t base = add->base, len = add->len;
	int ret = 0;
	size_t i;

	if (len == 0 || base + len - 1 < base || !add->ops)
		return -EINVAL;
	pthread_rwlock_wrlock(&bus->lock);
	i = first_ending_after(bus, base);
	if (i < bus->n && bus->regions[i].base <= base + len - 1) {
		ret = -EEXIST;
		goto out;
	}
	if (bus->n == bus->cap) {
		size_t cap = bus->cap ? bus->cap * 2 : 16;
		struct io_region *nr = realloc(bus->regions, cap * sizeof(*nr));

		if (!nr) {
			ret = -ENOMEM;
			goto out;
		}
		bus->regions = nr;
		bus->cap = cap;
	}
	memmove(&bus->regions[i + 1], &bus->regions[i], (bus->n - i) * sizeof(bus->regions[0]));
	bus->regions[i] = *add;
	bus->n++;
out:
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

int iobus_register(struct iobus *bus, uint64_t base, uint64_t len, const struct io_ops *ops,
		   void *opaque, const char *name)
{
	return add_region(bus, &(struct io_region){base, len, ops, opaque, name, false});
}

int iobus_register_unlocked(struct iobus *bus, uint64_t base, uint64_t len,
			    const struct io_ops *ops, void *opaque, const char *name)
{
	return add_region(bus, &(struct io_region){base, len, ops, opaque, name, true});
}

int iobus_unregister(struct iobus *bus, uint64_t base)
{
	int ret = -ENOENT;
	size_t i;

	pthread_rwlock_wrlock(&bus->lock);
	i = first_ending_after(bus, base);
	if (i < bus->n && bus->regions[i].base == base) {
		memmove(&bus->regions[i], &bus->regions[i + 1],
			(bus->n - i - 1) * sizeof(bus->regions[0]));
		bus->n--;
		ret = 0;
	}
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

static void log_miss(struct iobus *bus, uint64_t addr, unsigned size, bool write)
{
	size_t i;

	if (!bus->miss_log)
		return;
	pthread_mutex_lock(&bus->miss_lock);
	for (i = 0; i < bus->n_missed; i++)
		if (bus->missed[i] == addr)
			goto out;
	if (bus->n_missed < MISS_LOG_MAX) {
		bus->missed[bus->n_missed++] = addr;
		fprintf(stderr, "vmm: guest %s unclaimed %s address 0x%llx (size %u)%s\n",
			write ? "wrote" : "read", bus->name, (unsigned long long)addr, size,
			write ? ", ignored" : ", returning all-ones");
	}
out:
	pthread_mutex_unlock(&bus->miss_lock);
}

bool iobus_read(struct iobus *bus, uint64_t addr, void *data, unsigned size)
{
	const struct io_region *r;

	pthread_rwlock_rdlock(&bus->lock);
	r = find(bus, addr);
	if (r && r->unlocked) {
		struct io_region copy = *r;

		pthread_rwlock_unlock(&bus->lock);
		if (copy.ops->read)
			copy.ops->read(copy.opaque, addr - copy.base, data, size);
		else
			memset(data, 0xff, size);
		return true;
	}
	if (r && r->ops->read) {
		r->ops->read(r->opaque, addr - r->base, data, size);
		pthread_rwlock_unlock(&bus->lock);
		return true;
	}
	pthread_rwlock_unlock(&bus->lock);
	memset(data, 0xff, size);
	if (!r)
		log_miss(bus, addr, size, false);
	return r != NULL;
}

bool iobus_write(struct iobus *bus, uint64_t addr, const void *data, unsigned size)
{
	const struct io_region *r;

	pthread_rwlock_rdlock(&bus->lock);
	r = find(bus, addr);
	if (r && r->unlocked) {
		struct io_region copy = *r;

		pthread_rwlock_unlock(&bus->lock);
		if (copy.ops->write)
			copy.ops->write(copy.opaque, addr - copy.base, data, size);
		return true;
	}
	if (r && r->ops->write)
		r->ops->write(r->opaque, addr - r->base, data, size);
	pthread_rwlock_unlock(&bus->lock);
	if (!r)
		log_miss(bus, addr, size, true);
	return r != NULL;
}

void iobus_foreach(struct iobus *bus, void (*fn)(const struct io_region *r, void *arg), void *arg)
{
	size_t i;

	pthread_rwlock_rdlock(&bus->lock);
	for (i = 0; i < bus->n; i++)
		fn(&bus->regions[i], arg);
	pthread_rwlock_unlock(&bus->lock);
}

uint64_t io_data_get(const void *data, unsigned size)
{
	const uint8_t *p = data;
	uint64_t v = 0;

	for (unsigned i = 0; i < size && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void io_data_put(void *data, unsigned size, uint64_t value)
{
	uint8_t *p = data;

	for (unsigned i = 0; i < size && i < 8; i++)
		p[i] = (uint8_t)(value >> (8 * i));
}
