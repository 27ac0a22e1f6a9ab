/* tcp_sack.c — sequence range sets: the receiver's out-of-order map
 * (which parts of the window hold data, and the SACK blocks it yields,
 * RFC 2018) and the sender's SACK scoreboard (RFC 6675). Both are small
 * sorted arrays of disjoint ranges; every operation is O(ranges). */
#include "netstack/tcp_internal.h"

/* Insert [start, end) into the sorted set r, merging what it overlaps or
 * touches. *bytes tracks the covered total. false when a new range is
 * needed and the table is full. */
static bool ranges_add(struct seq_range *r, unsigned *n, unsigned max, uint32_t start,
		       uint32_t end, uint32_t stamp, uint32_t *bytes)
{
	unsigned i = 0, j;
	uint32_t old = 0;

	while (i < *n && SEQ_LT(r[i].end, start))
		i++;
	if (i == *n || SEQ_LT(end, r[i].start)) {
		if (*n == max)
			return false;
		memmove(&r[i + 1], &r[i], (*n - i) * sizeof(*r));
		r[i] = (struct seq_range){ start, end, stamp };
		(*n)++;
		*bytes += end - start;
		return true;
	}
	start = seq_min(start, r[i].start);
	for (j = i; j < *n && SEQ_LEQ(r[j].start, end); j++) {
		end = seq_max(end, r[j].end);
		old += r[j].end - r[j].start;
	}
	r[i] = (struct seq_range){ start, end, stamp };
	memmove(&r[i + 1], &r[j], (*n - j) * sizeof(*r));
	*n -= j - i - 1;
	*bytes += (end - start) - old;
	return true;
}

/* Drop everything below seq from the set; returns the bytes removed. */
static uint32_t ranges_trim(struct seq_range *r, unsigned *n, uint32_t seq)
{
	unsigned i = 0;
	uint32_t gone = 0;

	while (i < *n && SEQ_LEQ(r[i].end, seq))
		gone += r[i].end - r[i].start, i++;
	memmove(r, &r[i], (*n - i) * sizeof(*r));
	*n -= i;
	if (*n && SEQ_LT(r[0].start, seq)) {
		gone += seq - r[0].start;
		r[0].start = seq;
	}
	return gone;
}

/* ------------------------------------------------------------ receiver */

bool ooo_add(struct tcb *t, uint32_t start, uint32_t end)
{
	uint32_t before = t->ooo_bytes;

	if (!ranges_add(t->ooo, &t->nooo, TCP_OOO_MAX, start, end, ++t->ooo_stamp,
			&t->ooo_bytes))
		return false;
	t->st->stats.ooo_mem += t->ooo_bytes - before;
	return true;
}

uint32_t ooo_absorb(struct tcb *t, uint32_t rcv_nxt)
{
	while (t->nooo && SEQ_LEQ(t->ooo[0].start, rcv_nxt)) {
		uint32_t len = t->ooo[0].end - t->ooo[0].start;

		rcv_nxt = seq_max(rcv_nxt, t->ooo[0].end);
		t->ooo_bytes -= len;
		t->st->stats.ooo_mem -= len;
		memmove(t->ooo, t->ooo + 1, (--t->nooo) * sizeof(t->ooo[0]));
	}
	return rcv_nxt;
}

void ooo_clear(struct tcb *t)
{
	t->st->stats.ooo_mem -= t->ooo_bytes;
	t->ooo_bytes = 0;
	t->nooo = 0;
	t->ooo_fin = false;
}

unsigned sack_blocks(const struct tcb *t, struct tcp_sack_block *out, unsigned max)
{
	bool used[TCP_OOO_MAX] = { false };
	unsigned n = 0;

	/* RFC 2018 4: the first block holds the latest segment, the others
	 * repeat the most recently reported ones. */
	while (n < max && n < t->nooo) {
		unsigned best = TCP_OOO_MAX;

		for (unsigned i = 0; i < t->nooo; i++)
			if (!used[i] && (best == TCP_OOO_MAX ||
					 SEQ_GT(t->ooo[i].stamp, t->ooo[best].stamp)))
				best = i;
		used[best] = true;
		out[n].start = t->ooo[best].start;
		out[n].end = t->ooo[best].end;
		n++;
	}
	return n;
}

/* -------------------------------------------------------------- sender */

void sb_update(struct tcb *t, const struct tcp_opts *o)
{
	uint32_t bytes = 0;

	for (unsigned i = 0; i < o->nsack; i++) {
		uint32_t s = o->sack[i].start, e = o->sack[i].end;

		/* Ignore blocks that are empty, below snd_una (D-SACK) or
		 * beyond what we sent: they carry no loss information. */
		if (!SEQ_LT(s, e) || SEQ_LEQ(e, t->snd_una) || SEQ_GT(e, t->snd_max))
			continue;
		s = seq_max(s, t->snd_una);
		ranges_add(t->sacked, &t->nsacked, TCP_SACKB_MAX, s, e, 0, &bytes);
	}
}

void sb_trim(struct tcb *t)
{
	ranges_trim(t->sacked, &t->nsacked, t->snd_una);
}

void sb_clear(struct tcb *t)
{
	t->nsacked = 0;
}

uint32_t sb_sacked_bytes(const struct tcb *t)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < t->nsacked; i++)
		n += t->sacked[i].end - t->sacked[i].start;
	return n;
}

uint32_t sb_sacked_below(const struct tcb *t, uint32_t seq)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < t->nsacked && SEQ_LT(t->sacked[i].start, seq); i++)
		n += seq_min(t->sacked[i].end, seq) - t->sacked[i].start;
	return n;
}

bool sb_reneged(const struct tcb *t)
{
	/* A receiver holding the SACKed block that starts at snd_una would
	 * have acknowledged past it (Linux's test, too). */
	return t->nsacked && t->sacked[0].start == t->snd_una;
}

uint32_t sb_lost_edge(const struct tcb *t)
{
	uint32_t above = 0;

	/* Walking down from the highest block: every hole below the block
	 * where DupThresh blocks or more than (DupThresh-1)*SMSS bytes are
	 * SACKed above is lost. */
	for (unsigned k = 0; k < t->nsacked; k++) {
		const struct seq_range *r = &t->sacked[t->nsacked - 1 - k];

		above += r->end - r->start;
		if (above > (t->dupthresh - 1) * tcp_smss(t) || k + 1 >= t->dupthresh)
			return r->start;
	}
	return t->snd_una;
}

bool sb_next_hole(const struct tcb *t, uint32_t seq, uint32_t limit, uint32_t *start,
		  uint32_t *end)
{
	for (unsigned i = 0; i < t->nsacked; i++) {
		const struct seq_range *r = &t->sacked[i];

		if (SEQ_LEQ(r->end, seq))
			continue;
		if (SEQ_LEQ(r->start, seq)) {
			seq = r->end;
			continue;
		}
		if (SEQ_GEQ(seq, limit))
			return false;
		*start = seq;
		*end = seq_min(r->start, limit);
		return true;
	}
	if (SEQ_GEQ(seq, limit))
		return false;
	*start = seq;
	*end = limit;
	return true;
}
