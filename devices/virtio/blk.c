/* blk.c — virtio-blk (virtio spec 5.2) on the raw block backend.
 *
 * A request is a header (type, sector) in the readable part of a chain,
 * data, and a status byte: the last writable byte. Data moves straight
 * between the image and guest RAM: with aio=io_uring (block_aio.c) every
 * read, write and flush of a drained batch goes to the kernel in one
 * submission and completes in any order, one interrupt per batch of
 * completions; with aio=threads (or where io_uring is refused) the
 * transport's I/O thread serves them one by one with preadv/pwritev.
 * Discard, write-zeroes, get-id and -snapshot or unaligned O_DIRECT
 * requests are always served at once on the I/O thread, and so are qcow2
 * requests that allocate or touch compressed, zero or backing-file
 * clusters (those to allocated clusters go to io_uring as raw ones do). A request too
 * short to hold a header or a status byte cannot even be failed: the
 * device then needs a reset. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "backends/backends.h"
#include "devices/dev_host.h"
#include "devices/pci/pci.h"
#include "devices/virtio/virtio.h"
#include "state/state.h"

#define BLK_QUEUE_SIZE 256
#define BLK_SEG_MAX (BLK_QUEUE_SIZE - 2) /* header and status take two */
#define BLK_SIZE_MAX (1u << 20)
#define BLK_MAX_DISCARD_SEG 1
#define BLK_MAX_DISCARD_SECTORS (UINT32_MAX / BLOCK_SECTOR_SIZE)

struct virtio_blk {
	struct virtio_pci *vp;
	struct block_dev *disk;
	struct virtio_dev_ops ops;
	struct virtio_blk_config cfg;
	char serial[VIRTIO_BLK_ID_BYTES];
	char id[32];
	struct iovec iov[VIRTQ_MAX_CHAIN]; /* the I/O thread's scratch */
	struct block_aio *aio;		   /* NULL: served at once */
};

/* A request at the io_uring engine. */
struct blk_pending {
	unsigned qi;
	uint16_t head;
	uint32_t written; /* counting the status byte */
	uint8_t *status;
};

/* The chain's last writable byte (handle checked there is one). */
static uint8_t *status_byte(const struct virtq_chain *c)
{
	for (unsigned i = c->n_out + c->n_in; i-- > c->n_out;)
		if (c->buf[i].len)
			return c->buf[i].ptr + c->buf[i].len - 1;
	return NULL;
}

static struct blk_pending *pending_new(unsigned qi, const struct virtq_chain *c, uint32_t written)
{
	struct blk_pending *p = malloc(sizeof(*p));

	if (p)
		*p = (struct blk_pending){qi, c->head, written + 1, status_byte(c)};
	return p;
}

/* iov for bytes [off, off + len) of the chain's readable or writable
 * part: its entry count, or -1 when the chain is shorter. */
static int chain_iov(struct virtio_blk *vb, const struct virtq_chain *c, bool writable,
		     uint64_t off, uint64_t len)
{
	unsigned first = writable ? c->n_out : 0, end = first + (writable ? c->n_in : c->n_out);
	int n = 0;

	for (unsigned i = first; i < end && len; i++) {
		const struct virtq_buf *b = &c->buf[i];
		uint64_t take;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		take = b->len - off < len ? b->len - off : len;
		vb->iov[n++] = (struct iovec){b->ptr + off, (size_t)take};
		len -= take;
		off = 0;
	}
	return len ? -1 : n;
}

static uint8_t status_of(int r)
{
	return r == 0 ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
}

/* Hand a read/write to io_uring: whether it took it. */
static bool rw_async(struct virtio_blk *vb, unsigned qi, const struct virtq_chain *c, bool write,
		     uint64_t sector, int n, uint32_t len)
{
	struct blk_pending *p;

	if (!vb->aio || !(p = pending_new(qi, c, write ? 0 : len)))
		return false;
	if (block_aio_rw(vb->aio, write, sector, vb->iov, n, p) == 0)
		return true;
	free(p);
	return false;
}

/* IN/OUT: data between the header and the status byte; VIRTIO_REQ_PENDING
 * when io_uring has it. */
static int do_rw(struct virtio_blk *vb, unsigned qi, const struct virtq_chain *c, bool write,
		 uint64_t sector, uint32_t *written)
{
	uint64_t len = write ? c->out_len - sizeof(struct virtio_blk_outhdr) : c->in_len - 1;
	int n;

	if (write && block_read_only(vb->disk))
		return VIRTIO_BLK_S_IOERR;
	if (len % BLOCK_SECTOR_SIZE)
		return VIRTIO_BLK_S_IOERR;
	/* a write's data is readable by the device, a read's writable */
	n = chain_iov(vb, c, !write, write ? sizeof(struct virtio_blk_outhdr) : 0, len);
	if (n < 0)
		return VIRTIO_BLK_S_IOERR;
	if (rw_async(vb, qi, c, write, sector, n, (uint32_t)len))
		return -VIRTIO_REQ_PENDING;
	if (write)
		return status_of(block_writev(vb->disk, sector, vb->iov, n));
	if (block_readv(vb->disk, sector, vb->iov, n))
		return VIRTIO_BLK_S_IOERR;
	*written += (uint32_t)len;
	return VIRTIO_BLK_S_OK;
}

static void blk_done(void *opaque, void *cookie, int r);

/* DISCARD / WRITE_ZEROES: one range after the header. */
static uint8_t do_ranges(struct virtio_blk *vb, const struct virtq_chain *c, uint32_t type)
{
	struct virtio_blk_discard_write_zeroes r;
	uint64_t len = c->out_len - sizeof(struct virtio_blk_outhdr);
	uint32_t flags;
	uint64_t sector, count;
	int ret;

	if (len == 0 || len % sizeof(r) || len / sizeof(r) > BLK_MAX_DISCARD_SEG)
		return VIRTIO_BLK_S_IOERR;
	virtq_chain_read(c, sizeof(struct virtio_blk_outhdr), &r, sizeof(r));
	/* These go to the image at once, not through io_uring: a write still
	 * in flight that fills part of a new qcow2 cluster would copy its old
	 * contents over what this range does. Let the engine finish first
	 * (discards are rare; the guest waits for its batch anyway). */
	if (vb->aio)
		block_aio_wait_all(vb->aio, blk_done, vb);
	flags = le32toh(r.flags);
	sector = le64toh(r.sector);
	count = le32toh(r.num_sectors);
	if (type == VIRTIO_BLK_T_DISCARD) {
		if (flags)
			return VIRTIO_BLK_S_UNSUPP;
		ret = block_discard(vb->disk, sector, count);
	} else {
		if (flags & ~VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP)
			return VIRTIO_BLK_S_UNSUPP;
		ret = block_write_zeroes(vb->disk, sector, count,
					 flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
	}
	return status_of(ret);
}

/* FLUSH: after every write before it; VIRTIO_REQ_PENDING when io_uring
 * has it. */
static int do_flush(struct virtio_blk *vb, unsigned qi, const struct virtq_chain *c)
{
	struct blk_pending *p;
	int r;

	if (!vb->aio || !(p = pending_new(qi, c, 0)))
		return status_of(block_flush(vb->disk));
	r = block_aio_flush(vb->aio, p);
	if (r == 0)
		return -VIRTIO_REQ_PENDING;
	free(p);
	return status_of(r < 0 ? r : 0);
}

static uint8_t do_get_id(struct virtio_blk *vb, const struct virtq_chain *c, uint32_t *written)
{
	uint64_t room = c->in_len - 1;
	size_t n = room < VIRTIO_BLK_ID_BYTES ? (size_t)room : VIRTIO_BLK_ID_BYTES;

	*written += (uint32_t)virtq_chain_write(c, 0, vb->serial, n);
	return VIRTIO_BLK_S_OK;
}

static int blk_handle(void *opaque, unsigned qi, struct virtq_chain *c, uint32_t *written,
		      const char **why)
{
	struct virtio_blk *vb = opaque;
	struct virtio_blk_outhdr h;
	int status;
	uint32_t type;

	if (c->out_len < sizeof(h)) {
		*why = "virtio-blk request without a complete header";
		return -EINVAL;
	}
	if (c->in_len < 1) {
		*why = "virtio-blk request without a status byte";
		return -EINVAL;
	}
	virtq_chain_read(c, 0, &h, sizeof(h));
	type = le32toh(h.type);
	*written = 0;
	switch (type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		status = do_rw(vb, qi, c, type == VIRTIO_BLK_T_OUT, le64toh(h.sector), written);
		break;
	case VIRTIO_BLK_T_FLUSH:
		status = do_flush(vb, qi, c);
		break;
	case VIRTIO_BLK_T_GET_ID:
		status = do_get_id(vb, c, written);
		break;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		status = do_ranges(vb, c, type);
		break;
	default:
		status = VIRTIO_BLK_S_UNSUPP;
	}
	if (status == -VIRTIO_REQ_PENDING)
		return VIRTIO_REQ_PENDING;
	virtq_chain_write(c, c->in_len - 1, &(uint8_t){(uint8_t)status}, 1);
	*written += 1;
	return 0;
}

/* ------------------------------------------------------ io_uring engine */

static void blk_submit(void *opaque, unsigned qi)
{
	struct virtio_blk *vb = opaque;

	if (vb->aio)
		block_aio_submit(vb->aio);
}

static void blk_done(void *opaque, void *cookie, int r)
{
	struct virtio_blk *vb = opaque;
	struct blk_pending *p = cookie;

	*p->status = status_of(r);
	virtio_pci_complete(vb->vp, p->qi, p->head, p->written);
	free(p);
}

static void blk_ready(void *opaque)
{
	struct virtio_blk *vb = opaque;

	block_aio_reap(vb->aio, blk_done, vb);
}

static void blk_drop(void *opaque, void *cookie, int r)
{
	free(cookie);
}

/* Device reset: what the kernel still has finishes into the void. */
static void blk_reset(void *opaque)
{
	struct virtio_blk *vb = opaque;

	if (vb->aio)
		block_aio_wait_all(vb->aio, blk_drop, vb);
}

static void start_aio(struct virtio_blk *vb, enum block_aio_mode mode, unsigned nq)
{
	if (mode == BLOCK_AIO_THREADS)
		return;
	vb->aio = block_aio_new(vb->disk, BLK_QUEUE_SIZE * nq);
	if (vb->aio && virtio_pci_watch(vb->vp, block_aio_fd(vb->aio), blk_ready, vb) < 0) {
		block_aio_free(vb->aio);
		vb->aio = NULL;
	}
}

enum block_aio_mode virtio_blk_aio(const struct virtio_blk *vb)
{
	return vb->aio ? BLOCK_AIO_IO_URING : BLOCK_AIO_THREADS;
}

static void fill_config(struct virtio_blk *vb, unsigned num_queues)
{
	struct virtio_blk_config *k = &vb->cfg;

	k->capacity = htole64(block_sectors(vb->disk));
	k->size_max = htole32(BLK_SIZE_MAX);
	k->seg_max = htole32(BLK_SEG_MAX);
	k->blk_size = htole32(BLOCK_SECTOR_SIZE);
	k->num_queues = htole16((uint16_t)num_queues);
	k->max_discard_sectors = htole32(BLK_MAX_DISCARD_SECTORS);
	k->max_discard_seg = htole32(BLK_MAX_DISCARD_SEG);
	k->discard_sector_alignment = htole32(1);
	k->max_write_zeroes_sectors = htole32(BLK_MAX_DISCARD_SECTORS);
	k->max_write_zeroes_seg = htole32(BLK_MAX_DISCARD_SEG);
	k->write_zeroes_may_unmap = 1;
}

static uint64_t blk_features(const struct virtio_blk *vb, unsigned num_queues)
{
	uint64_t f = 1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |
		     1ull << VIRTIO_BLK_F_BLK_SIZE | 1ull << VIRTIO_BLK_F_FLUSH;

	if (num_queues > 1)
		f |= 1ull << VIRTIO_BLK_F_MQ;
	if (block_read_only(vb->disk))
		f |= 1ull << VIRTIO_BLK_F_RO;
	else
		f |= 1ull << VIRTIO_BLK_F_DISCARD | 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	return f;
}

/* Snapshots: the capacity the guest saw, which the image given to the
 * new process must still have (the rest of the config is the options). */
static void blk_save(void *opaque, struct state_writer *w)
{
	struct virtio_blk *vb = opaque;

	state_put_u64(w, "capacity", le64toh(vb->cfg.capacity));
}

static int blk_load(void *opaque, struct state_node *n)
{
	struct virtio_blk *vb = opaque;
	uint64_t cap;

	if (state_get_u64(n, "capacity", &cap) < 0)
		return -1;
	if (cap != le64toh(vb->cfg.capacity))
		return state_node_fail(n, "capacity %llu sectors differs from the image's %llu",
				       (unsigned long long)cap,
				       (unsigned long long)le64toh(vb->cfg.capacity));
	return 0;
}

struct virtio_blk *virtio_blk_new(struct dev_host *host, struct pci_bus *bus,
				  const struct virtio_blk_opts *o, char *err, size_t errlen)
{
	unsigned nq = o->num_queues ? o->num_queues : 1;
	struct virtio_blk *vb;

	if (nq > VIRTIO_MAX_QUEUES) {
		snprintf(err, errlen, "virtio-blk: num-queues=%u (1 to %d)", nq, VIRTIO_MAX_QUEUES);
		return NULL;
	}
	vb = calloc(1, sizeof(*vb));
	if (!vb) {
		snprintf(err, errlen, "virtio-blk: out of memory");
		return NULL;
	}
	vb->disk = o->disk;
	if (o->serial) /* 20 bytes, NUL-padded, unterminated when full (spec 5.2.6) */
		memcpy(vb->serial, o->serial, strnlen(o->serial, sizeof(vb->serial)));
	snprintf(vb->id, sizeof(vb->id), "%s", o->id ? o->id : "virtio0");
	fill_config(vb, nq);
	vb->ops = (struct virtio_dev_ops){
		.device_id = VIRTIO_ID_BLOCK,
		.class_code = 0x010000, /* mass storage, SCSI: as QEMU */
		.features = blk_features(vb, nq),
		.num_queues = nq,
		.queue_size = BLK_QUEUE_SIZE,
		.config_len = sizeof(vb->cfg),
		.handle = blk_handle,
		.submit = blk_submit,
		.reset = blk_reset,
		.save = blk_save,
		.load = blk_load,
	};
	vb->vp = virtio_pci_new(host, bus, o->devfn, "virtio-blk-pci", &vb->ops, vb, &vb->cfg, err,
				errlen);
	if (!vb->vp) {
		free(vb);
		return NULL;
	}
	start_aio(vb, o->aio, nq);
	return vb;
}

void virtio_blk_free(struct virtio_blk *vb)
{
	if (!vb)
		return;
	virtio_pci_free(vb->vp);
	if (vb->aio)
		block_aio_wait_all(vb->aio, blk_drop, vb);
	block_aio_free(vb->aio);
	free(vb);
}

struct virtio_pci *virtio_blk_transport(struct virtio_blk *vb)
{
	return vb->vp;
}
