/* Unit tests for the split virtqueue (devices/virtio/queue.c) against
 * rings built by hand in a fake guest RAM: normal and indirect chains,
 * EVENT_IDX and NO_INTERRUPT, and every malformed case a guest can make.
 * Guest RAM is a malloc'ed block of exactly RAM_SIZE bytes, so under ASan
 * any access outside it fails the test. */
#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/dev_host.h"
#include "devices/virtio/virtio.h"
#include "tests/unit/check_run.h"

#define RAM_BASE 0x10000ull
#define RAM_SIZE 0x20000u
#define QSIZE 8
#define DESC_GPA (RAM_BASE + 0x0000)
#define AVAIL_GPA (RAM_BASE + 0x1000)
#define USED_GPA (RAM_BASE + 0x2000)
#define TABLE_GPA (RAM_BASE + 0x3000) /* indirect tables */
#define DATA_GPA (RAM_BASE + 0x8000)

static uint8_t *ram;
static struct guest_mem mem;
static struct virtq q;
static struct virtq_chain *chain;

static void *gp(uint64_t gpa)
{
	return ram + (gpa - RAM_BASE);
}

static void setup(void)
{
	ram = calloc(1, RAM_SIZE);
	chain = malloc(sizeof(*chain));
	mem = (struct guest_mem){.r = {{RAM_BASE, RAM_SIZE, ram}}, .n = 1, .ram_size = RAM_SIZE};
	virtq_reset(&q, QSIZE);
	q.desc_gpa = DESC_GPA;
	q.avail_gpa = AVAIL_GPA;
	q.used_gpa = USED_GPA;
}

static void teardown(void)
{
	free(chain);
	free(ram);
}

/* A fresh fixture inside a test (table-driven cases). */
static void refresh(void)
{
	teardown();
	setup();
}

static void start(bool event_idx, bool indirect)
{
	ck_assert_int_eq(virtq_start(&q, &mem, event_idx, indirect), 0);
}

static void set_desc(uint64_t table, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct vring_desc *d = (struct vring_desc *)gp(table) + i;

	d->addr = htole64(addr);
	d->len = htole32(len);
	d->flags = htole16(flags);
	d->next = htole16(next);
}

/* Make head available as the next avail entry. */
static void offer(uint16_t head)
{
	struct vring_avail *a = gp(AVAIL_GPA);
	uint16_t idx = le16toh(a->idx);

	a->ring[idx % QSIZE] = htole16(head);
	a->idx = htole16(idx + 1);
}

static struct vring_used *used(void)
{
	return gp(USED_GPA);
}

/* The malformed-queue contract: -EINVAL, a reason, and it stays stopped. */
static void expect_broken(const char *why_part)
{
	ck_assert_int_eq(virtq_pop(&q, chain), -EINVAL);
	ck_assert_ptr_nonnull(q.broken);
	ck_assert_msg(strstr(q.broken, why_part), "reason '%s' lacks '%s'", q.broken, why_part);
	ck_assert_int_eq(virtq_pop(&q, chain), -EINVAL);
	ck_assert(!virtq_has_avail(&q));
}

/* For a live migration: the rings are pinned from the start, and while
 * tracking, a completion marks its chain's writable buffers again (not
 * the readable ones), indirect tables included; not tracking, no walk. */
START_TEST(completions_mark_written_pages)
{
	uint64_t touched[1] = {0}, pinned[1] = {0};

	mem.touched = touched;
	mem.pinned = pinned;
	mem.touched_base = ram;
	mem.touched_size = RAM_SIZE;
	start(false, true);
	ck_assert_uint_eq(pinned[0], 0x7); /* desc, avail, used: pages 0-2 */
	set_desc(DESC_GPA, 0, DATA_GPA, 16, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, DATA_GPA + 0x2000, 64, VRING_DESC_F_WRITE, 0);
	set_desc(DESC_GPA, 2, TABLE_GPA, 2 * 16, VRING_DESC_F_INDIRECT, 0);
	set_desc(TABLE_GPA, 0, DATA_GPA + 0x3000, 8, VRING_DESC_F_NEXT, 1);
	set_desc(TABLE_GPA, 1, DATA_GPA + 0x4000, 8, VRING_DESC_F_WRITE, 0);
	offer(0);
	offer(2);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	ck_assert_uint_eq(touched[0] & (1ull << 10 | 1ull << 12), 1ull << 10 | 1ull << 12);
	touched[0] = 0; /* a migration's sync took the marks */
	virtq_push(&q, 0, 64);
	ck_assert_uint_eq(touched[0], 0);
	mem.tracking = true;
	virtq_push(&q, 0, 64);
	ck_assert_uint_eq(touched[0], 1ull << 10);
	touched[0] = 0;
	virtq_push(&q, 2, 8);
	ck_assert_uint_eq(touched[0], 1ull << 3 | 1ull << 12);
	ck_assert_uint_eq(pinned[0], 0x7);
}
END_TEST

START_TEST(normal_chain_and_used_ring)
{
	start(false, false);
	ck_assert_int_eq(virtq_pop(&q, chain), 0); /* empty */
	set_desc(DESC_GPA, 3, DATA_GPA, 16, VRING_DESC_F_NEXT, 5);
	set_desc(DESC_GPA, 5, DATA_GPA + 0x100, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(DESC_GPA, 1, DATA_GPA + 0x400, 1, VRING_DESC_F_WRITE, 0);
	offer(3);
	ck_assert(virtq_has_avail(&q));
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	ck_assert_uint_eq(chain->head, 3);
	ck_assert_uint_eq(chain->n_out, 1);
	ck_assert_uint_eq(chain->n_in, 2);
	ck_assert_uint_eq(chain->out_len, 16);
	ck_assert_uint_eq(chain->in_len, 513);
	ck_assert_ptr_eq(chain->buf[0].ptr, gp(DATA_GPA));
	ck_assert_ptr_eq(chain->buf[2].ptr, gp(DATA_GPA + 0x400));
	ck_assert_int_eq(virtq_pop(&q, chain), 0);
	virtq_push(&q, 3, 513);
	ck_assert_uint_eq(le16toh(used()->idx), 1);
	ck_assert_uint_eq(le32toh(used()->ring[0].id), 3);
	ck_assert_uint_eq(le32toh(used()->ring[0].len), 513);
	ck_assert_ptr_null(q.broken);
}
END_TEST

START_TEST(chain_copy_helpers)
{
	uint8_t hdr[20], st = 0x5a;

	start(false, false);
	memcpy(gp(DATA_GPA), "0123456789", 10);
	memcpy(gp(DATA_GPA + 0x100), "abcdefghij", 10);
	set_desc(DESC_GPA, 0, DATA_GPA, 10, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, DATA_GPA + 0x100, 10, VRING_DESC_F_NEXT, 2);
	set_desc(DESC_GPA, 2, DATA_GPA + 0x200, 4, VRING_DESC_F_WRITE, 0);
	offer(0);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	/* reads span descriptors and stop at the end of the readable part */
	ck_assert_uint_eq(virtq_chain_read(chain, 5, hdr, sizeof(hdr)), 15);
	ck_assert(!memcmp(hdr, "56789abcdefghij", 15));
	ck_assert_uint_eq(virtq_chain_write(chain, 3, &st, 1), 1);
	ck_assert_uint_eq(*(uint8_t *)gp(DATA_GPA + 0x203), 0x5a);
	ck_assert_uint_eq(virtq_chain_write(chain, 4, &st, 1), 0); /* past the end */
}
END_TEST

START_TEST(indirect_chain)
{
	start(false, true);
	set_desc(TABLE_GPA, 0, DATA_GPA, 16, VRING_DESC_F_NEXT, 2);
	set_desc(TABLE_GPA, 2, DATA_GPA + 0x100, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(TABLE_GPA, 1, DATA_GPA + 0x2000, 1, VRING_DESC_F_WRITE, 0);
	/* a direct descriptor, then the indirect one */
	set_desc(DESC_GPA, 6, DATA_GPA + 0x3000, 8, VRING_DESC_F_NEXT, 7);
	set_desc(DESC_GPA, 7, TABLE_GPA, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	offer(6);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	ck_assert_uint_eq(chain->head, 6);
	ck_assert_uint_eq(chain->n_out, 2);
	ck_assert_uint_eq(chain->n_in, 2);
	ck_assert_uint_eq(chain->out_len, 24);
	ck_assert_uint_eq(chain->in_len, 4097);
}
END_TEST

START_TEST(event_idx_suppression)
{
	struct vring vr = {QSIZE, gp(DESC_GPA), gp(AVAIL_GPA), gp(USED_GPA)};

	start(true, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 1, VRING_DESC_F_WRITE, 0);
	for (int i = 0; i < 3; i++)
		offer(0);
	/* the driver wants an interrupt once used idx passes 2 */
	vring_used_event(&vr) = htole16(2);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	virtq_push(&q, 0, 1);
	ck_assert(virtq_should_notify(&q)); /* the first one always */
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	virtq_push(&q, 0, 1);
	ck_assert(!virtq_should_notify(&q)); /* used 2: event 2 not passed */
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	virtq_push(&q, 0, 1);
	ck_assert(virtq_should_notify(&q)); /* used 3 passes event 2 */
	/* doorbells: avail_event follows what was consumed when re-enabled */
	virtq_set_notify(&q, false);
	ck_assert_uint_eq(le16toh(vring_avail_event(&vr)), 0);
	virtq_set_notify(&q, true);
	ck_assert_uint_eq(le16toh(vring_avail_event(&vr)), 3);
}
END_TEST

START_TEST(no_interrupt_and_no_notify_flags)
{
	struct vring_avail *a = gp(AVAIL_GPA);

	start(false, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 1, VRING_DESC_F_WRITE, 0);
	offer(0);
	ck_assert_int_eq(virtq_pop(&q, chain), 1);
	virtq_push(&q, 0, 1);
	ck_assert(virtq_should_notify(&q));
	a->flags = htole16(VRING_AVAIL_F_NO_INTERRUPT);
	ck_assert(!virtq_should_notify(&q));
	virtq_set_notify(&q, false);
	ck_assert_uint_eq(le16toh(used()->flags), VRING_USED_F_NO_NOTIFY);
	virtq_set_notify(&q, true);
	ck_assert_uint_eq(le16toh(used()->flags), 0);
}
END_TEST

START_TEST(rejects_descriptor_loop)
{
	start(false, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(DESC_GPA, 1, DATA_GPA, 8, VRING_DESC_F_NEXT, 0);
	offer(0);
	expect_broken("loop");
}
END_TEST

START_TEST(rejects_chain_longer_than_queue)
{
	/* every descriptor chained, the last back to the first: QSIZE + 1
	 * visits without repeating a pair of neighbours */
	start(false, false);
	for (unsigned i = 0; i < QSIZE; i++)
		set_desc(DESC_GPA, i, DATA_GPA, 1, VRING_DESC_F_NEXT, (uint16_t)((i + 1) % QSIZE));
	offer(0);
	expect_broken("longer than the queue");
}
END_TEST

START_TEST(rejects_next_beyond_table)
{
	start(false, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 8, VRING_DESC_F_NEXT, QSIZE);
	offer(0);
	expect_broken("beyond the table");
}
END_TEST

START_TEST(rejects_head_beyond_queue)
{
	start(false, false);
	offer(QSIZE + 3);
	expect_broken("beyond the queue");
}
END_TEST

START_TEST(rejects_avail_idx_jump)
{
	struct vring_avail *a = gp(AVAIL_GPA);

	start(false, false);
	a->idx = htole16(QSIZE + 1);
	expect_broken("more than the queue size");
}
END_TEST

START_TEST(rejects_buffers_outside_ram)
{
	static const uint64_t bad[][2] = {
		{0, 16},		       /* below RAM */
		{RAM_BASE + RAM_SIZE, 1},      /* just past it */
		{RAM_BASE + RAM_SIZE - 8, 16}, /* straddling the end */
		{UINT64_MAX - 4, 16},	       /* wrapping */
		{RAM_BASE, UINT32_MAX},	       /* far too long */
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refresh();
		start(false, false);
		set_desc(DESC_GPA, 0, bad[i][0], (uint32_t)bad[i][1], 0, 0);
		offer(0);
		expect_broken("outside guest RAM");
	}
}
END_TEST

START_TEST(rejects_readable_after_writable)
{
	start(false, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 8, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(DESC_GPA, 1, DATA_GPA, 8, 0, 0);
	offer(0);
	expect_broken("follows a writable");
}
END_TEST

START_TEST(rejects_bad_indirect_tables)
{
	struct {
		bool feature;
		uint64_t addr;
		uint32_t len;
		uint16_t flags;
		const char *why;
	} bad[] = {
		{false, TABLE_GPA, 16, VRING_DESC_F_INDIRECT,
		 "without VIRTIO_RING_F_INDIRECT_DESC"},
		{true, TABLE_GPA, 0, VRING_DESC_F_INDIRECT, "length"},
		{true, TABLE_GPA, 24, VRING_DESC_F_INDIRECT, "length"},
		{true, TABLE_GPA, 16 * (VIRTQ_MAX_CHAIN + 1), VRING_DESC_F_INDIRECT, "length"},
		{true, RAM_BASE + RAM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, "outside guest RAM"},
		{true, TABLE_GPA, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, "NEXT"},
	};

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refresh();
		start(false, bad[i].feature);
		set_desc(TABLE_GPA, 0, DATA_GPA, 8, 0, 0);
		set_desc(DESC_GPA, 0, bad[i].addr, bad[i].len, bad[i].flags, 1);
		set_desc(DESC_GPA, 1, DATA_GPA, 8, 0, 0);
		offer(0);
		expect_broken(bad[i].why);
	}
}
END_TEST

START_TEST(rejects_indirect_in_indirect_and_indirect_loops)
{
	start(false, true);
	set_desc(TABLE_GPA, 0, TABLE_GPA + 0x100, 16, VRING_DESC_F_INDIRECT, 0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	offer(0);
	expect_broken("inside an indirect table");

	refresh();
	start(false, true);
	set_desc(TABLE_GPA, 0, DATA_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(TABLE_GPA, 1, DATA_GPA, 8, VRING_DESC_F_NEXT, 0);
	set_desc(DESC_GPA, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	offer(0);
	expect_broken("loop in an indirect");
}
END_TEST

START_TEST(rejects_rings_outside_ram_or_bad_size)
{
	q.used_gpa = RAM_BASE + RAM_SIZE - 8;
	ck_assert_int_eq(virtq_start(&q, &mem, false, false), -EINVAL);
	ck_assert_ptr_nonnull(q.broken);
	refresh();
	q.desc_gpa = DESC_GPA + 8; /* descriptors are 16-byte aligned */
	ck_assert_int_eq(virtq_start(&q, &mem, false, false), -EINVAL);
	refresh();
	q.size = 6;
	ck_assert_int_eq(virtq_start(&q, &mem, false, false), -EINVAL);
	refresh();
	q.size = QSIZE * 2; /* above the maximum */
	ck_assert_int_eq(virtq_start(&q, &mem, false, false), -EINVAL);
}
END_TEST

START_TEST(a_broken_queue_leaves_others_working)
{
	struct virtq other;

	start(false, false);
	set_desc(DESC_GPA, 0, DATA_GPA, 8, VRING_DESC_F_NEXT, 0); /* self loop */
	offer(0);
	expect_broken("loop");
	/* a second queue in the same memory, its own rings */
	virtq_reset(&other, QSIZE);
	other.desc_gpa = RAM_BASE + 0x4000;
	other.avail_gpa = RAM_BASE + 0x5000;
	other.used_gpa = RAM_BASE + 0x6000;
	ck_assert_int_eq(virtq_start(&other, &mem, false, false), 0);
	set_desc(RAM_BASE + 0x4000, 0, DATA_GPA, 8, 0, 0);
	((struct vring_avail *)gp(RAM_BASE + 0x5000))->idx = htole16(1);
	ck_assert_int_eq(virtq_pop(&other, chain), 1);
	ck_assert_ptr_null(other.broken);
}
END_TEST

/* Random descriptor tables, indirect tables and avail rings: every pop
 * ends (chain or -EINVAL), every buffer handed out lies inside guest RAM,
 * and ASan sees no access outside it. */
START_TEST(random_rings_never_escape_ram)
{
	uint32_t seed = 12345;
	unsigned chains = 0, broken = 0;

	for (unsigned round = 0; round < 2000; round++) {
		uint8_t *p;

		refresh();
		p = ram;
		for (unsigned i = 0; i < 0x4000; i++) { /* rings and tables */
			seed = seed * 1103515245u + 12345u;
			p[i] = (uint8_t)(seed >> 16);
		}
		/* keep most addresses near RAM so chains get somewhere */
		for (unsigned i = 0; i < 0x4000 / 16; i++) {
			struct vring_desc *d = (struct vring_desc *)gp(RAM_BASE) + i;

			if (i % 4)
				d->addr =
					htole64(RAM_BASE + (le64toh(d->addr) % (RAM_SIZE + 0x100)));
			if (i % 3)
				d->len = htole32(le32toh(d->len) % 0x2000);
			d->next = htole16(le16toh(d->next) % (QSIZE + 2));
		}
		{
			struct vring_avail *a = gp(AVAIL_GPA);

			a->idx = htole16(le16toh(a->idx) % (QSIZE + 2));
			for (unsigned i = 0; i < QSIZE; i++)
				a->ring[i] = htole16(le16toh(a->ring[i]) % (QSIZE + 1));
		}
		start(round & 1, round & 2);
		for (int n = 0; n < QSIZE + 2; n++) {
			int r = virtq_pop(&q, chain);

			broken += r < 0;
			if (r <= 0)
				break;
			chains++;
			for (unsigned b = 0; b < chain->n_out + chain->n_in; b++)
				ck_assert(chain->buf[b].ptr >= ram &&
					  chain->buf[b].ptr + chain->buf[b].len <= ram + RAM_SIZE);
			virtq_push(&q, chain->head, 0);
		}
	}
	/* both outcomes were exercised */
	ck_assert_uint_gt(chains, 100);
	ck_assert_uint_gt(broken, 100);
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *s = suite_create("virtio_queue");
	TCase *tc = tcase_create("queue");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, normal_chain_and_used_ring);
	tcase_add_test(tc, chain_copy_helpers);
	tcase_add_test(tc, indirect_chain);
	tcase_add_test(tc, event_idx_suppression);
	tcase_add_test(tc, no_interrupt_and_no_notify_flags);
	tcase_add_test(tc, rejects_descriptor_loop);
	tcase_add_test(tc, rejects_chain_longer_than_queue);
	tcase_add_test(tc, rejects_next_beyond_table);
	tcase_add_test(tc, rejects_head_beyond_queue);
	tcase_add_test(tc, completions_mark_written_pages);
	tcase_add_test(tc, rejects_avail_idx_jump);
	tcase_add_test(tc, rejects_buffers_outside_ram);
	tcase_add_test(tc, rejects_readable_after_writable);
	tcase_add_test(tc, rejects_bad_indirect_tables);
	tcase_add_test(tc, rejects_indirect_in_indirect_and_indirect_loops);
	tcase_add_test(tc, rejects_rings_outside_ram_or_bad_size);
	tcase_add_test(tc, a_broken_queue_leaves_others_working);
	tcase_add_test(tc, random_rings_never_escape_ram);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(queue_suite());
}
