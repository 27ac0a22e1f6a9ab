/* block_decode.h — a few threads that decode the compressed qcow2
 * pieces of an io_uring engine (block_aio.c) off its I/O thread, as
 * QEMU decompresses in its thread pool: inflating a 64 KiB cluster takes
 * longer than reading it, and the I/O thread has other requests to
 * serve meanwhile. Internal to backends/block. */
#ifndef VMM_BACKENDS_BLOCK_DECODE_H
#define VMM_BACKENDS_BLOCK_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backends/backends.h"

struct block_decode_job {
	struct block_decode_job *next;
	struct block_zrun run;
	const uint8_t *in; /* the compressed bytes */
	const struct iovec *dst;
	int ndst;
	int res; /* block_decode_job_run's, once done */
};

/* The job's compressed bytes decoded into dst, here and now: 0 or -EIO. */
int block_decode_job_run(const struct block_decode_job *j);

struct block_decoder;
/* Its threads start with the first job; efd is written (an eventfd's 1)
 * whenever a job is done. NULL: out of memory. */
struct block_decoder *block_decoder_new(int efd);
/* false: no thread could be started (decode it at once instead). */
bool block_decoder_push(struct block_decoder *d, struct block_decode_job *j);
/* The jobs done since the last call, a list in no order. */
struct block_decode_job *block_decoder_take_done(struct block_decoder *d);
/* After the jobs pushed are done: the threads stopped, d freed. */
void block_decoder_free(struct block_decoder *d);

#endif
