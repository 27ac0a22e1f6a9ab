/* block_aio.c — asynchronous block requests on io_uring (aio=io_uring).
 *
 * One ring per owner (a virtio-blk device's I/O thread). Requests are
 * prepared as SQEs while the owner drains a queue and go to the kernel
 * in one io_uring_enter per batch; the kernel signals an eventfd when
 * completions wait, so the owner's epoll loop needs nothing else.
 *
 * A flush is IORING_OP_FSYNC with IORING_FSYNC_DATASYNC (= fdatasync)
 * marked IOSQE_IO_DRAIN: io_uring starts it only after every SQE queued
 * before it has completed, so it covers every write the guest issued
 * first, and the requests after it wait for it. A short read or write
 * (the kernel may stop early) is resubmitted for the rest, and one the
 * kernel answers -EAGAIN or -EINTR (nothing done, try again: as QEMU's
 * io_uring engine) is resubmitted whole; a read that meets the end of
 * the file (the image shrank under us) fails, never completes short.
 *
 * A qcow2 image's requests come here when every cluster they touch is
 * allocated and needs no metadata change, or needs a new one (to write,
 * block_direct_target maps them under the image's lock, allocating
 * those); a request whose clusters lie apart in the file goes as one
 * piece per run and completes with its last piece, after which
 * block_direct_done names the clusters it allocated. A write filling new
 * clusters only in part first reads what the rest of them must hold
 * (copy-on-write from the backing file) into a buffer, then writes that
 * and its own bytes as one: the data is all in the file before the L2
 * entries name it. A write to clusters that a request in flight is
 * allocating waits in a queue here until one completes, then is mapped
 * again (then they are allocated: it writes in place). A read goes in
 * pieces to the image and its backing files, its runs of zeroes filled
 * when it is queued; a piece of a compressed cluster reads its
 * compressed bytes into a buffer of its own and decodes them into the
 * request's when they are in. Freed
 * clusters are not reused while a mapped request is in flight; a flush
 * writes the metadata out before its
 * fdatasync is queued behind the data writes, and again (if any changed:
 * requests that allocated completed before it) before it completes. */
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backends/backends.h"
#include "backends/block/block_decode.h"

struct block_aio {
	struct io_uring ring;
	struct block_dev *disk;
	int efd;
	unsigned in_flight;			/* pieces queued or at the kernel */
	int (*res_hook)(void *opaque, int res); /* tests: alter a CQE's res */
	void *hook_opaque;
	struct aio_wait *waiting; /* writes waiting for an allocation, in order */
	unsigned nwaiting;
	struct block_decoder *decoder; /* compressed pieces, in flight till decoded */
};

struct aio_wait {
	struct aio_wait *next;
	void *cookie;
	bool write;
	uint64_t sector;
	int iovcnt;
	struct iovec iov[];
};

/* A request the image's layout cut into pieces (a qcow2's clusters
 * apart in the file): it completes with its last piece, failed if any
 * piece failed. */
struct aio_whole {
	void *cookie;
	unsigned pieces;
	int res;
	bool copying;	    /* its copy-on-write reads are in flight, its write next */
	struct iovec *wiov; /* a copy-on-write's write: head, the request, tail */
	int wiovcnt;
	struct block_target t; /* what block_direct_done needs */
};

struct aio_req {
	void *cookie;
	struct aio_whole *whole; /* NULL: the request is one piece */
	int fd;
	bool write, flush;
	bool zero_past_eof; /* a read meeting the file's end: zeroes (qcow2) */
	uint64_t off;
	size_t left;	     /* bytes still to transfer */
	struct aio_zread *z; /* NULL: the transfer is the request's own bytes */
	int iovcnt;
	struct iovec iov[];
};

/* A piece that is part of a compressed qcow2 cluster: its compressed
 * bytes are read into raw (the whole blocks around them, as O_DIRECT
 * wants), then decoded into the request's buffers, dst. */
struct aio_zread {
	struct block_decode_job job; /* first: the job is the zread */
	struct aio_req *req;
	uint8_t *raw;
	struct iovec dst[];
};

#define ZREAD_ALIGN 4096u

static void piece_free(struct aio_req *q)
{
	if (q && q->z) {
		free(q->z->raw);
		free(q->z);
	}
	free(q);
}

/* q, which holds its part of the request's buffers, made to read the
 * compressed bytes of run (at off in its file) for decoding into them. */
static bool to_zread(struct aio_req *q, const struct block_zrun *run, uint64_t off)
{
	uint64_t start = off & ~(uint64_t)(ZREAD_ALIGN - 1);
	size_t span =
		(size_t)(((off + run->zlen + ZREAD_ALIGN - 1) & ~(uint64_t)(ZREAD_ALIGN - 1)) -
			 start);
	struct aio_zread *z = malloc(sizeof(*z) + (size_t)q->iovcnt * sizeof(z->dst[0]));

	if (!z || !(z->raw = aligned_alloc(ZREAD_ALIGN, span))) {
		free(z);
		return false;
	}
	z->job = (struct block_decode_job){
		.run = *run, .in = z->raw + (off - start), .dst = z->dst, .ndst = q->iovcnt};
	z->req = q;
	memcpy(z->dst, q->iov, (size_t)q->iovcnt * sizeof(q->iov[0]));
	q->z = z;
	q->iov[0] = (struct iovec){z->raw, span};
	q->iovcnt = 1;
	q->off = start;
	q->left = span;
	q->zero_past_eof = true; /* a cluster's last sectors may pass the end */
	return true;
}

const char *block_aio_mode_name(enum block_aio_mode m)
{
	return m == BLOCK_AIO_THREADS ? "threads" : "io_uring";
}

struct block_aio *block_aio_new(struct block_dev *b, unsigned depth)
{
	static bool said;
	struct block_aio *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return NULL;
	a->disk = b;
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->decoder = a->efd < 0 ? NULL : block_decoder_new(a->efd);
	r = a->efd < 0 ? -errno : io_uring_queue_init(depth ? depth : 1, &a->ring, 0);
	if (r == 0 && io_uring_register_eventfd(&a->ring, a->efd) < 0) {
		io_uring_queue_exit(&a->ring);
		r = -EINVAL;
	}
	if (r < 0) {
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			fprintf(stderr, "vmm: io_uring unavailable (%s): using aio=threads\n",
				strerror(-r));
		if (a->efd >= 0)
			close(a->efd);
		block_decoder_free(a->decoder);
		free(a);
		return NULL;
	}
	return a;
}

int block_aio_fd(const struct block_aio *a)
{
	return a->efd;
}

unsigned block_aio_in_flight(const struct block_aio *a)
{
	return a->in_flight + a->nwaiting;
}

/* An SQE, handing the queued ones to the kernel first when the ring is
 * full (it never stays full: in flight is bounded by the ring's size). */
static struct io_uring_sqe *get_sqe(struct block_aio *a)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&a->ring);

	if (!sqe) {
		io_uring_submit(&a->ring);
		sqe = io_uring_get_sqe(&a->ring);
	}
	return sqe;
}

static int queue_req(struct block_aio *a, struct aio_req *q)
{
	struct io_uring_sqe *sqe = get_sqe(a);

	if (!sqe)
		return -EBUSY;
	if (q->flush) {
		io_uring_prep_fsync(sqe, q->fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_DRAIN;
	} else if (q->write) {
		io_uring_prep_writev(sqe, q->fd, q->iov, (unsigned)q->iovcnt, q->off);
	} else {
		io_uring_prep_readv(sqe, q->fd, q->iov, (unsigned)q->iovcnt, q->off);
	}
	io_uring_sqe_set_data(sqe, q);
	return 0;
}

/* iov, from skip bytes into its first entry, for want bytes: into q's
 * iov (q NULL: zeroed instead). Where it ends, for the next part. */
static const struct iovec *take_iov(const struct iovec *iov, size_t *skip, size_t want,
				    struct aio_req *q)
{
	while (want) {
		size_t take = iov->iov_len - *skip < want ? iov->iov_len - *skip : want;
		uint8_t *at = (uint8_t *)iov->iov_base + *skip;

		if (q)
			q->iov[q->iovcnt++] = (struct iovec){at, take};
		else
			memset(at, 0, take);
		want -= take;
		*skip += take;
		if (*skip == iov->iov_len) {
			iov++;
			*skip = 0;
		}
	}
	return iov;
}

/* The pieces of a request: t's runs, each with its part of iov, but
 * the runs of zeroes (a read's), which are filled here. How many
 * pieces, or -1. */
static int cut(const struct block_target *t, const struct iovec *iov, int iovcnt, bool write,
	       void *cookie, struct aio_whole *whole, struct aio_req **pieces)
{
	size_t skip = 0;
	int n = 0;

	for (int i = 0; i < t->runs; i++) {
		struct aio_req *q = NULL;

		if (t->fd[i] >= 0) {
			q = malloc(sizeof(*q) + (size_t)iovcnt * sizeof(q->iov[0]));
			if (!q)
				return -1;
			pieces[n++] = q;
			*q = (struct aio_req){.cookie = cookie,
					      .whole = whole,
					      .fd = t->fd[i],
					      .write = write,
					      .zero_past_eof = t->zero_past_eof,
					      .off = t->off[i],
					      .left = t->len[i]};
		}
		iov = take_iov(iov, &skip, t->len[i], q);
		if (q && t->z[i].image && !to_zread(q, &t->z[i], t->off[i]))
			return -1;
	}
	return n;
}

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	return len;
}

/* t's runs over iov queued as pieces of w (NULL: one piece alone): 0,
 * or -1 with none queued. A ring refusing the later ones fails w after
 * the pieces queued. */
static int queue_runs(struct block_aio *a, struct aio_whole *w, const struct block_target *t,
		      const struct iovec *iov, int iovcnt, bool write, void *cookie)
{
	struct aio_req *pieces[BLOCK_TARGET_RUNS] = {0};
	int queued = 0, n = cut(t, iov, iovcnt, write, cookie, w, pieces);

	while (queued < n && queue_req(a, pieces[queued]) == 0)
		queued++;
	for (int i = queued; i < BLOCK_TARGET_RUNS; i++)
		piece_free(pieces[i]);
	if (!queued)
		return -1;
	if (w) {
		w->res = queued < n ? -EBUSY : w->res;
		w->pieces = (unsigned)queued;
	}
	a->in_flight += (unsigned)queued;
	return 0;
}

/* A copy-on-write's reads into its buffer: 0, or -1 with none queued. */
static int queue_cow_reads(struct block_aio *a, struct aio_whole *w)
{
	const struct block_cow *c = &w->t.cow;
	int queued = 0;

	for (int i = 0; i < c->nreads; i++) {
		const struct block_cow_read *rd = &c->read[i];
		struct aio_req *q = malloc(sizeof(*q) + sizeof(q->iov[0]));

		if (!q)
			break;
		*q = (struct aio_req){.cookie = w->cookie,
				      .whole = w,
				      .fd = rd->fd,
				      .zero_past_eof = rd->zero_past_eof,
				      .off = rd->off,
				      .left = rd->len,
				      .iovcnt = 1};
		q->iov[0] = (struct iovec){c->buf + rd->at, rd->len};
		if (queue_req(a, q) < 0) {
			free(q);
			break;
		}
		queued++;
	}
	if (!queued)
		return -1;
	w->res = queued < c->nreads ? -EBUSY : 0;
	w->pieces = (unsigned)queued;
	w->copying = true;
	a->in_flight += (unsigned)queued;
	return 0;
}

/* A copy-on-write's write: its head, iov, its tail. */
static struct iovec *with_cow(const struct block_cow *c, const struct iovec *iov, int iovcnt,
			      int *n)
{
	struct iovec *v = malloc((size_t)(iovcnt + 2) * sizeof(*v));
	int k = 0;

	if (!v)
		return NULL;
	if (c->head)
		v[k++] = (struct iovec){c->buf, c->head};
	memcpy(v + k, iov, (size_t)iovcnt * sizeof(*v));
	k += iovcnt;
	if (c->tail)
		v[k++] = (struct iovec){c->buf + c->tail_at, c->tail};
	*n = k;
	return v;
}

/* The request is over (res): the image told, what it held freed. */
static int target_done(struct block_aio *a, struct block_target *t, int res)
{
	res = block_direct_done(a->disk, t, res);
	free(t->cow.buf);
	t->cow.buf = NULL;
	return res;
}

static void whole_free(struct aio_whole *w)
{
	if (w)
		free(w->wiov);
	free(w);
}

/* A request block_direct_target mapped to t, queued: 0, or -1 (t done
 * with -EIO: the caller serves it at once). */
static int issue(struct block_aio *a, struct block_target *t, bool write,
		 const struct iovec *iov, int iovcnt, void *cookie)
{
	struct aio_whole *w = NULL;
	int r = -1;

	/* a single piece of a single run needs no whole, but for its target */
	if (t->runs > 1 || t->alloc || t->cow.buf) {
		w = malloc(sizeof(*w));
		if (!w)
			goto fail;
		*w = (struct aio_whole){.cookie = cookie, .t = *t};
		if (t->cow.buf && !(w->wiov = with_cow(&t->cow, iov, iovcnt, &w->wiovcnt)))
			goto fail;
	}
	if (w && t->cow.nreads)
		r = queue_cow_reads(a, w);
	else if (w && w->wiov)
		r = queue_runs(a, w, t, w->wiov, w->wiovcnt, write, cookie);
	else
		r = queue_runs(a, w, t, iov, iovcnt, write, cookie);
	if (r < 0)
		goto fail;
	block_account(a->disk, write, iov_bytes(iov, iovcnt));
	return 0;
fail:
	whole_free(w);
	target_done(a, t, -EIO);
	return -1;
}

/* A write that must wait for an allocation in flight: kept (iov copied)
 * until one completes. */
static int wait_for_alloc(struct block_aio *a, bool write, uint64_t sector,
			  const struct iovec *iov, int iovcnt, void *cookie)
{
	struct aio_wait *d = malloc(sizeof(*d) + (size_t)iovcnt * sizeof(d->iov[0])), **p;

	if (!d)
		return -1;
	*d = (struct aio_wait){NULL, cookie, write, sector, iovcnt};
	memcpy(d->iov, iov, (size_t)iovcnt * sizeof(d->iov[0]));
	for (p = &a->waiting; *p; p = &(*p)->next)
		;
	*p = d;
	a->nwaiting++;
	return 0;
}

int block_aio_rw(struct block_aio *a, bool write, uint64_t sector, const struct iovec *iov,
		 int iovcnt, void *cookie)
{
	struct block_target t;
	int r;

	if (iovcnt <= 0)
		return -1;
	r = block_direct_target(a->disk, write, sector, iov, iovcnt, &t);
	if (r == -EAGAIN)
		return wait_for_alloc(a, write, sector, iov, iovcnt, cookie);
	return r < 0 ? -1 : issue(a, &t, write, iov, iovcnt, cookie);
}

/* The waiting writes mapped again: issued, served at once (refused, or
 * with nothing in flight left to wait for: force), or still waiting.
 * How many completed. */
static unsigned retry_waiting(struct block_aio *a, bool force,
			      void (*done)(void *opaque, void *cookie, int r), void *opaque)
{
	struct aio_wait **p = &a->waiting;
	unsigned n = 0;

	while (*p) {
		struct aio_wait *d = *p;
		struct block_target t;
		int r = block_direct_target(a->disk, d->write, d->sector, d->iov, d->iovcnt, &t);

		if (r == -EAGAIN && !force) {
			p = &d->next;
			continue;
		}
		if (r < 0 || issue(a, &t, d->write, d->iov, d->iovcnt, d->cookie) < 0) {
			r = d->write ? block_writev(a->disk, d->sector, d->iov, d->iovcnt)
				     : block_readv(a->disk, d->sector, d->iov, d->iovcnt);
			done(opaque, d->cookie, r);
			n++;
		}
		*p = d->next;
		a->nwaiting--;
		free(d);
	}
	return n;
}

int block_aio_flush(struct block_aio *a, void *cookie)
{
	int fd = block_flush_fd(a->disk);
	struct aio_req *q;

	if (fd < 0)
		return fd == -1 ? 1 : fd;
	q = malloc(sizeof(*q));
	if (!q)
		return fdatasync(fd) < 0 ? -errno : 1;
	*q = (struct aio_req){.cookie = cookie, .fd = fd, .flush = true};
	if (queue_req(a, q) < 0) {
		free(q);
		return fdatasync(fd) < 0 ? -errno : 1;
	}
	a->in_flight++;
	return 0;
}

void block_aio_submit(struct block_aio *a)
{
	if (io_uring_sq_ready(&a->ring))
		io_uring_submit(&a->ring);
}

/* Past n bytes of q's iov: the rest of a short transfer. */
static void advance(struct aio_req *q, size_t n)
{
	int i = 0;

	while (i < q->iovcnt && n >= q->iov[i].iov_len)
		n -= q->iov[i++].iov_len;
	memmove(q->iov, q->iov + i, (size_t)(q->iovcnt - i) * sizeof(q->iov[0]));
	q->iovcnt -= i;
	if (q->iovcnt) {
		q->iov[0].iov_base = (uint8_t *)q->iov[0].iov_base + n;
		q->iov[0].iov_len -= n;
	}
}

/* One CQE: finished (its result), or resubmitted (1). */
static int finish(struct block_aio *a, struct aio_req *q, int res)
{
	if (res == -EAGAIN || res == -EINTR)
		return queue_req(a, q) < 0 ? res : 1;
	if (q->flush || res < 0)
		return res < 0 ? res : 0;
	if (res == 0 && !q->write && q->zero_past_eof) {
		for (int i = 0; i < q->iovcnt; i++)
			memset(q->iov[i].iov_base, 0, q->iov[i].iov_len);
		return 0;
	}
	if (res == 0)
		return -EIO; /* end of file inside the disk: it shrank */
	if ((size_t)res >= q->left)
		return 0;
	q->left -= (size_t)res;
	q->off += (uint64_t)res;
	advance(q, (size_t)res);
	return queue_req(a, q) < 0 ? -EIO : 1;
}

/* Piece q of a request is over (r): the request's end with its last
 * piece (or, for a copy-on-write, its write next). 1 when a request
 * completed, else 0. */
static unsigned piece_done(struct block_aio *a, struct aio_req *q, int r,
			   void (*done)(void *opaque, void *cookie, int r), void *opaque)
{
	struct aio_whole *w = q->whole;

	a->in_flight--;
	if (w) { /* a piece: the request ends with its last */
		w->res = w->res ? w->res : r;
		piece_free(q);
		if (--w->pieces)
			return 0;
		if (w->copying && !w->res) { /* the copy is in: now the write */
			w->copying = false;
			if (queue_runs(a, w, &w->t, w->wiov, w->wiovcnt, true, w->cookie) == 0)
				return 0;
			w->res = -EIO;
		}
		r = target_done(a, &w->t, w->res);
		q = NULL;
	} else if (!q->flush) {
		r = block_direct_done(a->disk, NULL, r);
	} else {
		r = block_flush_fd_done(a->disk, r);
	}
	if (r < 0 && !(q && q->flush))
		block_account_failed(a->disk);
	done(opaque, w ? w->cookie : q->cookie, r);
	whole_free(w);
	piece_free(q);
	return 1;
}

/* A compressed piece whose bytes are in: to a decode thread, or decoded
 * here when none runs. Whether it is over (r set). */
static bool decode_piece(struct block_aio *a, struct aio_req *q, int *r)
{
	struct block_decode_job *j = &q->z->job;

	if (a->decoder && block_decoder_push(a->decoder, j))
		return false;
	*r = block_decode_job_run(j);
	return true;
}

unsigned block_aio_reap(struct block_aio *a, void (*done)(void *opaque, void *cookie, int r),
			void *opaque)
{
	struct block_decode_job *j;
	struct io_uring_cqe *cqe;
	unsigned n = 0;
	uint64_t v;

	/* the eventfd first: what completes after this read writes it again */
	if (read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return 0;
	j = a->decoder ? block_decoder_take_done(a->decoder) : NULL;
	while (j) { /* decoded: the job is the first member of its zread */
		struct block_decode_job *next = j->next;

		n += piece_done(a, ((struct aio_zread *)j)->req, j->res, done, opaque);
		j = next;
	}
	while (io_uring_peek_cqe(&a->ring, &cqe) == 0) {
		struct aio_req *q = io_uring_cqe_get_data(cqe);
		int res = a->res_hook ? a->res_hook(a->hook_opaque, cqe->res) : cqe->res;
		int r = finish(a, q, res);

		io_uring_cqe_seen(&a->ring, cqe);
		if (r == 1 || (r == 0 && q->z && !decode_piece(a, q, &r)))
			continue; /* resubmitted, or being decoded */
		n += piece_done(a, q, r, done, opaque);
	}
	if (a->waiting && n)
		n += retry_waiting(a, false, done, opaque);
	block_aio_submit(a); /* what was resubmitted, or issued after waiting */
	return n;
}

void block_aio_wait_all(struct block_aio *a, void (*done)(void *opaque, void *cookie, int r),
			void *opaque)
{
	block_aio_submit(a);
	while (a->in_flight || a->waiting) {
		if (!a->in_flight) { /* nothing left here to wait for */
			retry_waiting(a, true, done, opaque);
			block_aio_submit(a);
			continue;
		}
		/* the eventfd: completions from the kernel and the decoders */
		if (poll(&(struct pollfd){a->efd, POLLIN, 0}, 1, -1) < 0 && errno != EINTR)
			break;
		block_aio_reap(a, done, opaque);
	}
}

void block_aio_set_res_hook(struct block_aio *a, int (*hook)(void *opaque, int res), void *opaque)
{
	a->res_hook = hook;
	a->hook_opaque = opaque;
}

static void drop(void *opaque, void *cookie, int r)
{
}

void block_aio_free(struct block_aio *a)
{
	if (!a)
		return;
	block_aio_wait_all(a, drop, NULL);
	block_decoder_free(a->decoder);
	io_uring_queue_exit(&a->ring);
	close(a->efd);
	free(a);
}
