/* fw_cfg.c — QEMU's firmware configuration interface on port I/O.
 *
 * 0x510 (16-bit) selects an item and rewinds it, 0x511 reads it byte by
 * byte. The DMA interface takes the guest-physical address of a
 * { be32 control; be32 length; be64 address; } descriptor, written
 * big-endian as two dwords to 0x514 (high) and 0x518 (low, starts the
 * transfer); reading 0x514 gives the "QEMU CFG" signature. Every guest
 * address goes through guest_mem_ptr: a descriptor or buffer outside RAM
 * fails with the error bit, never a host access. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/fw_cfg.h"
#include "state/state.h"

#define FW_CFG_STATE_VERSION 1

#define PORT_SEL 0x510
#define PORT_DMA 0x514
#define FW_CFG_VERSION 0x01
#define FW_CFG_VERSION_DMA 0x02
#define DMA_SIGNATURE 0x51454d5520434647ull /* "QEMU CFG" */

#define DMA_CTL_ERROR 0x01
#define DMA_CTL_READ 0x02
#define DMA_CTL_SKIP 0x04
#define DMA_CTL_SELECT 0x08
#define DMA_CTL_WRITE 0x10

#define MAX_KEYS 0x20
#define KEY_ARCH 0x8000
#define MAX_ARCH_KEYS 0x10

struct item {
	uint8_t *data;
	uint32_t len;
};

struct fw_file {
	char name[FW_CFG_FILE_NAME_LEN];
	uint16_t key;
};

struct fw_cfg {
	struct dev_host *host;
	pthread_mutex_t lock;
	struct item std[MAX_KEYS + FW_CFG_MAX_FILES];
	struct item arch[MAX_ARCH_KEYS];
	struct fw_file files[FW_CFG_MAX_FILES];
	unsigned nfiles;
	uint16_t cur;
	uint32_t offset;
	uint32_t dma_high;
};

static struct item *item_of(struct fw_cfg *f, uint16_t key)
{
	if (key & KEY_ARCH) {
		key &= ~KEY_ARCH;
		return key < MAX_ARCH_KEYS ? &f->arch[key] : NULL;
	}
	return key < MAX_KEYS + FW_CFG_MAX_FILES ? &f->std[key] : NULL;
}

static int set_item(struct fw_cfg *f, uint16_t key, const void *data, size_t len)
{
	struct item *it = item_of(f, key);
	uint8_t *copy;

	if (!it)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -E2BIG;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	free(it->data);
	it->data = copy;
	it->len = (uint32_t)len;
	return 0;
}

int fw_cfg_add(struct fw_cfg *f, uint16_t key, const void *data, size_t len)
{
	int ret;

	pthread_mutex_lock(&f->lock);
	ret = set_item(f, key, data, len);
	pthread_mutex_unlock(&f->lock);
	return ret;
}

int fw_cfg_add_u16(struct fw_cfg *f, uint16_t key, uint16_t v)
{
	uint8_t b[2];

	io_data_put(b, 2, v);
	return fw_cfg_add(f, key, b, 2);
}

int fw_cfg_add_u32(struct fw_cfg *f, uint16_t key, uint32_t v)
{
	uint8_t b[4];

	io_data_put(b, 4, v);
	return fw_cfg_add(f, key, b, 4);
}

int fw_cfg_add_u64(struct fw_cfg *f, uint16_t key, uint64_t v)
{
	uint8_t b[8];

	io_data_put(b, 8, v);
	return fw_cfg_add(f, key, b, 8);
}

static void put_be(uint8_t *p, unsigned size, uint64_t v)
{
	for (unsigned i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * (size - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v = v << 8 | p[i];
	return v;
}

/* The directory: be32 count, then { be32 size; be16 select; u16 0;
 * char name[56]; } sorted by name, as QEMU lists it. */
static int rebuild_dir(struct fw_cfg *f)
{
	size_t len = 4 + (size_t)f->nfiles * 64;
	uint8_t *dir = calloc(1, len);
	int ret;

	if (!dir)
		return -ENOMEM;
	put_be(dir, 4, f->nfiles);
	for (unsigned i = 0; i < f->nfiles; i++) {
		uint8_t *e = dir + 4 + i * 64;

		put_be(e, 4, f->std[f->files[i].key].len);
		put_be(e + 4, 2, f->files[i].key);
		memcpy(e + 8, f->files[i].name, FW_CFG_FILE_NAME_LEN);
	}
	ret = set_item(f, FW_CFG_FILE_DIR, dir, len);
	free(dir);
	return ret;
}

int fw_cfg_add_file(struct fw_cfg *f, const char *name, const void *data, size_t len)
{
	unsigned i, pos;
	uint16_t key;
	int ret;

	if (strlen(name) >= FW_CFG_FILE_NAME_LEN)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nfiles; i++)
		if (!strcmp(f->files[i].name, name)) {
			pthread_mutex_unlock(&f->lock);
			return -EEXIST;
		}
	if (f->nfiles == FW_CFG_MAX_FILES) {
		pthread_mutex_unlock(&f->lock);
		return -ENOSPC;
	}
	key = (uint16_t)(FW_CFG_FILE_FIRST + f->nfiles);
	ret = set_item(f, key, data, len);
	if (ret == 0) {
		for (pos = 0; pos < f->nfiles && strcmp(f->files[pos].name, name) < 0; pos++)
			;
		memmove(&f->files[pos + 1], &f->files[pos],
			(f->nfiles - pos) * sizeof(f->files[0]));
		memset(&f->files[pos], 0, sizeof(f->files[pos]));
		strcpy(f->files[pos].name, name);
		f->files[pos].key = key;
		f->nfiles++;
		ret = rebuild_dir(f);
	}
	pthread_mutex_unlock(&f->lock);
	return ret;
}

/* Next byte of the selected item; items read as zeros past their end. */
static uint8_t next_byte(struct fw_cfg *f)
{
	struct item *it = item_of(f, f->cur);
	uint8_t b = 0;

	if (it && f->offset < it->len)
		b = it->data[f->offset];
	if (it && f->offset < it->len)
		f->offset++;
	return b;
}

static void select_key(struct fw_cfg *f, uint16_t key)
{
	f->cur = key;
	f->offset = 0;
}

/* Run the descriptor at gpa. Returns the control word to write back. */
static uint32_t dma_run(struct fw_cfg *f, uint64_t gpa)
{
	const struct guest_mem *gm = f->host->mem;
	uint8_t desc[16];
	uint32_t control, len;
	uint64_t addr;
	struct item *it;

	if (guest_mem_read(gm, gpa, desc, sizeof(desc)))
		return UINT32_MAX; /* cannot even report: leave memory alone */
	control = (uint32_t)get_be(desc, 4);
	len = (uint32_t)get_be(desc + 4, 4);
	addr = get_be(desc + 8, 8);
	if (control & DMA_CTL_SELECT)
		select_key(f, (uint16_t)(control >> 16));
	it = item_of(f, f->cur);
	if (control & DMA_CTL_WRITE)
		return DMA_CTL_ERROR; /* no writable items */
	if (control & (DMA_CTL_READ | DMA_CTL_SKIP)) {
		uint32_t avail = it && f->offset < it->len ? it->len - f->offset : 0;
		uint32_t n = len < avail ? len : avail;

		if (control & DMA_CTL_READ) {
			uint8_t *dst = guest_mem_ptr(gm, addr, len);

			if (!dst)
				return DMA_CTL_ERROR;
			if (n)
				memcpy(dst, it->data + f->offset, n);
			memset(dst + n, 0, len - n);
		}
		f->offset += n;
	}
	return 0;
}

static void dma_start(struct fw_cfg *f, uint64_t gpa)
{
	uint32_t result = dma_run(f, gpa);
	uint8_t ctl[4];

	if (result == UINT32_MAX)
		return;
	put_be(ctl, 4, result);
	guest_mem_write(f->host->mem, gpa, ctl, 4);
}

static void sel_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct fw_cfg *f = opaque;
	uint64_t v = 0;

	pthread_mutex_lock(&f->lock);
	if (off == 1) /* data port: consecutive bytes, little-endian */
		for (unsigned i = 0; i < size; i++)
			v |= (uint64_t)next_byte(f) << (8 * i);
	pthread_mutex_unlock(&f->lock);
	io_data_put(data, size, v);
}

static void sel_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct fw_cfg *f = opaque;

	if (off != 0 || size < 2)
		return; /* data writes are ignored: nothing is writable */
	pthread_mutex_lock(&f->lock);
	select_key(f, (uint16_t)io_data_get(data, 2));
	pthread_mutex_unlock(&f->lock);
}

static void dma_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	uint64_t v = 0;

	/* the signature as a big-endian 64-bit register */
	if (off + size <= 8)
		v = DMA_SIGNATURE >> (8 * (8 - off - size));
	io_data_put(data, size, size == 8 ? v : v & ((1ull << (8 * size)) - 1));
}

static void dma_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct fw_cfg *f = opaque;
	uint8_t raw[8] = {0};
	uint64_t v;

	if (size != 4 && size != 8)
		return;
	memcpy(raw, data, size);
	v = get_be(raw, size); /* the guest stored it big-endian */
	pthread_mutex_lock(&f->lock);
	if (size == 8 && off == 0) {
		dma_start(f, v);
	} else if (off == 0) {
		f->dma_high = (uint32_t)v;
	} else if (off == 4) {
		dma_start(f, (uint64_t)f->dma_high << 32 | (uint32_t)v);
		f->dma_high = 0;
	}
	pthread_mutex_unlock(&f->lock);
}

static const struct io_ops sel_ops = {sel_read, sel_write};
static const struct io_ops dma_ops = {dma_read, dma_write};

static void release(struct fw_cfg *f)
{
	for (unsigned i = 0; i < MAX_KEYS + FW_CFG_MAX_FILES; i++)
		free(f->std[i].data);
	for (unsigned i = 0; i < MAX_ARCH_KEYS; i++)
		free(f->arch[i].data);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

struct fw_cfg *fw_cfg_new(struct dev_host *host)
{
	struct fw_cfg *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->host = host;
	pthread_mutex_init(&f->lock, NULL);
	if (set_item(f, FW_CFG_SIGNATURE, "QEMU", 4) || rebuild_dir(f) ||
	    fw_cfg_add_u32(f, FW_CFG_ID, FW_CFG_VERSION | FW_CFG_VERSION_DMA) ||
	    iobus_register(host->pio, PORT_SEL, 2, &sel_ops, f, "fw_cfg")) {
		release(f);
		return NULL;
	}
	if (iobus_register(host->pio, PORT_DMA, 8, &dma_ops, f, "fw_cfg-dma")) {
		iobus_unregister(host->pio, PORT_SEL);
		release(f);
		return NULL;
	}
	return f;
}

/* Snapshot: the selector, the read offset into the selected item and the
 * DMA address register's latched high half. The items themselves are not
 * saved: the destination builds them from the same command line (kernel,
 * initrd, ACPI tables, files), as QEMU's fw_cfg does. */
void fw_cfg_save(struct fw_cfg *f, struct state_writer *w)
{
	pthread_mutex_lock(&f->lock);
	state_begin(w, "fw-cfg@510", FW_CFG_STATE_VERSION);
	state_put_u16(w, "selector", f->cur);
	state_put_u32(w, "offset", f->offset);
	state_put_u32(w, "dma-address-high", f->dma_high);
	state_end(w);
	pthread_mutex_unlock(&f->lock);
}

int fw_cfg_load(struct fw_cfg *f, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;
	uint16_t cur;
	uint32_t offset, high;
	struct item *it;

	if (state_node_open(&n, r, "fw-cfg@510", FW_CFG_STATE_VERSION, err, errlen) < 0 ||
	    state_get_u16(&n, "selector", &cur) < 0 || state_get_u32(&n, "offset", &offset) < 0 ||
	    state_get_u32(&n, "dma-address-high", &high) < 0)
		return -1;
	pthread_mutex_lock(&f->lock);
	it = item_of(f, cur);
	if (offset && (!it || offset > it->len)) {
		pthread_mutex_unlock(&f->lock);
		return state_node_fail(&n, "offset %u is past the end of item %#x", offset, cur);
	}
	if (state_node_close(&n) < 0) {
		pthread_mutex_unlock(&f->lock);
		return -1;
	}
	f->cur = cur;
	f->offset = offset;
	f->dma_high = high;
	pthread_mutex_unlock(&f->lock);
	return 0;
}

void fw_cfg_free(struct fw_cfg *f)
{
	if (!f)
		return;
	iobus_unregister(f->host->pio, PORT_SEL);
	iobus_unregister(f->host->pio, PORT_DMA);
	release(f);
}
