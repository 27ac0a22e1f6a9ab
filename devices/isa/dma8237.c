/* dma8237.c — the two 8237A DMA controllers of a PC (channels 0-3 at
 * 0x00-0x0f, 4-7 at 0xc0-0xdf on even ports) and the page registers
 * (0x81-0x8f). No device here does ISA DMA (no floppy, no Sound Blaster),
 * so this is the register file firmware and kernels program — address and
 * count through the byte flip-flop, mode, mask, master clear — and the
 * status register reports no request and no terminal count. */
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/isa/dma8237.h"
#include "state/state.h"

#define DMA_STATE_VERSION 1

#define DMA1_BASE 0x00
#define DMA2_BASE 0xc0
#define PAGE_BASE 0x81
#define PAGE_LEN 15 /* 0x81-0x8f; 0x80 is the POST port */
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum {
	REG_STATUS_CMD = 8,
	REG_REQUEST = 9,
	REG_MASK_ONE = 10,
	REG_MODE = 11,
	REG_CLEAR_FF = 12,
	REG_MASTER_CLEAR = 13,
	REG_CLEAR_MASK = 14,
	REG_MASK_ALL = 15,
};

struct dma_ctrl {
	uint16_t addr[4], count[4];
	uint8_t mode[4];
	uint8_t command, request, mask;
	bool flip; /* false: next byte is the low one */
};

struct dma8237 {
	pthread_mutex_t lock;
	struct dev_host *host;
	struct dma_ctrl c[2];
	uint8_t page[PAGE_LEN];
};

static void ctrl_clear(struct dma_ctrl *c)
{
	memset(c, 0, sizeof(*c));
	c->mask = 0x0f; /* all channels masked after reset */
}

/* One byte of a 16-bit address or count register, through the flip-flop. */
static uint8_t word_read(struct dma_ctrl *c, uint16_t *w)
{
	uint8_t v = (uint8_t)(c->flip ? *w >> 8 : *w);

	c->flip = !c->flip;
	return v;
}

static void word_write(struct dma_ctrl *c, uint16_t *w, uint8_t v)
{
	*w = c->flip ? (uint16_t)((*w & 0x00ff) | v << 8) : (uint16_t)((*w & 0xff00) | v);
	c->flip = !c->flip;
}

static uint8_t ctrl_read(struct dma_ctrl *c, unsigned reg)
{
	if (reg < 8)
		return word_read(c, reg & 1 ? &c->count[reg / 2] : &c->addr[reg / 2]);
	if (reg == REG_STATUS_CMD)
		return 0; /* no request pending, no terminal count */
	if (reg == REG_MASK_ALL)
		return c->mask | 0xf0;
	return 0xff;
}

static void ctrl_write(struct dma_ctrl *c, unsigned reg, uint8_t v)
{
	unsigned ch = v & 3;

	if (reg < 8) {
		word_write(c, reg & 1 ? &c->count[reg / 2] : &c->addr[reg / 2], v);
		return;
	}
	switch (reg) {
	case REG_STATUS_CMD:
		c->command = v;
		break;
	case REG_REQUEST:
		c->request = (uint8_t)((c->request & ~(1u << ch)) | ((v >> 2 & 1u) << ch));
		break;
	case REG_MASK_ONE:
		c->mask = (uint8_t)((c->mask & ~(1u << ch)) | ((v >> 2 & 1u) << ch));
		break;
	case REG_MODE:
		c->mode[ch] = v;
		break;
	case REG_CLEAR_FF:
		c->flip = false;
		break;
	case REG_MASTER_CLEAR:
		ctrl_clear(c);
		break;
	case REG_CLEAR_MASK:
		c->mask = 0;
		break;
	case REG_MASK_ALL:
		c->mask = v & 0x0f;
		break;
	}
}

static void dma1_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct dma8237 *d = opaque;
	uint8_t v;

	pthread_mutex_lock(&d->lock);
	v = ctrl_read(&d->c[0], (unsigned)off);
	pthread_mutex_unlock(&d->lock);
	io_data_put(data, size, v);
}

static void dma1_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct dma8237 *d = opaque;

	pthread_mutex_lock(&d->lock);
	ctrl_write(&d->c[0], (unsigned)off, (uint8_t)io_data_get(data, 1));
	pthread_mutex_unlock(&d->lock);
}

/* The second controller decodes only even ports: register = offset / 2. */
static void dma2_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct dma8237 *d = opaque;
	uint8_t v = 0xff;

	pthread_mutex_lock(&d->lock);
	if (!(off & 1))
		v = ctrl_read(&d->c[1], (unsigned)off / 2);
	pthread_mutex_unlock(&d->lock);
	io_data_put(data, size, v);
}

static void dma2_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct dma8237 *d = opaque;

	pthread_mutex_lock(&d->lock);
	if (!(off & 1))
		ctrl_write(&d->c[1], (unsigned)off / 2, (uint8_t)io_data_get(data, 1));
	pthread_mutex_unlock(&d->lock);
}

static void page_read(void *opaque, uint64_t off, void *data, unsigned size)
{
	struct dma8237 *d = opaque;
	uint8_t v;

	pthread_mutex_lock(&d->lock);
	v = d->page[off];
	pthread_mutex_unlock(&d->lock);
	io_data_put(data, size, v);
}

static void page_write(void *opaque, uint64_t off, const void *data, unsigned size)
{
	struct dma8237 *d = opaque;

	pthread_mutex_lock(&d->lock);
	d->page[off] = (uint8_t)io_data_get(data, 1);
	pthread_mutex_unlock(&d->lock);
}

static const struct io_ops dma1_ops = {dma1_read, dma1_write};
static const struct io_ops dma2_ops = {dma2_read, dma2_write};
static const struct io_ops page_ops = {page_read, page_write};

static void dma8237_reset(void *opaque)
{
	struct dma8237 *d = opaque;

	pthread_mutex_lock(&d->lock);
	ctrl_clear(&d->c[0]);
	ctrl_clear(&d->c[1]);
	memset(d->page, 0, sizeof(d->page));
	pthread_mutex_unlock(&d->lock);
}

static const struct {
	uint16_t base, len;
	const struct io_ops *ops;
	const char *name;
} regions[] = {
	{DMA1_BASE, 16, &dma1_ops, "dma1"},
	{DMA2_BASE, 32, &dma2_ops, "dma2"},
	{PAGE_BASE, PAGE_LEN, &page_ops, "dma-page"},
};

/* Take back the first n regions of the table. */
static void unregister_first(struct dma8237 *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		iobus_unregister(d->host->pio, regions[i].base);
}

struct dma8237 *dma8237_new(struct dev_host *host)
{
	struct dma8237 *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	d->host = host;
	dma8237_reset(d);
	for (unsigned i = 0; i < ARRAY_LEN(regions); i++) {
		if (iobus_register(host->pio, regions[i].base, regions[i].len, regions[i].ops, d,
				   regions[i].name) < 0) {
			unregister_first(d, i);
			goto fail;
		}
	}
	if (dev_on_reset(host, dma8237_reset, d) == 0)
		return d;
	unregister_first(d, ARRAY_LEN(regions));
fail:
	pthread_mutex_destroy(&d->lock);
	free(d);
	return NULL;
}

/* Snapshot: one node per controller ("dma@0", "dma@c0") and the page
 * registers in the first. */
static const char *const dma_nodes[2] = {"dma@0", "dma@c0"};

static void ctrl_save(const struct dma_ctrl *c, struct state_writer *w)
{
	uint16_t v[8];

	for (unsigned i = 0; i < 4; i++) {
		v[i] = c->addr[i];
		v[4 + i] = c->count[i];
	}
	for (unsigned i = 0; i < 8; i++)
		v[i] = (uint16_t)(v[i] << 8 | v[i] >> 8); /* big-endian, as cells */
	state_put_bytes(w, "address-count", v, sizeof(v));
	state_put_bytes(w, "mode", c->mode, sizeof(c->mode));
	state_put_u8(w, "command", c->command);
	state_put_u8(w, "request", c->request);
	state_put_u8(w, "mask", c->mask);
	state_put_u8(w, "flip-flop", c->flip);
}

void dma8237_save(struct dma8237 *d, struct state_writer *w)
{
	pthread_mutex_lock(&d->lock);
	for (unsigned i = 0; i < 2; i++) {
		state_begin(w, dma_nodes[i], DMA_STATE_VERSION);
		ctrl_save(&d->c[i], w);
		if (i == 0)
			state_put_bytes(w, "page", d->page, sizeof(d->page));
		state_end(w);
	}
	pthread_mutex_unlock(&d->lock);
}

static int ctrl_load(struct dma_ctrl *c, struct state_node *n)
{
	uint8_t v[16];

	if (state_get_bytes(n, "address-count", v, sizeof(v)) < 0 ||
	    state_get_bytes(n, "mode", c->mode, sizeof(c->mode)) < 0 ||
	    state_get_u8(n, "command", &c->command) < 0 ||
	    state_get_u8_max(n, "request", 0x0f, &c->request) < 0 ||
	    state_get_u8_max(n, "mask", 0x0f, &c->mask) < 0 || state_get_bool(n, "flip-flop", &c->flip) < 0)
		return -1;
	for (unsigned i = 0; i < 4; i++) {
		c->addr[i] = (uint16_t)(v[2 * i] << 8 | v[2 * i + 1]);
		c->count[i] = (uint16_t)(v[8 + 2 * i] << 8 | v[8 + 2 * i + 1]);
	}
	return 0;
}

int dma8237_load(struct dma8237 *d, const struct state_reader *r, char *err, size_t errlen)
{
	struct dma_ctrl c[2];
	uint8_t page[PAGE_LEN];
	struct state_node n;

	for (unsigned i = 0; i < 2; i++) {
		if (state_node_open(&n, r, dma_nodes[i], DMA_STATE_VERSION, err, errlen) < 0 ||
		    ctrl_load(&c[i], &n) < 0 ||
		    (i == 0 && state_get_bytes(&n, "page", page, sizeof(page)) < 0) ||
		    state_node_close(&n) < 0)
			return -1;
	}
	pthread_mutex_lock(&d->lock);
	memcpy(d->c, c, sizeof(c));
	memcpy(d->page, page, sizeof(page));
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void dma8237_free(struct dma8237 *d)
{
	if (!d)
		return;
	unregister_first(d, ARRAY_LEN(regions));
	pthread_mutex_destroy(&d->lock);
	free(d);
}
