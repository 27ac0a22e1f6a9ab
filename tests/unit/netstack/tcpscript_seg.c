/* tcpscript_seg.c — the segment-script harness's wire side: building a
 * TS_IN line's segment (options, payload pattern, checksum) and injecting
 * it, decoding a captured frame into relative numbers, and matching it
 * against a TS_OUT line with a readable message on a mismatch. Separate
 * from the parser (tcpscript_parse.c) and the rest (tcpscript.c). */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/internal.h"
#include "tests/unit/netstack/tcpscript_internal.h"

/* ------------------------------------------------------------- building */

static size_t put_opts(const struct ts_spec *sp, uint32_t last_tsval, uint32_t liss, uint8_t *o)
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

	ts_parse_line(c, &sp);
	if (sp.seq_any || sp.ack_any || sp.win_any || sp.mss_any || sp.ws_any || sp.tsval_any)
		ts_fail_at(c, "'*' only for TS ecr in TS_IN lines");
	if ((sp.s.flags & TH_ACK) && !sp.ack_set)
		ts_fail_at(c, "'.' needs an ack value");
	if ((sp.s.flags & TH_ACK) && !t->liss_known)
		ts_fail_at(c, "ack relative to the stack's ISN, which is not known yet");
	if (!sp.opts_set && t->auto_ts) {
		sp.s.has_ts = true;
		sp.s.tsval = auto_tsval(t);
		sp.tsecr_any = true;
		ts_add_order(&sp, OPT_NOP);
		ts_add_order(&sp, OPT_NOP);
		ts_add_order(&sp, OPT_TS);
	}
	memset(th, 0, sizeof(*th));
	optlen = put_opts(&sp, t->last_tsval, t->liss, l4 + sizeof(*th));
	if (optlen > 40)
		ts_fail_at(c, "options take %zu bytes (max 40)", optlen);
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
		ts_fail_at(c, "segment too long");
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
	struct ts_ctx c = {file, line, text};
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
	struct ts_ctx c = {file, line, text};
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
		snprintf(why, whylen,
			 "MSS/wscale/sackOK in a non-SYN segment (RFC 9293 3.7.1, "
			 "RFC 7323 2.2, RFC 2018 2)");
		return false;
	}
	if (t->auto_ts && !(s->flags & TH_RST) && !s->has_ts) {
		snprintf(why, whylen,
			 "no TS option although timestamps were negotiated "
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

		ts_fmt_flags(w->flags, a);
		ts_fmt_flags(g->flags, b);
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

void ts_match_frame(struct tscript *t, const struct ts_ctx *c, struct ts_frame *f)
{
	struct ts_spec sp;
	struct ts_seg g;
	char why[256], got[256], m[512];

	ts_parse_line(c, &sp);
	if (!f)
		ts_fail_at(c, "expected this, but nothing was sent");
	if (!ts_decode(t, f->data, f->len, &g, why, sizeof(why))) {
		free(f);
		ts_fail_at(c, "expected this, got %s", why);
	}
	compare(t, &sp, &g, m, sizeof(m));
	ts_format(&g, got, sizeof(got));
	t->last = g;
	t->last.payload = NULL;
	t->last_out_us = f->when_us;
	free(f);
	if (m[0])
		ts_fail_at(c, "got `%s`: %s", got, m);
}

void ts_out_at(struct tscript *t, const char *file, int line, const char *fmt, ...)
{
	char text[512];
	struct ts_ctx c = {file, line, text};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ts_match_frame(t, &c, ts_pop(t));
}

void ts_none_at(struct tscript *t, const char *file, int line)
{
	struct ts_frame *f = ts_pop(t);
	struct ts_ctx c = {file, line, "(nothing)"};
	struct ts_seg g;
	char why[256], got[256];

	if (!f)
		return;
	if (ts_decode(t, f->data, f->len, &g, why, sizeof(why)))
		ts_format(&g, got, sizeof(got));
	else
		snprintf(got, sizeof(got), "%s", why);
	free(f);
	ts_fail_at(&c, "expected no output, got `%s`", got);
}
