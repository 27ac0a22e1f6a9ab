/* Unit tests for the migration return path (vmm/migration_stream.c,
 * migration.h): the source's wait ends its half of the connection, lasts
 * until the destination's reply (held here), and only "loaded" is
 * success; "failed to load", a closed connection, a reply that is not
 * vmm's and a cancel are errors; the capability needs a socket; a reply
 * to a source that went away is an error, not SIGPIPE. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/check_run.h"
#include "vmm/migration.h"

#define HOLD_MS 300

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The stand-in destination: waits for the source's end of stream (EOF),
 * holds HOLD_MS, then replies (loaded or not) or closes (reply < 0). */
struct dest {
	int fd, reply;
	bool saw_eof;
};

static void *dest_thread(void *opaque)
{
	struct dest *d = opaque;
	char c;
	char err[128];

	d->saw_eof = read(d->fd, &c, 1) == 0;
	usleep(HOLD_MS * 1000);
	if (d->reply >= 0)
		mig_rp_send(d->fd, d->reply == 0, err, sizeof(err));
	close(d->fd);
	return NULL;
}

/* mig_rp_wait against a destination answering reply: its result, err,
 * and how long it waited in *ms. */
static int wait_for(int reply, char *err, size_t errlen, uint64_t *ms)
{
	int sv[2], r;
	struct dest d;
	pthread_t t;
	uint64_t t0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	d = (struct dest){.fd = sv[1], .reply = reply};
	ck_assert_int_eq(pthread_create(&t, NULL, dest_thread, &d), 0);
	t0 = now_ms();
	r = mig_rp_wait(sv[0], NULL, err, errlen);
	*ms = now_ms() - t0;
	pthread_join(t, NULL);
	ck_assert(d.saw_eof); /* the source ended its half first */
	close(sv[0]);
	return r;
}

START_TEST(loaded_after_the_hold)
{
	char err[256] = "";
	uint64_t ms;

	ck_assert_int_eq(wait_for(0, err, sizeof(err), &ms), 0);
	ck_assert_uint_ge(ms, HOLD_MS - 20);
}
END_TEST

START_TEST(failed_load_is_an_error)
{
	char err[256] = "";
	uint64_t ms;

	ck_assert_int_eq(wait_for(1, err, sizeof(err), &ms), -1);
	ck_assert_ptr_nonnull(strstr(err, "failed to load"));
	ck_assert_uint_ge(ms, HOLD_MS - 20);
}
END_TEST

START_TEST(closed_without_reply_is_an_error)
{
	char err[256] = "";
	uint64_t ms;

	ck_assert_int_eq(wait_for(-1, err, sizeof(err), &ms), -1);
	ck_assert_ptr_nonnull(strstr(err, "without acknowledging"));
}
END_TEST

START_TEST(bad_replies_are_refused)
{
	uint8_t msg[MIG_RP_SIZE] = "VMMLOAD!";
	char err[256];

	ck_assert_int_eq(mig_rp_parse(msg, sizeof(msg), err, sizeof(err)), 0);
	ck_assert_int_eq(mig_rp_parse(msg, sizeof(msg) - 1, err, sizeof(err)), -1);
	msg[8] = 7;
	ck_assert_int_eq(mig_rp_parse(msg, sizeof(msg), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown reply 7"));
	msg[8] = 0;
	msg[0] = 'X';
	ck_assert_int_eq(mig_rp_parse(msg, sizeof(msg), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "not vmm's"));
}
END_TEST

START_TEST(cancel_stops_the_wait)
{
	bool cancel = true;
	char err[256] = "";
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(mig_rp_wait(sv[0], &cancel, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cancelled"));
	close(sv[0]);
	close(sv[1]);
}
END_TEST

START_TEST(needs_a_socket)
{
	int p[2], sv[2];
	char err[256] = "";

	ck_assert_int_eq(pipe(p), 0);
	ck_assert(!mig_rp_usable(p[1]));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert(mig_rp_usable(sv[0]));
	/* the source is gone: the reply fails, the process lives on */
	close(sv[1]);
	ck_assert_int_eq(mig_rp_send(sv[0], true, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot answer the source"));
	close(sv[0]);
	close(p[0]);
	close(p[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("migration_rp");
	TCase *tc = tcase_create("return path");

	tcase_add_test(tc, loaded_after_the_hold);
	tcase_add_test(tc, failed_load_is_an_error);
	tcase_add_test(tc, closed_without_reply_is_an_error);
	tcase_add_test(tc, bad_replies_are_refused);
	tcase_add_test(tc, cancel_stops_the_wait);
	tcase_add_test(tc, needs_a_socket);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
