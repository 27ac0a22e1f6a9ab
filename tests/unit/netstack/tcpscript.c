/* tcpscript.c — the segment-script harness (see tcpscript.h): a capture
 * link, a line parser for packetdrill's notation, segment building with
 * checksums, and output matching with readable failure messages. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/check_run.h"
#include "tests/unit/netstack/tcpscript.h"

#define TS_ANY UINT32_MAX

/* TCP option kinds (RFC 9293, 7323, 2018) */
enum { OPT_EOL, OPT_NOP, OPT_MSS, OPT_WS, OPT_SACK_PERM, OPT_SACK, OPT_TS = 8 };

static const uint8_t local_mac[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t peer_mac[6] = { 2, 0, 0, 0, 0, 2 };

/* --------------------------------------------------------- capture link */

static int cap_transmit(struct ns_link *l, const void *frame, size_t len)
{
	struct tscript *t = l->priv;
	struct ts_frame *f = malloc(sizeof(*f) + len);

	ck_assert_ptr_nonnull(f);
	f->next = NULL;
	f->len = len;
	f->when_us = ns_clock_now(t->clk);
	memcpy(f->data, frame, len);
	if (t->qtail)
		t->qtail->next = f;
	else
		t->qhead = f;
	t->qtail = f;
	t->qlen++;
	return 0;
}

static const struct ns_link_ops cap_ops = { .transmit = cap_transmit };

struct ts_frame *ts_pop(struct tscript *t)
{
	struct ts_frame *f = t->qhead;

	if (f) {
		t->qhead = f->next;
		if (!t->qhead)
			t->qtail = NULL;
		t->qlen--;
	}
	return f;
}

unsigned ts_flush(struct tscript *t)
{
	unsigned n = 0;
	struct ts_frame *f;

	while ((f = ts_pop(t))) {
		free(f);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- setup */

struct tscript *ts_new(const struct ts_cfg *cfg)
{
	struct ts_cfg dflt = { 0 };
	struct tscript *t = calloc(1, sizeof(*t));
	struct ns_stack_cfg sc;

	ck_assert_ptr_nonnull(t);
	if (!cfg)
		cfg = &dflt;
	sc = cfg->stack;
	t->clk = ns_clock_virtual_new(1000000);
	sc.clock = t->clk;
	if (!sc.seed)
		sc.seed = 0x5eed;
	t->st = ns_stack_new(&sc);
	ck_assert_ptr_nonnull(t->st);
	t->v6 = cfg->ipv6 || ts_ipv6_default;
	t->link = ns_link_new(&cap_ops, t, ts_link_mtu(t->v6, cfg->mtu), local_mac, "cap0");
	ck_assert_ptr_nonnull(t->link);
	memcpy(t->local_mac, local_mac, 6);
	memcpy(t->peer_mac, peer_mac, 6);
	ts_add_addresses(t, cfg->if_flags);
	t->check_payload = true;
	ts_new_conn(t, 0, cfg->pport ? cfg->pport : 40000);
	return t;
}

void ts_free(struct tscript *t)
{
	if (!t)
		return;
	ns_stack_free(t->st);
	ns_link_destroy(t->link);
	ns_clock_free(t->clk);
	ts_flush(t);
	free(t);
}

void ts_new_conn(struct tscript *t, uint16_t lport, uint16_t pport)
{
	t->lport = lport;
	t->pport = pport;
	t->liss_known = false;
	t->liss = 0;
	t->piss = 0x10000000u + pport * 0x10001u;
	t->sent = 0;
	t->peer_win = 65535;
	t->auto_ts = false;
	t->last_tsval = 0;
}

struct ns_stats ts_stats(struct tscript *t)
{
	struct ns_stats s;

	ns_stack_stats(t->st, &s);
	return s;
}

/* ---------------------------------------------------------- script text */

/* A parsed line: a segment plus which fields are wildcards or absent. */
struct ts_spec {
	struct ts_seg s;
	bool seq_any, ack_set, ack_any, win_set, win_any, opts_set;
	bool mss_any, ws_any, tsval_any, tsecr_any;
	/* option kinds in the order written (TS_IN builds them so) */
	uint8_t order[16];
	unsigned norder;
};

struct ts_ctx {
	const char *file;
	int line;
	const char *text;
};


static void __attribute__((noreturn, format(printf, 2, 3)))
fail_at(const struct ts_ctx *c, const char *fmt, ...)
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
			fail_at(c, "'*' not allowed here");
		*any = true;
		*v = TS_ANY;
		return p + 1;
	}
	n = strtoull(p, &end, 10);
	if (end == p || n > UINT32_MAX)
		fail_at(c, "bad number at \"%s\"", p);
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

static void add_order(struct ts_spec *sp, uint8_t kind)
{
	if (sp->norder < sizeof(sp->order))
		sp->order[sp->norder++] = kind;
}

static const char *parse_sack(const struct ts_ctx *c, const char *p, struct ts_spec *sp)
{
	while (*(p = skip_ws(p)) >= '0' && *p <= '9') {
		uint32_t a, b;

		if (sp->s.nsack == TS_MAX_SACK)
			fail_at(c, "more than %d SACK blocks", TS_MAX_SACK);
		p = parse_num(c, p, &a, NULL);
		if (*p != ':')
			fail_at(c, "SACK block needs A:B");
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
		add_order(sp, OPT_MSS);
	} else if (word(&p, "wscale")) {
		p = parse_num(c, p, &v, &sp->ws_any);
		sp->s.has_ws = true;
		sp->s.ws = (uint8_t)v;
		add_order(sp, OPT_WS);
	} else if (word(&p, "sackOK")) {
		sp->s.sack_ok = true;
		add_order(sp, OPT_SACK_PERM);
	} else if (word(&p, "TS")) {
		if (!word(&p, "val"))
			fail_at(c, "TS needs 'val N ecr N'");
		p = parse_num(c, p, &sp->s.tsval, &sp->tsval_any);
		if (!word(&p, "ecr"))
			fail_at(c, "TS needs 'val N ecr N'");
		p = parse_num(c, p, &sp->s.tsecr, &sp->tsecr_any);
		sp->s.has_ts = true;
		add_order(sp, OPT_TS);
	} else if (word(&p, "sack")) {
		p = parse_sack(c, p, sp);
		add_order(sp, OPT_SACK);
	} else if (word(&p, "nop")) {
		add_order(sp, OPT_NOP);
	} else if (word(&p, "eol")) {
		add_order(sp, OPT_EOL);
	} else {
		fail_at(c, "unknown option at \"%s\"", p);
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
			fail_at(c, "expected ',' or '>' at \"%s\"", p);
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
			fail_at(c, "unknown flag '%c'", *p);
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
		fail_at(c, "expected (LEN) after SEQ:END");
	p = parse_num(c, p + 1, &len, NULL);
	if (*p != ')')
		fail_at(c, "missing ')'");
	if (end - sp->s.seq != len)
		fail_at(c, "END - SEQ != LEN");
	sp->s.len = len;
	return p + 1;
}

static void parse_line(const struct ts_ctx *c, struct ts_spec *sp)
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
				fail_at(c, "win is the raw 16-bit field");
			sp->s.win = (uint16_t)w;
		} else if (*p == '<') {
			p = parse_opts(c, p, sp);
		} else {
			fail_at(c, "unexpected \"%s\"", p);
		}
	}
	if (sp->ack_set && !(sp->s.flags & TH_ACK))
		fail_at(c, "ack given without '.'");
}

/* ------------------------------------------------------------- formatting */

static size_t fmt_flags(uint8_t f, char *b)
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

#define APPEND(...)                                                                        \
	do {                                                                               \
		int k_ = snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__);           \
		n += k_ > 0 ? (size_t)k_ : 0;                                              \
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

	fmt_flags(s->flags, fl);
	APPEND("%s %u:%u(%u)", fl, s->seq, s->seq + s->len, s->len);
	if (s->flags & TH_ACK)
		APPEND(" ack %u", s->ack);
	APPEND(" win %u", s->win);
	if (s->has_mss || s->sack_ok || s->has_ts || s->has_ws || s->nsack)
		fmt_opts(s, buf, cap, n);
}

/* ------------------------------------------------------------- building */

static size_t put_opts(const struct ts_spec *sp, uint32_t last_tsval, uint32_t liss,
		       uint8_t *o)
{
	size_t n = 0;

	for (unsigned i = 0; i < sp->norder; i++) {
		uint32_t v;

		switch (sp->order[i]) {
		case OPT_MSS:
			o[n++] = OPT_MSS;
			o[n++] = 4;
			o[n++] = (uint8_t)(sp->s.mss >> 8);
			o[n++] = (uint8_t)sp->s.mss;
			break;
		case OPT_WS:
			o[n++] = OPT_WS;
			o[n++] = 3;
			o[n++] = sp->s.ws;
			break;
		case OPT_SACK_PERM:
			o[n++] = OPT_SACK_PERM;
			o[n++] = 2;
			break;
		case OPT_TS:
			o[n++] = OPT_TS;
			o[n++] = 10;
			v = htonl(sp->s.tsval);
			memcpy(o + n, &v, 4);
			v = htonl(sp->tsecr_any ? last_tsval : sp->s.tsecr);
			memcpy(o + n + 4, &v, 4);
			n += 8;
			break;
		case OPT_SACK:
			o[n++] = OPT_SACK;
			o[n++] = (uint8_t)(2 + 8 * sp->s.nsack);
			for (unsigned b = 0; b < sp->s.nsack; b++) {
				v = htonl(liss + sp->s.sack[b][0]);
				memcpy(o + n, &v, 4);
				v = htonl(liss + sp->s.sack[b][1]);
				memcpy(o + n + 4, &v, 4);
				n += 8;
			}
			break;
		default: /* NOP, EOL */
			o[n++] = sp->order[i];
		}
	}
	while (n % 4)
		o[n++] = OPT_EOL;
	return n;
}

/* The peer's TS val: 100 at the handshake, +1 per virtual millisecond. */
static uint32_t auto_tsval(struct tscript *t)
{
	return 100 + (uint32_t)((ns_clock_now(t->clk) - t->ts_base_us) / 1000);
}

static size_t build_seg(struct tscript *t, const struct ts_ctx *c, uint8_t *l4, size_t cap)
{
	struct tcp_hdr *th = (void *)l4;
	struct ts_spec sp;
	size_t optlen, hl;
	uint32_t dstart;

	parse_line(c, &sp);
	if (sp.seq_any || sp.ack_any || sp.win_any || sp.mss_any || sp.ws_any || sp.tsval_any)
		fail_at(c, "'*' only for TS ecr in TS_IN lines");
	if ((sp.s.flags & TH_ACK) && !sp.ack_set)
		fail_at(c, "'.' needs an ack value");
	if ((sp.s.flags & TH_ACK) && !t->liss_known)
		fail_at(c, "ack relative to the stack's ISN, which is not known yet");
	if (!sp.opts_set && t->auto_ts) {
		sp.s.has_ts = true;
		sp.s.tsval = auto_tsval(t);
		sp.tsecr_any = true;
		add_order(&sp, OPT_NOP);
		add_order(&sp, OPT_NOP);
		add_order(&sp, OPT_TS);
	}
	memset(th, 0, sizeof(*th));
	optlen = put_opts(&sp, t->last_tsval, t->liss, l4 + sizeof(*th));
	if (optlen > 40)
		fail_at(c, "options take %zu bytes (max 40)", optlen);
	hl = sizeof(*th) + optlen;
	th->sport = htons(t->pport);
	th->dport = htons(t->lport);
	th->seq = htonl(t->piss + sp.s.seq);
	th->ack = htonl((sp.s.flags & TH_ACK) ? t->liss + sp.s.ack : 0);
	th->off = (uint8_t)((hl / 4) << 4);
	th->flags = sp.s.flags;
	th->win = htons(sp.win_set ? sp.s.win : t->peer_win);
	if (sp.s.flags & TH_URG) /* urgent data: the whole payload (RFC 6093) */
		th->urp = htons((uint16_t)sp.s.len);
	if (hl + sp.s.len > cap)
		fail_at(c, "segment too long");
	dstart = sp.s.seq + !!(sp.s.flags & TH_SYN);
	for (uint32_t i = 0; i < sp.s.len; i++)
		l4[hl + i] = ts_pattern(dstart + i);
	th->csum = 0;
	th->csum = (uint16_t)~ts_tcp_csum(t, true, l4, hl + sp.s.len);
	return hl + sp.s.len;
}

size_t ts_build_seg_at(struct tscript *t, const char *file, int line, uint8_t *l4, size_t cap,
		       const char *fmt, ...)
{
	char text[512];
	struct ts_ctx c = { file, line, text };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return build_seg(t, &c, l4, cap);
}

void ts_in_at(struct tscript *t, const char *file, int line, const char *fmt, ...)
{
	static uint8_t l4[65536 - 20];
	char text[512];
	struct ts_ctx c = { file, line, text };
	size_t len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	len = build_seg(t, &c, l4, sizeof(l4));
	ts_inject_ip(t, NS_PROTO_TCP, l4, len);
	t->last_in_us = ns_clock_now(t->clk);
}

/* ------------------------------------------------------------- decoding */

static bool opt_err(char *why, size_t cap, const char *msg)
{
	snprintf(why, cap, "%s", msg);
	return false;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static bool decode_opts(const uint8_t *o, size_t len, struct ts_seg *s, char *why, size_t cap)
{
	size_t i = 0;

	while (i < len) {
		uint8_t kind = o[i], olen;

		if (kind == OPT_EOL)
			break;
		if (kind == OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len || (olen = o[i + 1]) < 2 || i + olen > len)
			return opt_err(why, cap, "malformed option list");
		switch (kind) {
		case OPT_MSS:
			if (olen != 4)
				return opt_err(why, cap, "MSS option length != 4");
			s->has_mss = true;
			s->mss = (uint16_t)(o[i + 2] << 8 | o[i + 3]);
			break;
		case OPT_WS:
			if (olen != 3)
				return opt_err(why, cap, "wscale option length != 3");
			s->has_ws = true;
			s->ws = o[i + 2];
			break;
		case OPT_SACK_PERM:
			if (olen != 2)
				return opt_err(why, cap, "sackOK option length != 2");
			s->sack_ok = true;
			break;
		case OPT_TS:
			if (olen != 10)
				return opt_err(why, cap, "TS option length != 10");
			s->has_ts = true;
			s->tsval = get32(o + i + 2);
			s->tsecr = get32(o + i + 6);
			break;
		case OPT_SACK:
			if ((olen - 2) % 8 || olen < 10 || (olen - 2) / 8 > TS_MAX_SACK)
				return opt_err(why, cap, "bad SACK option length");
			s->nsack = (olen - 2u) / 8;
			for (unsigned b = 0; b < s->nsack; b++) {
				uint32_t v[2];

				memcpy(v, o + i + 2 + 8 * b, 8);
				s->sack[b][0] = ntohl(v[0]);
				s->sack[b][1] = ntohl(v[1]);
			}
			break;
		default:
			snprintf(why, cap, "unexpected option kind %u", kind);
			return false;
		}
		i += olen;
	}
	return true;
}

/* Absolute numbers; checks framing, addresses and checksums. */
static bool decode_abs(struct tscript *t, const uint8_t *f, size_t len, struct ts_seg *s,
		       uint16_t *sport, uint16_t *dport, char *why, size_t cap)
{
	struct tcp_hdr th;
	const uint8_t *l4;
	size_t l4len, hl;

	memset(s, 0, sizeof(*s));
	if (!ts_decode_l3(t, f, len, &l4, &l4len, why, cap))
		return false;
	if (l4len < sizeof(th)) {
		snprintf(why, cap, "truncated TCP header (%zu bytes)", l4len);
		return false;
	}
	memcpy(&th, l4, sizeof(th));
	hl = (size_t)(th.off >> 4) * 4;
	if (hl < 20 || hl > l4len) {
		snprintf(why, cap, "bad TCP data offset %zu", hl);
		return false;
	}
	if (ts_tcp_csum(t, false, l4, l4len) != 0xffff) {
		snprintf(why, cap, "bad TCP checksum");
		return false;
	}
	s->flags = th.flags;
	s->seq = ntohl(th.seq);
	s->ack = ntohl(th.ack);
	s->win = ntohs(th.win);
	s->len = (uint32_t)(l4len - hl);
	s->payload = l4 + hl;
	*sport = ntohs(th.sport);
	*dport = ntohs(th.dport);
	return decode_opts(l4 + 20, hl - 20, s, why, cap);
}

static void relativize(const struct tscript *t, struct ts_seg *s)
{
	s->seq -= t->liss;
	s->ack = (s->flags & TH_ACK) ? s->ack - t->piss : 0;
	for (unsigned b = 0; b < s->nsack; b++) {
		s->sack[b][0] -= t->piss;
		s->sack[b][1] -= t->piss;
	}
}

bool ts_decode(struct tscript *t, const uint8_t *f, size_t len, struct ts_seg *s, char *why,
	       size_t whylen)
{
	uint16_t sport = 0, dport = 0;

	if (!decode_abs(t, f, len, s, &sport, &dport, why, whylen))
		return false;
	if (dport != t->pport || (t->lport && sport != t->lport)) {
		snprintf(why, whylen, "segment for ports %u->%u, not %u->%u", sport, dport,
			 t->lport, t->pport);
		return false;
	}
	if (!t->lport)
		t->lport = sport;
	if (!t->liss_known && (s->flags & TH_SYN)) {
		t->liss = s->seq;
		t->liss_known = true;
	}
	if (!t->liss_known) {
		snprintf(why, whylen, "stack's ISN unknown (no SYN seen yet)");
		return false;
	}
	relativize(t, s);
	/* Rules every segment obeys, checked on all of them. */
	if (!(s->flags & TH_SYN) && (s->has_mss || s->has_ws || s->sack_ok)) {
		snprintf(why, whylen, "MSS/wscale/sackOK in a non-SYN segment (RFC 9293 3.7.1, "
				      "RFC 7323 2.2, RFC 2018 2)");
		return false;
	}
	if (t->auto_ts && !(s->flags & TH_RST) && !s->has_ts) {
		snprintf(why, whylen, "no TS option although timestamps were negotiated "
				      "(RFC 7323 3.2)");
		return false;
	}
	if (s->has_ts)
		t->last_tsval = s->tsval;
	return true;
}

/* ------------------------------------------------------------- matching */

static void mismatch(char *buf, size_t cap, const char *what, uint32_t want, uint32_t got)
{
	size_t n = strlen(buf);

	snprintf(buf + n, cap - n, "%s%s %u, got %u", n ? "; " : "", what, want, got);
}

static void opt_mismatch(char *buf, size_t cap, const char *what)
{
	size_t n = strlen(buf);

	snprintf(buf + n, cap - n, "%s%s", n ? "; " : "", what);
}

static void compare_opts(const struct ts_spec *sp, const struct ts_seg *g, char *m, size_t cap)
{
	const struct ts_seg *w = &sp->s;

	if (w->has_mss != g->has_mss)
		opt_mismatch(m, cap, w->has_mss ? "MSS missing" : "unexpected MSS");
	else if (w->has_mss && !sp->mss_any && w->mss != g->mss)
		mismatch(m, cap, "mss", w->mss, g->mss);
	if (w->has_ws != g->has_ws)
		opt_mismatch(m, cap, w->has_ws ? "wscale missing" : "unexpected wscale");
	else if (w->has_ws && !sp->ws_any && w->ws != g->ws)
		mismatch(m, cap, "wscale", w->ws, g->ws);
	if (w->sack_ok != g->sack_ok)
		opt_mismatch(m, cap, w->sack_ok ? "sackOK missing" : "unexpected sackOK");
	if (w->has_ts != g->has_ts) {
		opt_mismatch(m, cap, w->has_ts ? "TS missing" : "unexpected TS");
	} else if (w->has_ts) {
		if (!sp->tsval_any && w->tsval != g->tsval)
			mismatch(m, cap, "TS val", w->tsval, g->tsval);
		if (!sp->tsecr_any && w->tsecr != g->tsecr)
			mismatch(m, cap, "TS ecr", w->tsecr, g->tsecr);
	}
	if (w->nsack != g->nsack) {
		mismatch(m, cap, "SACK blocks", w->nsack, g->nsack);
		return;
	}
	for (unsigned b = 0; b < w->nsack; b++)
		if (w->sack[b][0] != g->sack[b][0] || w->sack[b][1] != g->sack[b][1])
			opt_mismatch(m, cap, "SACK block differs");
}

static void compare(const struct tscript *t, const struct ts_spec *sp, const struct ts_seg *g,
		    char *m, size_t cap)
{
	const struct ts_seg *w = &sp->s;

	m[0] = 0;
	if ((w->flags & ~TH_PSH) != (g->flags & ~TH_PSH)) {
		char a[8], b[8];
		size_t n = strlen(m);

		fmt_flags(w->flags, a);
		fmt_flags(g->flags, b);
		snprintf(m + n, cap - n, "%sflags %s, got %s", n ? "; " : "", a, b);
	}
	if (!sp->seq_any && w->seq != g->seq)
		mismatch(m, cap, "seq", w->seq, g->seq);
	if (!sp->seq_any && w->len != g->len)
		mismatch(m, cap, "len", w->len, g->len);
	if (sp->ack_set && !sp->ack_any && (g->flags & TH_ACK) && w->ack != g->ack)
		mismatch(m, cap, "ack", w->ack, g->ack);
	if (sp->win_set && !sp->win_any && w->win != g->win)
		mismatch(m, cap, "win", w->win, g->win);
	if (sp->opts_set)
		compare_opts(sp, g, m, cap);
	if (t->check_payload && !m[0]) {
		uint32_t start = g->seq + !!(g->flags & TH_SYN);

		for (uint32_t i = 0; i < g->len; i++)
			if (g->payload[i] != ts_pattern(start + i)) {
				mismatch(m, cap, "payload byte at seq", start + i, start + i);
				break;
			}
	}
}

static void match_frame(struct tscript *t, const struct ts_ctx *c, struct ts_frame *f)
{
	struct ts_spec sp;
	struct ts_seg g;
	char why[256], got[256], m[512];

	parse_line(c, &sp);
	if (!f)
		fail_at(c, "expected this, but nothing was sent");
	if (!ts_decode(t, f->data, f->len, &g, why, sizeof(why))) {
		free(f);
		fail_at(c, "expected this, got %s", why);
	}
	compare(t, &sp, &g, m, sizeof(m));
	ts_format(&g, got, sizeof(got));
	t->last = g;
	t->last.payload = NULL;
	t->last_out_us = f->when_us;
	free(f);
	if (m[0])
		fail_at(c, "got `%s`: %s", got, m);
}

void ts_out_at(struct tscript *t, const char *file, int line, const char *fmt, ...)
{
	char text[512];
	struct ts_ctx c = { file, line, text };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	match_frame(t, &c, ts_pop(t));
}

void ts_none_at(struct tscript *t, const char *file, int line)
{
	struct ts_frame *f = ts_pop(t);
	struct ts_ctx c = { file, line, "(nothing)" };
	struct ts_seg g;
	char why[256], got[256];

	if (!f)
		return;
	if (ts_decode(t, f->data, f->len, &g, why, sizeof(why)))
		ts_format(&g, got, sizeof(got));
	else
		snprintf(got, sizeof(got), "%s", why);
	free(f);
	fail_at(&c, "expected no output, got `%s`", got);
}

/* ----------------------------------------------------------------- time */

/* Advance to the next timer or by at most limit_us; returns the step. */
static uint64_t step_time(struct tscript *t, uint64_t limit_us)
{
	uint64_t next = ns_stack_next_timer_us(t->st);
	uint64_t step = next < limit_us ? next : limit_us;

	ns_clock_advance(t->clk, step);
	ns_stack_poll(t->st);
	return step;
}

void ts_wait(struct tscript *t, uint64_t ms)
{
	uint64_t left = ms * 1000;
	unsigned spins = 0;

	ns_stack_poll(t->st);
	while (left) {
		uint64_t s = step_time(t, left);

		left -= s;
		/* A timer due "now" that never stops being due is a bug. */
		spins = s ? 0 : spins + 1;
		ck_assert_msg(spins < 10000, "a timer keeps firing without time passing");
	}
}

uint64_t ts_since_last_us(struct tscript *t)
{
	uint64_t ref = t->last_out_us > t->last_in_us ? t->last_out_us : t->last_in_us;

	return ns_clock_now(t->clk) - ref;
}

uint32_t ts_expect_segments(struct tscript *t, uint32_t from, unsigned n, uint32_t smss)
{
	for (unsigned i = 0; i < n; i++, from += smss)
		TS_OUT(t, ". %u:%u(%u) ack 1", from, from + smss, smss);
	return from;
}

bool ts_run_until_output(struct tscript *t, uint64_t deadline_us)
{
	uint64_t now = ns_clock_now(t->clk);
	unsigned spins = 0;

	ns_stack_poll(t->st);
	while (!t->qhead && now < deadline_us) {
		now += step_time(t, deadline_us - now);
		ck_assert_msg(++spins < 100000, "timers spin without time passing");
	}
	return t->qhead != NULL;
}

uint64_t ts_out_after_at(struct tscript *t, const char *file, int line, uint64_t min_ms,
			 uint64_t max_ms, const char *fmt, ...)
{
	char text[512];
	struct ts_ctx c = { file, line, text };
	uint64_t ref = t->last_out_us > t->last_in_us ? t->last_out_us : t->last_in_us;
	uint64_t el;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!ts_run_until_output(t, ref + max_ms * 1000))
		fail_at(&c, "expected this within %llu ms, nothing was sent",
			(unsigned long long)max_ms);
	el = (t->qhead->when_us - ref) / 1000;
	if (el < min_ms || (t->qhead->when_us - ref) > max_ms * 1000)
		fail_at(&c, "sent after %.3f ms, expected %llu..%llu ms",
			(double)(t->qhead->when_us - ref) / 1000, (unsigned long long)min_ms,
			(unsigned long long)max_ms);
	match_frame(t, &c, ts_pop(t));
	return el;
}

/* -------------------------------------------------------------- sockets */

struct ns_sock *ts_stream(struct tscript *t)
{
	int err = 0;
	struct ns_sock *s = ns_socket(t->st, NS_SOCK_STREAM, &err);

	ck_assert_msg(s != NULL, "ns_socket(STREAM): %s", strerror(-err));
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

void ts_bind_listen(struct tscript *t, struct ns_sock *s, uint16_t port, int backlog)
{
	struct ns_sockaddr a = ts_sockaddr(t, true, port);

	ck_assert_int_eq(ns_bind(s, &a), 0);
	ck_assert_int_eq(ns_listen(s, backlog), 0);
}

struct ns_sock *ts_listen(struct tscript *t, uint16_t port, int backlog)
{
	struct ns_sock *s = ts_stream(t);

	ts_bind_listen(t, s, port, backlog);
	return s;
}

struct ns_sock *ts_accept(struct tscript *t, struct ns_sock *listener)
{
	struct ns_sockaddr peer;
	int err = 0;
	struct ns_sock *s = ns_accept(listener, &peer, &err);

	ck_assert_msg(s != NULL, "ns_accept: %s", strerror(-err));
	ck_assert_msg(ts_is_peer(t, &peer), "accepted a connection from another address");
	ck_assert_uint_eq(peer.port, t->pport);
	ck_assert_int_eq(ns_setsockopt(s, NS_SO_NONBLOCK, 1), 0);
	return s;
}

struct ns_sock *ts_connect(struct tscript *t, uint16_t lport)
{
	struct ns_sock *s = ts_stream(t);
	struct ns_sockaddr r = ts_sockaddr(t, false, t->pport);
	int rc;

	if (lport) {
		struct ns_sockaddr a = ts_sockaddr(t, true, lport);

		ck_assert_int_eq(ns_bind(s, &a), 0);
	}
	ts_new_conn(t, lport, t->pport);
	rc = ns_connect(s, &r);
	ck_assert_msg(rc == -EINPROGRESS, "ns_connect: %d, expected -EINPROGRESS", rc);
	return s;
}

ssize_t ts_send(struct tscript *t, struct ns_sock *s, size_t len)
{
	uint8_t *buf = malloc(len ? len : 1);
	ssize_t n;

	ck_assert_ptr_nonnull(buf);
	for (size_t i = 0; i < len; i++)
		buf[i] = ts_pattern(1 + t->sent + (uint32_t)i);
	n = ns_send(s, buf, len, 0);
	if (n > 0)
		t->sent += (uint32_t)n;
	free(buf);
	return n;
}

void ts_recv_at(struct tscript *t, const char *file, int line, struct ns_sock *s,
		uint32_t from, size_t len)
{
	uint8_t *buf = malloc(len + 1);
	size_t got = 0;

	(void)t;
	ck_assert_ptr_nonnull(buf);
	while (got < len) {
		ssize_t n = ns_recv(s, buf + got, len - got, NS_MSG_DONTWAIT);

		if (n <= 0) {
			free(buf);
			ck_abort_msg("%s:%d: recv got %zu of %zu bytes, then %zd", file, line, got,
				     len, n);
		}
		got += (size_t)n;
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ts_pattern(from + (uint32_t)i)) {
			free(buf);
			ck_abort_msg("%s:%d: received byte %zu (seq %zu) is wrong", file, line, i,
				     from + i);
		}
	free(buf);
}

int ts_state(struct ns_sock *s)
{
	int v = -1;

	ck_assert_int_eq(ns_getsockopt(s, NS_TCP_STATE, &v), 0);
	return v;
}

/* ---------------------------------------------------------- handshakes */

struct ns_tcp_info ts_info(struct ns_sock *s)
{
	struct ns_tcp_info i;

	ck_assert_int_eq(ns_tcp_info(s, &i), 0);
	return i;
}

/* The option list the stack must answer a SYN offering peer_opts (with
 * TS val 100, if any) with. */
static void answer_opts(const char *peer_opts, char *buf, size_t cap)
{
	bool sack = strstr(peer_opts, "sackOK"), ts = strstr(peer_opts, "TS val");
	bool ws = strstr(peer_opts, "wscale");

	snprintf(buf, cap, "<mss *%s%s%s>", sack ? ",sackOK" : "", ts ? ",TS val * ecr 100" : "",
		 ws ? ",wscale *" : "");
}

static void peer_wait(struct tscript *t)
{
	if (t->hs_rtt_ms)
		ts_wait(t, t->hs_rtt_ms);
}

struct ns_sock *ts_passive_open_with(struct tscript *t, uint16_t lport,
				     struct ns_sock **listener, const char *peer_opts)
{
	struct ns_sock *l = ts_listen(t, lport, 8), *s;
	char want[128];
	bool ts = strstr(peer_opts, "TS val");

	ts_new_conn(t, lport, t->pport);
	t->ts_base_us = ns_clock_now(t->clk);
	TS_IN(t, "S 0:0(0) win 65535 <%s>", peer_opts);
	answer_opts(peer_opts, want, sizeof(want));
	TS_OUT(t, "S. 0:0(0) ack 1 win * %s", want);
	t->auto_ts = ts;
	peer_wait(t);
	t->peer_win = t->hs_win ? t->hs_win : 1024;
	TS_IN(t, ". 1:1(0) ack 1");
	s = ts_accept(t, l);
	TS_STATE(s, NS_TCP_ESTABLISHED);
	if (listener)
		*listener = l;
	else
		ns_close(l);
	return s;
}

struct ns_sock *ts_passive_open(struct tscript *t, uint16_t lport, struct ns_sock **listener)
{
	struct ns_sock *s = ts_passive_open_with(t, lport, listener,
						 "mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7");

	ck_assert_uint_eq(t->last.mss, 1460);
	return s;
}

struct ns_sock *ts_active_open_with(struct tscript *t, const char *peer_opts)
{
	struct ns_sock *s = ts_connect(t, 0);

	t->ts_base_us = ns_clock_now(t->clk);
	TS_OUT(t, "S 0:0(0) <mss 1460,sackOK,TS val * ecr 0,nop,wscale *>");
	peer_wait(t);
	TS_IN(t, "S. 0:0(0) ack 1 win 65535 <%s>", peer_opts);
	t->auto_ts = strstr(peer_opts, "TS val");
	TS_OUT(t, ". 1:1(0) ack 1 %s", t->auto_ts ? "<TS val * ecr 100>" : "<>");
	TS_STATE(s, NS_TCP_ESTABLISHED);
	t->peer_win = t->hs_win ? t->hs_win : 1024;
	return s;
}

struct ns_sock *ts_active_open(struct tscript *t)
{
	return ts_active_open_with(t, "mss 1460,sackOK,TS val 100 ecr *,nop,wscale 7");
}

void ts_save(const struct tscript *t, struct ts_conn *c)
{
	*c = (struct ts_conn){ .lport = t->lport,
			       .pport = t->pport,
			       .peer_win = t->peer_win,
			       .liss = t->liss,
			       .piss = t->piss,
			       .last_tsval = t->last_tsval,
			       .sent = t->sent,
			       .liss_known = t->liss_known,
			       .auto_ts = t->auto_ts,
			       .ts_base_us = t->ts_base_us };
}

void ts_restore(struct tscript *t, const struct ts_conn *c)
{
	t->lport = c->lport;
	t->pport = c->pport;
	t->peer_win = c->peer_win;
	t->liss = c->liss;
	t->piss = c->piss;
	t->last_tsval = c->last_tsval;
	t->sent = c->sent;
	t->liss_known = c->liss_known;
	t->auto_ts = c->auto_ts;
	t->ts_base_us = c->ts_base_us;
}

static void family_v4(void)
{
	ts_ipv6_default = false;
}

static void family_v6(void)
{
	ts_ipv6_default = true;
}

/* Each script once per family: TCP must not care which IP carries it. */
static TCase *family_case(const char *name, bool v6, const struct ts_case *cases, size_t n,
			  void (*setup)(void), void (*teardown)(void), int timeout_s)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, v6 ? family_v6 : family_v4, NULL);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, timeout_s);
	for (size_t i = 0; i < n; i++)
		if (cases[i].test && !(v6 && cases[i].v4_only))
			tcase_add_test(tc, *cases[i].test);
	return tc;
}

int ts_run_suite(const char *name, const struct ts_case *cases, size_t n, void (*setup)(void),
		 void (*teardown)(void), int timeout_s)
{
	Suite *s = suite_create(name);

	suite_add_tcase(s, family_case("ipv4", false, cases, n, setup, teardown, timeout_s));
	suite_add_tcase(s, family_case("ipv6", true, cases, n, setup, teardown, timeout_s));
	return check_run_suite(s);
}
