/* tcp_opt.c — TCP option parsing and building (RFC 9293 3.2, RFC 7323,
 * RFC 2018). Layouts follow Linux's so traces look familiar. */
#include "netstack/tcp_internal.h"

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One option of known kind; false when its length is wrong for the kind.
 * Unknown kinds are skipped by the caller (RFC 9293 3.2: must be ignored). */
static bool opt_one(uint8_t kind, const uint8_t *v, size_t vlen, struct tcp_opts *o)
{
	switch (kind) {
	case TCPOPT_MSS:
		if (vlen != 2)
			return false;
		o->mss_ok = true;
		o->mss = (uint16_t)(v[0] << 8 | v[1]);
		return true;
	case TCPOPT_WS:
		if (vlen != 1)
			return false;
		o->ws_ok = true;
		o->ws = v[0] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : v[0]; /* RFC 7323 2.3 */
		return true;
	case TCPOPT_SACK_PERM:
		if (vlen != 0)
			return false;
		o->sack_perm = true;
		return true;
	case TCPOPT_TS:
		if (vlen != 8)
			return false;
		o->ts_ok = true;
		o->tsval = get32(v);
		o->tsecr = get32(v + 4);
		return true;
	case TCPOPT_SACK:
		if (vlen == 0 || vlen % 8 || vlen > 32)
			return false;
		o->nsack = (unsigned)(vlen / 8);
		for (unsigned i = 0; i < o->nsack; i++) {
			o->sack[i].start = get32(v + 8 * i);
			o->sack[i].end = get32(v + 8 * i + 4);
		}
		return true;
	default:
		return true;
	}
}

int tcp_opt_parse(const uint8_t *p, size_t len, struct tcp_opts *o)
{
	size_t i = 0;

	memset(o, 0, sizeof(*o));
	while (i < len) {
		uint8_t kind = p[i], olen;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -1;
		olen = p[i + 1];
		if (olen < 2 || i + olen > len)
			return -1;
		if (!opt_one(kind, p + i + 2, olen - 2u, o))
			return -1;
		i += olen;
	}
	return 0;
}

static size_t put_ts(uint8_t *p, uint32_t tsval, uint32_t tsecr)
{
	p[0] = TCPOPT_TS;
	p[1] = 10;
	put32(p + 2, tsval);
	put32(p + 6, tsecr);
	return 10;
}

size_t tcp_opt_build_syn(uint8_t *p, const struct tcp_syn_opts *so)
{
	size_t n = 0;

	p[n++] = TCPOPT_MSS;
	p[n++] = 4;
	p[n++] = (uint8_t)(so->mss >> 8);
	p[n++] = (uint8_t)so->mss;
	if (so->sack_perm && so->ts) {
		p[n++] = TCPOPT_SACK_PERM;
		p[n++] = 2;
	} else if (so->ts || so->sack_perm) {
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_NOP;
		if (so->sack_perm) {
			p[n++] = TCPOPT_SACK_PERM;
			p[n++] = 2;
		}
	}
	if (so->ts)
		n += put_ts(p + n, so->tsval, so->tsecr);
	if (so->ws >= 0) {
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_WS;
		p[n++] = 3;
		p[n++] = (uint8_t)so->ws;
	}
	return n;
}

size_t tcp_opt_build(uint8_t *p, bool ts, uint32_t tsval, uint32_t tsecr,
		     const struct tcp_sack_block *sack, unsigned nsack)
{
	size_t n = 0;

	if (ts) {
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_NOP;
		n += put_ts(p + n, tsval, tsecr);
	}
	if (nsack > (ts ? 3u : 4u))
		nsack = ts ? 3 : 4;
	if (nsack) {
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_NOP;
		p[n++] = TCPOPT_SACK;
		p[n++] = (uint8_t)(2 + 8 * nsack);
		for (unsigned i = 0; i < nsack; i++) {
			put32(p + n, sack[i].start);
			put32(p + n + 4, sack[i].end);
			n += 8;
		}
	}
	return n;
}
