/* nat.c — the NAT flow table: a hash of (proto, guest, remote) keys with
 * an LRU list for idle expiry and a hard limit on entries. Entries are
 * embedded in the caller's flows, so the table itself never allocates
 * after init. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/internal.h"

static unsigned key_hash(const struct nat_key *k, unsigned nbuckets)
{
	uint64_t h = k->proto;

	/* Multiplicative mixing of the five fields; nbuckets is a power of 2. */
	h = (h ^ k->gaddr) * 0x9e3779b97f4a7c15ull;
	h = (h ^ k->raddr) * 0x9e3779b97f4a7c15ull;
	h = (h ^ ((uint32_t)k->gport << 16 | k->rport)) * 0x9e3779b97f4a7c15ull;
	if (k->v6)
		for (int i = 0; i < 16; i += 4) {
			uint32_t g, r;

			memcpy(&g, k->gaddr6 + i, 4);
			memcpy(&r, k->raddr6 + i, 4);
			h = (h ^ g ^ ((uint64_t)r << 32)) * 0x9e3779b97f4a7c15ull;
		}
	return (unsigned)(h >> 32) & (nbuckets - 1);
}

static bool key_eq(const struct nat_key *a, const struct nat_key *b)
{
	return a->proto == b->proto && a->gaddr == b->gaddr && a->raddr == b->raddr &&
	       a->gport == b->gport && a->rport == b->rport && a->v6 == b->v6 &&
	       (!a->v6 || (!memcmp(a->gaddr6, b->gaddr6, 16) && !memcmp(a->raddr6, b->raddr6, 16)));
}

int nat_table_init(struct nat_table *t, unsigned max)
{
	unsigned n = 64;

	memset(t, 0, sizeof(*t));
	while (n < max && n < (1u << 20))
		n <<= 1;
	t->buckets = calloc(n, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->nbuckets = n;
	t->max = max;
	t->lru.prev = t->lru.next = &t->lru;
	return 0;
}

void nat_table_destroy(struct nat_table *t)
{
	free(t->buckets);
	t->buckets = NULL;
}

struct nat_entry *nat_find(struct nat_table *t, const struct nat_key *k)
{
	struct nat_entry *e = t->buckets[key_hash(k, t->nbuckets)];

	while (e && !key_eq(&e->key, k))
		e = e->hnext;
	return e;
}

static void lru_unlink(struct nat_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_append(struct nat_table *t, struct nat_entry *e)
{
	e->prev = t->lru.prev;
	e->next = &t->lru;
	t->lru.prev->next = e;
	t->lru.prev = e;
}

int nat_insert(struct nat_table *t, struct nat_entry *e, uint64_t now_us)
{
	unsigned b = key_hash(&e->key, t->nbuckets);

	if (nat_find(t, &e->key))
		return -EEXIST;
	if (t->count >= t->max)
		return -ENOSPC;
	e->hnext = t->buckets[b];
	t->buckets[b] = e;
	e->last_us = now_us;
	lru_append(t, e);
	t->count++;
	return 0;
}

void nat_remove(struct nat_table *t, struct nat_entry *e)
{
	struct nat_entry **pp = &t->buckets[key_hash(&e->key, t->nbuckets)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (!*pp)
		return;
	*pp = e->hnext;
	lru_unlink(e);
	e->hnext = e->prev = e->next = NULL;
	t->count--;
}

void nat_touch(struct nat_table *t, struct nat_entry *e, uint64_t now_us)
{
	e->last_us = now_us;
	lru_unlink(e);
	lru_append(t, e);
}

struct nat_entry *nat_oldest(struct nat_table *t)
{
	return t->lru.next == &t->lru ? NULL : t->lru.next;
}
