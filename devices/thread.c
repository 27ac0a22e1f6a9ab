/* thread.c — vCPU and device I/O threads on stacks that transparent huge
 * pages never back.
 *
 * glibc maps each thread's 8 MiB stack without THP advice, so on a host whose
 * THP setting is "always" the first touch of a stack that happens to span
 * an aligned 2 MiB range (the first one mapped below guest RAM does: guest
 * RAM is 2 MiB aligned) faults in a whole 2 MiB huge page for the few KiB a
 * thread uses. These stacks are the same size with a guard page at the
 * bottom, as glibc's, and marked MADV_NOHUGEPAGE before any page is touched
 * (Linux 6.7 and later already keep THP off MAP_STACK mappings, which
 * glibc's are; Debian 12's 6.1 does not).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#include "devices/dev_host.h"

#define STACK_SIZE (8u << 20)
#define GUARD_SIZE 4096u

int dev_thread_create(struct dev_thread *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	uint8_t *stack;
	int r;

	stack = mmap(NULL, GUARD_SIZE + STACK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return EAGAIN;
	/* Advice only: where THP or the guard cannot be set, a normal stack. */
	madvise(stack, GUARD_SIZE + STACK_SIZE, MADV_NOHUGEPAGE);
	mprotect(stack, GUARD_SIZE, PROT_NONE);
	r = pthread_attr_init(&attr);
	if (!r) {
		r = pthread_attr_setstack(&attr, stack + GUARD_SIZE, STACK_SIZE);
		if (!r)
			r = pthread_create(&t->id, &attr, fn, arg);
		pthread_attr_destroy(&attr);
	}
	if (r) {
		munmap(stack, GUARD_SIZE + STACK_SIZE);
		return r;
	}
	t->stack = stack;
	return 0;
}

void dev_thread_join(struct dev_thread *t)
{
	pthread_join(t->id, NULL);
	munmap(t->stack, GUARD_SIZE + STACK_SIZE);
	t->stack = NULL;
}
