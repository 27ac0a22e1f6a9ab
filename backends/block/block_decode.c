/* block_decode.c — the decode threads of block_decode.h: one queue of
 * jobs under a mutex, as many threads as online CPUs (at most 4), each
 * taking the next job, decoding it without the lock and handing it back
 * on the done list, then writing the engine's eventfd so that its owner
 * collects it with the I/O completions. The threads run on small stacks
 * (zlib and zstd keep their state on the heap): 256 KiB cannot hold an
 * aligned 2 MiB range, so no transparent huge page backs them. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "backends/block/block_decode.h"
#include "backends/block/block_qcow2.h"

#define MAX_THREADS 4
#define STACK_SIZE (256u << 10)

struct block_decoder {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct block_decode_job *todo, **todo_tail, *done;
	pthread_t threads[MAX_THREADS];
	int nthreads, efd;
	bool started, stop;
};

int block_decode_job_run(const struct block_decode_job *j)
{
	return qcow2_zrun_decode(j->run.image, j->run.entry, j->in, j->run.zlen, j->run.skip,
				 j->dst, j->ndst);
}

struct block_decoder *block_decoder_new(int efd)
{
	struct block_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	d->todo_tail = &d->todo;
	d->efd = efd;
	return d;
}

static void *decode_thread(void *arg)
{
	struct block_decoder *d = arg;
	const uint64_t one = 1;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct block_decode_job *j;

		while (!d->todo && !d->stop)
			pthread_cond_wait(&d->work, &d->lock);
		if (!d->todo)
			break;
		j = d->todo;
		d->todo = j->next;
		if (!d->todo)
			d->todo_tail = &d->todo;
		pthread_mutex_unlock(&d->lock);
		j->res = block_decode_job_run(j);
		pthread_mutex_lock(&d->lock);
		j->next = d->done;
		d->done = j;
		if (write(d->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the owner wakes anyway */
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void start_threads(struct block_decoder *d)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
	pthread_attr_t attr;

	d->started = true;
	if (pthread_attr_init(&attr))
		return;
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	while (d->nthreads < want &&
	       pthread_create(&d->threads[d->nthreads], &attr, decode_thread, d) == 0)
		d->nthreads++;
	pthread_attr_destroy(&attr);
}

bool block_decoder_push(struct block_decoder *d, struct block_decode_job *j)
{
	if (!d->started)
		start_threads(d);
	if (!d->nthreads)
		return false;
	pthread_mutex_lock(&d->lock);
	j->next = NULL;
	*d->todo_tail = j;
	d->todo_tail = &j->next;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	return true;
}

struct block_decode_job *block_decoder_take_done(struct block_decoder *d)
{
	struct block_decode_job *j;

	pthread_mutex_lock(&d->lock);
	j = d->done;
	d->done = NULL;
	pthread_mutex_unlock(&d->lock);
	return j;
}

void block_decoder_free(struct block_decoder *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->work);
	pthread_mutex_unlock(&d->lock);
	for (int i = 0; i < d->nthreads; i++)
		pthread_join(d->threads[i], NULL);
	pthread_cond_destroy(&d->work);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
