/* tcpscript_parse.c — the segment-script harness's text side: parsing a
 * line of packetdrill's notation (tcpscript.h has the grammar) into a
 * segment spec with its wildcards, and formatting segments back into that
 * notation for failure messages. Separate from building and matching
 * (tcpscript_seg.c) because it knows only text, no stack or frames. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_internal.h"

#define TS_ANY UINT32_MAX

/* ---------------------------------------------------------- script text */

void ts_fail_at(const struct ts_ctx *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ck_abort_msg("%s:%d: `%s`: %s", c->file, c->line, c->text, msg);
	abort();
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A number or '*' (any: returns true with *v = TS_ANY). */
static const char *parse_num(const struct ts_ctx *c, const char *p, uint32_t *v, bool *any)
{
	char *end;
	unsigned long long n;

	p = skip_ws(p);
	if (*p == '*') {
		if (!any)
			ts_fail_at(c, "'*' not allowed here");
		*any = true;
		*v = TS_ANY;
		return p + 1;
	}
	n = strtoull(p, &end, 10);
	if (end == p || n > UINT32_MAX)
		ts_fail_at(c, "bad number at \"%s\"", p);
	if (any)
		*any = false;
	*v = (uint32_t)n;
	return end;
}

static bool word(const char **p, const char *w)
{
	size_t n = strlen(w);
	const char *q = skip_ws(*p);

	if (strncmp(q, w, n) != 0 || (q[n] && q[n] != ' ' && q[n] != ',' && q[n] != '>'))
		return false;
	*p = q + n;
	return true;
}

void ts_add_order(struct ts_spec *sp, uint8_t kind)
{
	if (sp->norder < sizeof(sp->order))
		sp->order[sp->norder++] = kind;
}

static const char *parse_sack(const struct ts_ctx *c, const char *p, struct ts_spec *sp)
{
	while (*(p = skip_ws(p)) >= '0' && *p <= '9') {
		uint32_t a, b;

		if (sp->s.nsack == TS_MAX_SACK)
			ts_fail_at(c, "more than %d SACK blocks", TS_MAX_SACK);
		p = parse_num(c, p, &a, NULL);
		if (*p != ':')
			ts_fail_at(c, "SACK block needs A:B");
		p = parse_num(c, p + 1, &b, NULL);
		sp->s.sack[sp->s.nsack][0] = a;
		sp->s.sack[sp->s.nsack][1] = b;
		sp->s.nsack++;
	}
	return p;
}

static const char *parse_one_opt(const struct ts_ctx *c, const char *p, struct ts_spec *sp)
{
	uint32_t v;

	if (word(&p, "mss")) {
		p = parse_num(c, p, &v, &sp->mss_any);
		sp->s.has_mss = true;
		sp->s.mss = (uint16_t)v;
		ts_add_order(sp, OPT_MSS);
	} else if (word(&p, "wscale")) {
		p = parse_num(c, p, &v, &sp->ws_any);
		sp->s.has_ws = true;
		sp->s.ws = (uint8_t)v;
		ts_add_order(sp, OPT_WS);
	} else if (word(&p, "sackOK")) {
		sp->s.sack_ok = true;
		ts_add_order(sp, OPT_SACK_PERM);
	} else if (word(&p, "TS")) {
		if (!word(&p, "val"))
			ts_fail_at(c, "TS needs 'val N ecr N'");
		p = parse_num(c, p, &sp->s.tsval, &sp->tsval_any);
		if (!word(&p, "ecr"))
			ts_fail_at(c, "TS needs 'val N ecr N'");
		p = parse_num(c, p, &sp->s.tsecr, &sp->tsecr_any);
		sp->s.has_ts = true;
		ts_add_order(sp, OPT_TS);
	} else if (word(&p, "sack")) {
		p = parse_sack(c, p, sp);
		ts_add_order(sp, OPT_SACK);
	} else if (word(&p, "nop")) {
		ts_add_order(sp, OPT_NOP);
	} else if (word(&p, "eol")) {
		ts_add_order(sp, OPT_EOL);
	} else {
		ts_fail_at(c, "unknown option at \"%s\"", p);
	}
	return p;
}

static const char *parse_opts(const struct ts_ctx *c, const char *p, struct ts_spec *sp)
{
	sp->opts_set = true;
	p = skip_ws(p + 1);
	while (*p != '>') {
		p = parse_one_opt(c, p, sp);
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (*p != '>')
			ts_fail_at(c, "expected ',' or '>' at \"%s\"", p);
	}
	return p + 1;
}

static const char *parse_flags(const struct ts_ctx *c, const char *p, uint8_t *flags)
{
	*flags = 0;
	for (p = skip_ws(p); *p && *p != ' '; p++) {
		switch (*p) {
		case 'S':
			*flags |= TH_SYN;
			break;
		case 'F':
			*flags |= TH_FIN;
			break;
		case 'R':
			*flags |= TH_RST;
			break;
		case 'P':
			*flags |= TH_PSH;
			break;
		case 'U':
			*flags |= TH_URG;
			break;
		case '.':
			*flags |= TH_ACK;
			break;
		default:
			ts_fail_at(c, "unknown flag '%c'", *p);
		}
	}
	return p;
}

/* SEQ | SEQ:END(LEN) | '*' */
static const char *parse_seq(const struct ts_ctx *c, const char *p, struct ts_spec *sp)
{
	uint32_t end, len;

	p = parse_num(c, p, &sp->s.seq, &sp->seq_any);
	if (sp->seq_any || *p != ':')
		return p;
	p = parse_num(c, p + 1, &end, NULL);
	if (*p != '(')
		ts_fail_at(c, "expected (LEN) after SEQ:END");
	p = parse_num(c, p + 1, &len, NULL);
	if (*p != ')')
		ts_fail_at(c, "missing ')'");
	if (end - sp->s.seq != len)
		ts_fail_at(c, "END - SEQ != LEN");
	sp->s.len = len;
	return p + 1;
}

void ts_parse_line(const struct ts_ctx *c, struct ts_spec *sp)
{
	const char *p = c->text;

	memset(sp, 0, sizeof(*sp));
	p = parse_flags(c, p, &sp->s.flags);
	p = parse_seq(c, p, sp);
	for (;;) {
		p = skip_ws(p);
		if (!*p)
			break;
		if (word(&p, "ack")) {
			sp->ack_set = true;
			p = parse_num(c, p, &sp->s.ack, &sp->ack_any);
		} else if (word(&p, "win")) {
			uint32_t w;

			sp->win_set = true;
			p = parse_num(c, p, &w, &sp->win_any);
			if (!sp->win_any && w > 65535)
				ts_fail_at(c, "win is the raw 16-bit field");
			sp->s.win = (uint16_t)w;
		} else if (*p == '<') {
			p = parse_opts(c, p, sp);
		} else {
			ts_fail_at(c, "unexpected \"%s\"", p);
		}
	}
	if (sp->ack_set && !(sp->s.flags & TH_ACK))
		ts_fail_at(c, "ack given without '.'");
}

/* ------------------------------------------------------------- formatting */

size_t ts_fmt_flags(uint8_t f, char *b)
{
	size_t n = 0;

	if (f & TH_SYN)
		b[n++] = 'S';
	if (f & TH_FIN)
		b[n++] = 'F';
	if (f & TH_RST)
		b[n++] = 'R';
	if (f & TH_PSH)
		b[n++] = 'P';
	if (f & TH_URG)
		b[n++] = 'U';
	if (f & TH_ACK)
		b[n++] = '.';
	if (!n)
		b[n++] = '-';
	b[n] = 0;
	return n;
}

#define APPEND(...)                                                                                \
	do {                                                                                       \
		int k_ = snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
		n += k_ > 0 ? (size_t)k_ : 0;                                                      \
	} while (0)

static void fmt_opts(const struct ts_seg *s, char *buf, size_t cap, size_t n)
{
	const char *sep = "";

	APPEND(" <");
	if (s->has_mss) {
		APPEND("%smss %u", sep, s->mss);
		sep = ",";
	}
	if (s->sack_ok) {
		APPEND("%ssackOK", sep);
		sep = ",";
	}
	if (s->has_ts) {
		APPEND("%sTS val %u ecr %u", sep, s->tsval, s->tsecr);
		sep = ",";
	}
	if (s->has_ws) {
		APPEND("%swscale %u", sep, s->ws);
		sep = ",";
	}
	if (s->nsack) {
		APPEND("%ssack", sep);
		for (unsigned i = 0; i < s->nsack; i++)
			APPEND(" %u:%u", s->sack[i][0], s->sack[i][1]);
	}
	APPEND(">");
}

void ts_format(const struct ts_seg *s, char *buf, size_t cap)
{
	char fl[8];
	size_t n = 0;

	ts_fmt_flags(s->flags, fl);
	APPEND("%s %u:%u(%u)", fl, s->seq, s->seq + s->len, s->len);
	if (s->flags & TH_ACK)
		APPEND(" ack %u", s->ack);
	APPEND(" win %u", s->win);
	if (s->has_mss || s->sack_ok || s->has_ts || s->has_ws || s->nsack)
		fmt_opts(s, buf, cap, n);
}
