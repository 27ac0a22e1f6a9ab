/* ide_state.c — snapshots of the PIIX3 IDE controller (see ide.h). */
#include <stdio.h>
#include <string.h>

#include "devices/storage/atapi.h"
#include "devices/storage/ide_internal.h"
#include "state/state.h"

#define IDE_STATE_VERSION 1

/* The task file and latches, in the order they are saved. */
/* clang-format off */
#define TF_REGS(X)                                                                             \
	X(feature) X(nsector) X(sector) X(lcyl) X(hcyl) X(hob_feature) X(hob_nsector)          \
	X(hob_sector) X(hob_lcyl) X(hob_hcyl) X(select) X(status) X(error) X(control) X(bm_cmd) \
	X(bm_status)
/* clang-format on */

static void channel_node(const struct ide_channel *ch, char *buf, size_t len)
{
	snprintf(buf, len, "ide-channel@%x", ch->cmd_base);
}

static void channel_save(struct ide_channel *ch, struct state_writer *w)
{
	char node[32];

	channel_node(ch, node, sizeof(node));
	pthread_mutex_lock(&ch->lock);
	state_begin(w, node, IDE_STATE_VERSION);
#define PUT(r) state_put_u8(w, #r, ch->r);
	TF_REGS(PUT)
#undef PUT
	state_put_u8(w, "unit", (uint8_t)ch->unit);
	state_put_u8(w, "intrq", ch->intrq);
	state_put_u8(w, "xfer", (uint8_t)ch->xfer);
	state_put_bytes(w, "buf", ch->buf, sizeof(ch->buf));
	state_put_u32(w, "pos", ch->pos);
	state_put_u32(w, "end", ch->end);
	state_put_u64(w, "lba", ch->lba);
	state_put_u32(w, "remaining", ch->remaining);
	state_put_u32(w, "block", ch->block);
	state_put_bytes(w, "packet", ch->packet, sizeof(ch->packet));
	state_put_u32(w, "atapi-left", ch->atapi_left);
	state_put_u32(w, "drq-left", ch->drq_left);
	state_put_u32(w, "byte-limit", ch->byte_limit);
	state_put_u8(w, "sig-pending", ch->sig_pending);
	state_put_u8(w, "identify-pio", ch->identify_pio);
	state_put_u8(w, "dma-pending", ch->dma_pending);
	state_put_u8(w, "dma-to-mem", ch->dma_to_mem);
	state_put_u8(w, "dma-unit", (uint8_t)ch->dma_unit);
	state_put_u32(w, "prd-address", ch->prd_addr);
	state_put_u8(w, "mult0", (uint8_t)ch->drive[0].mult);
	state_put_u8(w, "mult1", (uint8_t)ch->drive[1].mult);
	/* the master's ATAPI state in the channel's node, the slave's below */
	if (ch->drive[0].atapi)
		atapi_save(ch->drive[0].atapi, w);
	if (ch->drive[1].atapi) {
		state_begin(w, "slave", IDE_STATE_VERSION);
		atapi_save(ch->drive[1].atapi, w);
		state_end(w);
	}
	state_end(w);
	pthread_mutex_unlock(&ch->lock);
}

void ide_save(struct ide *ide, struct state_writer *w)
{
	state_begin(w, "ide@1,1", IDE_STATE_VERSION);
	pci_dev_save(&ide->pci, w);
	state_end(w);
	for (unsigned i = 0; i < 2; i++)
		channel_save(&ide->ch[i], w);
}

/* Everything a channel holds, checked before any of it is used. */
struct channel_regs {
#define DECL(r) uint8_t r;
	TF_REGS(DECL)
#undef DECL
	uint8_t unit, xfer, dma_unit, mult[2];
	bool intrq, sig_pending, identify_pio, dma_pending, dma_to_mem;
	uint8_t buf[MAX_MULT * SECTOR];
	uint8_t packet[12];
	uint32_t pos, end, remaining, block, atapi_left, drq_left, byte_limit, prd_addr;
	uint64_t lba;
};

static int channel_read(struct state_node *n, struct channel_regs *v)
{
#define GET(r) state_get_u8(n, #r, &v->r) < 0 ||
	if (TF_REGS(GET) state_get_u8_max(n, "unit", 1, &v->unit) < 0 ||
	    state_get_bool(n, "intrq", &v->intrq) < 0 ||
	    state_get_u8_max(n, "xfer", XFER_PACKET, &v->xfer) < 0 ||
	    state_get_bytes(n, "buf", v->buf, sizeof(v->buf)) < 0 ||
	    state_get_u32_max(n, "pos", sizeof(v->buf), &v->pos) < 0 ||
	    state_get_u32_max(n, "end", sizeof(v->buf), &v->end) < 0 ||
	    state_get_u64(n, "lba", &v->lba) < 0 ||
	    state_get_u32(n, "remaining", &v->remaining) < 0 ||
	    state_get_u32_max(n, "block", MAX_MULT, &v->block) < 0 ||
	    state_get_bytes(n, "packet", v->packet, sizeof(v->packet)) < 0 ||
	    state_get_u32(n, "atapi-left", &v->atapi_left) < 0 ||
	    state_get_u32(n, "drq-left", &v->drq_left) < 0 ||
	    state_get_u32(n, "byte-limit", &v->byte_limit) < 0 ||
	    state_get_bool(n, "sig-pending", &v->sig_pending) < 0 ||
	    state_get_bool(n, "identify-pio", &v->identify_pio) < 0 ||
	    state_get_bool(n, "dma-pending", &v->dma_pending) < 0 ||
	    state_get_bool(n, "dma-to-mem", &v->dma_to_mem) < 0 ||
	    state_get_u8_max(n, "dma-unit", 1, &v->dma_unit) < 0 ||
	    state_get_u32(n, "prd-address", &v->prd_addr) < 0 ||
	    state_get_u8_max(n, "mult0", MAX_MULT, &v->mult[0]) < 0 ||
	    state_get_u8_max(n, "mult1", MAX_MULT, &v->mult[1]) < 0)
		return -1;
#undef GET
	if (v->pos > v->end)
		return state_node_fail(n, "pos %u is past end %u", v->pos, v->end);
	if (v->xfer == XFER_NONE && v->pos != v->end)
		return state_node_fail(n, "%u bytes buffered with no transfer", v->end - v->pos);
	return 0;
}

static void channel_apply(struct ide_channel *ch, const struct channel_regs *v)
{
#define SET(r) ch->r = v->r;
	TF_REGS(SET)
#undef SET
	ch->unit = v->unit;
	ch->intrq = v->intrq;
	ch->xfer = (enum xfer)v->xfer;
	memcpy(ch->buf, v->buf, sizeof(ch->buf));
	memcpy(ch->packet, v->packet, sizeof(ch->packet));
	ch->pos = v->pos;
	ch->end = v->end;
	ch->lba = v->lba;
	ch->remaining = v->remaining;
	ch->block = v->block;
	ch->atapi_left = v->atapi_left;
	ch->drq_left = v->drq_left;
	ch->byte_limit = v->byte_limit;
	ch->sig_pending = v->sig_pending;
	ch->identify_pio = v->identify_pio;
	ch->dma_pending = v->dma_pending;
	ch->dma_to_mem = v->dma_to_mem;
	ch->dma_unit = v->dma_unit;
	ch->prd_addr = v->prd_addr;
	for (unsigned i = 0; i < 2; i++)
		ch->drive[i].mult = v->mult[i];
}

static int channel_load(struct ide_channel *ch, const struct state_reader *r, char *err,
			size_t errlen)
{
	static struct channel_regs v; /* 8 KiB of buffer: not on a vCPU-sized stack */
	struct state_node n, slave;
	char node[32], path[48];

	channel_node(ch, node, sizeof(node));
	memset(&v, 0, sizeof(v));
	if (state_node_open(&n, r, node, IDE_STATE_VERSION, err, errlen) < 0 ||
	    channel_read(&n, &v) < 0)
		return -1;
	if ((v.xfer != XFER_NONE || v.dma_pending) &&
	    !ch->drive[v.dma_pending ? v.dma_unit : v.unit].present)
		return state_node_fail(&n, "a transfer to drive %u, which is absent",
				       v.dma_pending ? v.dma_unit : v.unit);
	if (ch->drive[0].atapi && atapi_load(ch->drive[0].atapi, &n) < 0)
		return -1;
	if (state_node_close(&n) < 0)
		return -1;
	if (ch->drive[1].atapi) {
		snprintf(path, sizeof(path), "%s/slave", node);
		if (state_node_open(&slave, r, path, IDE_STATE_VERSION, err, errlen) < 0 ||
		    atapi_load(ch->drive[1].atapi, &slave) < 0 || state_node_close(&slave) < 0)
			return -1;
	}
	pthread_mutex_lock(&ch->lock);
	channel_apply(ch, &v);
	ide_update_line(ch);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

int ide_load(struct ide *ide, const struct state_reader *r, char *err, size_t errlen)
{
	struct state_node n;

	if (state_node_open(&n, r, "ide@1,1", IDE_STATE_VERSION, err, errlen) < 0 ||
	    pci_dev_load(&ide->pci, &n) < 0 || state_node_close(&n) < 0)
		return -1;
	for (unsigned i = 0; i < 2; i++)
		if (channel_load(&ide->ch[i], r, err, errlen) < 0)
			return -1;
	return 0;
}
