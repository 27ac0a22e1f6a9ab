/* tcpscript_suite.h — the fixture every segment-script suite shares: t, a
 * fresh harness (ts_new(NULL)) for each test, the data segment size and
 * the peer's SYN options without SACK of the standard handshakes. It
 * defines statics: include it from the one .c file of a suite binary. */
#ifndef TESTS_TCPSCRIPT_SUITE_H
#define TESTS_TCPSCRIPT_SUITE_H

#include "tests/unit/netstack/tcpscript.h"

enum { SMSS = 1448 }; /* MSS 1460 less the 12-byte timestamp option */

/* The peer's SYN options without SACK-permitted. */
#define NO_SACK "mss 1460,TS val 100 ecr 0,nop,wscale 7"

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

#endif
