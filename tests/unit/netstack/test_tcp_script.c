/* test_tcp_script.c — scripted segment-level TCP tests (packetdrill
 * style, see tcpscript.h), one per RFC behaviour, on virtual time. */
#include <check.h>
#include <stdlib.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript.h"

static struct tscript *t;

static void setup(void)
{
	t = ts_new(NULL);
}

static void teardown(void)
{
	ts_free(t);
	t = NULL;
}

/* RFC 9293 3.10.7.1: a segment for a closed port gets a RST built from
 * it; a RST never gets one. The ISN is the absolute 0 here. */
START_TEST(test_rst_on_closed_port)
{
	ts_new_conn(t, 80, 40000);
	t->liss = 0;
	t->liss_known = true;
	TS_IN(t, "S 0:0(0) win 65535 <mss 1460>");
	TS_OUT(t, "R. 0:0(0) ack 1");
	TS_IN(t, ". 1:1(0) ack 5000");
	TS_OUT(t, "R 5000:5000(0)");
	TS_IN(t, "P. 1:101(100) ack 7");
	TS_OUT(t, "R 7:7(0)");
	TS_IN(t, "F 1:1(0)");
	TS_OUT(t, "R. 0:0(0) ack 2");
	TS_IN(t, "R 1:1(0)");
	TS_IN(t, "R. 1:1(0) ack 9");
	TS_NONE(t);
	ck_assert_uint_eq(ts_stats(t).tcp_rst_tx, 4);
}
END_TEST

static const TTest *const *const cases[] = {
	TS_CASE(test_rst_on_closed_port),
};

int main(void)
{
	return ts_run_suite("netstack_tcp_script", cases, sizeof(cases) / sizeof(cases[0]), setup,
			    teardown, 30);
}
