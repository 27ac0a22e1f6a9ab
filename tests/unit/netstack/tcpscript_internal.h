/* tcpscript_internal.h — what the segment-script harness's own files
 * share (tcpscript.c: capture link, time, sockets, handshakes;
 * tcpscript_parse.c: the line parser and formatter; tcpscript_seg.c:
 * building, decoding and matching segments). Tests include tcpscript.h. */
#ifndef TESTS_TCPSCRIPT_INTERNAL_H
#define TESTS_TCPSCRIPT_INTERNAL_H

#include "tests/unit/netstack/tcpscript.h"

/* TCP option kinds (RFC 9293, 7323, 2018) */
enum { OPT_EOL, OPT_NOP, OPT_MSS, OPT_WS, OPT_SACK_PERM, OPT_SACK, OPT_TS = 8 };

/* A parsed line: a segment plus which fields are wildcards or absent. */
struct ts_spec {
	struct ts_seg s;
	bool seq_any, ack_set, ack_any, win_set, win_any, opts_set;
	bool mss_any, ws_any, tsval_any, tsecr_any;
	/* option kinds in the order written (TS_IN builds them so) */
	uint8_t order[16];
	unsigned norder;
};

/* Where a script line is written, and its text (for messages). */
struct ts_ctx {
	const char *file;
	int line;
	const char *text;
};

/* Fail the running test, naming the script line. */
void ts_fail_at(const struct ts_ctx *c, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 2, 3)));
/* Parse c's text into sp (fails the test on a syntax error). */
void ts_parse_line(const struct ts_ctx *c, struct ts_spec *sp);
/* Note an option kind in the order written. */
void ts_add_order(struct ts_spec *sp, uint8_t kind);
/* Write flags the way scripts spell them; the length. */
size_t ts_fmt_flags(uint8_t f, char *b);
/* Match frame f (freed) against c's TS_OUT line. */
void ts_match_frame(struct tscript *t, const struct ts_ctx *c, struct ts_frame *f);

#endif
