/* arp.c — ARP (RFC 826): static and dynamic entries, request retries, a
 * bounded queue of packets waiting for resolution. */
#include <stdlib.h>

#include "netstack/internal.h"

enum { ARP_RETRY_US = 1000000, ARP_TRIES = 3 };

static void arp_tick(struct ns_stack *st, struct ns_timer *t);

void arp_init(struct ns_stack *st)
{
	timer_init(&st->arp_timer, arp_tick);
}

static void drop_pending(struct ns_stack *st, struct arp_entry *e)
{
	while (e->pending) {
		struct ns_pkt *p = e->pending;

		e->pending = p->next;
		pkt_free(st, p);
		st->stats.arp_drop_pending++;
	}
	e->npending = 0;
}

void arp_flush(struct ns_stack *st)
{
	for (unsigned i = 0; i < NS_ARP_SIZE; i++) {
		drop_pending(st, &st->arp[i]);
		st->arp[i].state = ARP_FREE;
	}
	timer_cancel(st, &st->arp_timer);
}

static struct arp_entry *arp_find(struct ns_stack *st, uint32_t addr)
{
	for (unsigned i = 0; i < NS_ARP_SIZE; i++)
		if (st->arp[i].state != ARP_FREE && st->arp[i].addr == addr)
			return &st->arp[i];
	return NULL;
}

/* A free slot, else the dynamic entry closest to expiry. */
static struct arp_entry *arp_slot(struct ns_stack *st)
{
	struct arp_entry *victim = NULL;

	for (unsigned i = 0; i < NS_ARP_SIZE; i++) {
		struct arp_entry *e = &st->arp[i];

		if (e->state == ARP_FREE)
			return e;
		if (e->state == ARP_OK && (!victim || e->expires < victim->expires))
			victim = e;
	}
	if (victim)
		drop_pending(st, victim);
	return victim;
}

static void arp_send(struct ns_stack *st, struct ns_iface *ifc, uint16_t op,
		     const uint8_t tha[6], uint32_t spa, uint32_t tpa)
{
	/* Own buffer: ARP may be sent while st->tx / st->frag hold a packet. */
	uint8_t frame[ETH_HLEN + 46];
	uint8_t *l3 = frame + ETH_HLEN;
	struct arp_pkt *a = (void *)l3;

	a->htype = htons(1);
	a->ptype = htons(ETHERTYPE_IP);
	a->hlen = 6;
	a->plen = 4;
	a->op = htons(op);
	memcpy(a->sha, ifc->link->mac, 6);
	a->spa = htonl(spa);
	memset(a->tha, 0, 6);
	if (tha)
		memcpy(a->tha, tha, 6);
	a->tpa = htonl(tpa);
	/* Pad to the 60-byte Ethernet minimum. */
	memset(l3 + sizeof(*a), 0, 46 - sizeof(*a));
	st->stats.arp_tx++;
	ether_output(st, ifc, op == 2 ? tha : NULL, ETHERTYPE_ARP, l3, 46);
}

static void arp_rearm(struct ns_stack *st)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < NS_ARP_SIZE; i++) {
		struct arp_entry *e = &st->arp[i];

		if ((e->state == ARP_PENDING || e->state == ARP_OK) && e->expires < next)
			next = e->expires;
	}
	if (next == UINT64_MAX)
		timer_cancel(st, &st->arp_timer);
	else
		timer_arm(st, &st->arp_timer, next);
}

static void arp_tick(struct ns_stack *st, struct ns_timer *t)
{
	for (unsigned i = 0; i < NS_ARP_SIZE; i++) {
		struct arp_entry *e = &st->arp[i];

		if (e->expires > st->now)
			continue;
		if (e->state == ARP_OK) {
			e->state = ARP_FREE;
		} else if (e->state == ARP_PENDING) {
			if (++e->tries >= ARP_TRIES) {
				drop_pending(st, e);
				e->state = ARP_FREE;
			} else {
				arp_send(st, e->ifc, 1, NULL, e->ifc->addr, e->addr);
				e->expires = st->now + ARP_RETRY_US;
			}
		}
	}
	arp_rearm(st);
}

static void arp_flush_pending(struct ns_stack *st, struct arp_entry *e)
{
	struct ns_pkt *p = e->pending;

	e->pending = NULL;
	e->npending = 0;
	while (p) {
		struct ns_pkt *n = p->next;

		/* p->data has ETH_HLEN of headroom in p->buf. */
		ether_output(st, e->ifc, e->mac, ETHERTYPE_IP, p->data, p->len);
		pkt_free(st, p);
		p = n;
	}
}

static void arp_learn(struct ns_stack *st, struct ns_iface *ifc, uint32_t addr,
		      const uint8_t mac[6], bool create)
{
	struct arp_entry *e = arp_find(st, addr);

	if (!e && !create)
		return;
	if (!e) {
		e = arp_slot(st);
		if (!e)
			return;
		e->pending = NULL;
		e->npending = 0;
	}
	if (e->state == ARP_STATIC)
		return;
	e->addr = addr;
	e->ifc = ifc;
	memcpy(e->mac, mac, 6);
	e->state = ARP_OK;
	e->expires = st->now + (uint64_t)st->arp_timeout_s * 1000000u;
	arp_flush_pending(st, e);
	arp_rearm(st);
}

static bool iface_owns(const struct ns_iface *ifc, uint32_t addr)
{
	if (addr == ifc->addr)
		return true;
	for (unsigned i = 0; i < ifc->naliases; i++)
		if (ifc->aliases[i] == addr)
			return true;
	return false;
}

void arp_input(struct ns_stack *st, struct ns_iface *ifc, const uint8_t *p, size_t len)
{
	struct arp_pkt a;
	uint32_t spa, tpa;
	bool for_us;

	if (len < sizeof(a)) {
		st->stats.rx_bad_eth++;
		return;
	}
	memcpy(&a, p, sizeof(a));
	if (ntohs(a.htype) != 1 || ntohs(a.ptype) != ETHERTYPE_IP || a.hlen != 6 || a.plen != 4 ||
	    (a.sha[0] & 1)) {
		st->stats.rx_bad_eth++;
		return;
	}
	st->stats.arp_rx++;
	spa = ntohl(a.spa);
	tpa = ntohl(a.tpa);
	for_us = iface_owns(ifc, tpa);
	/* RFC 826: update an existing entry always, create only if for us. */
	if (spa != 0)
		arp_learn(st, ifc, spa, a.sha, for_us);
	if (for_us && ntohs(a.op) == 1)
		arp_send(st, ifc, 2, a.sha, tpa, spa);
}

int arp_output(struct ns_stack *st, struct ns_iface *ifc, uint32_t next_hop, uint8_t *l3,
	       size_t l3len)
{
	struct arp_entry *e;
	struct ns_pkt *p;

	if (next_hop == 0xffffffffu || next_hop == (ifc->addr | ~ifc->mask))
		return ether_output(st, ifc, NULL, ETHERTYPE_IP, l3, l3len);
	e = arp_find(st, next_hop);
	if (e && (e->state == ARP_OK || e->state == ARP_STATIC))
		return ether_output(st, ifc, e->mac, ETHERTYPE_IP, l3, l3len);
	if (!e) {
		e = arp_slot(st);
		if (!e) {
			st->stats.arp_drop_pending++;
			return -EHOSTUNREACH;
		}
		e->state = ARP_PENDING;
		e->addr = next_hop;
		e->ifc = ifc;
		e->tries = 0;
		e->pending = NULL;
		e->npending = 0;
		e->expires = st->now + ARP_RETRY_US;
		arp_send(st, ifc, 1, NULL, ifc->addr, next_hop);
		arp_rearm(st);
	}
	if (e->npending >= NS_ARP_PENDING_MAX) {
		st->stats.arp_drop_pending++;
		return -ENOBUFS;
	}
	p = pkt_alloc(st, l3len + ETH_HLEN);
	if (!p)
		return -ENOMEM;
	p->data = p->buf + ETH_HLEN;
	p->len = l3len;
	memcpy(p->data, l3, l3len);
	/* append: keep the order packets were sent in */
	if (!e->pending) {
		e->pending = p;
	} else {
		struct ns_pkt *q = e->pending;

		while (q->next)
			q = q->next;
		q->next = p;
	}
	e->npending++;
	return 0;
}

int ns_arp_add_static(struct ns_stack *st, uint32_t addr, const uint8_t mac[6])
{
	struct arp_entry *e;
	int rc = 0;

	stack_enter(st);
	e = arp_find(st, addr);
	if (!e)
		e = arp_slot(st);
	if (!e) {
		rc = -ENOSPC;
	} else {
		uint32_t nh;
		struct ns_link *l;

		if (e->state == ARP_FREE) {
			e->pending = NULL;
			e->npending = 0;
		}
		e->addr = addr;
		memcpy(e->mac, mac, 6);
		e->state = ARP_STATIC;
		e->ifc = ns_route_lookup(st, addr, &nh, &l) == 0 ? iface_of_link(st, l) : NULL;
		if (!e->ifc && st->nifaces)
			e->ifc = &st->ifaces[0];
		if (e->ifc)
			arp_flush_pending(st, e);
	}
	stack_leave(st);
	return rc;
}

int ns_arp_lookup(struct ns_stack *st, uint32_t addr, uint8_t mac[6])
{
	struct arp_entry *e;
	int rc = -ENOENT;

	stack_enter(st);
	e = arp_find(st, addr);
	if (e && (e->state == ARP_OK || e->state == ARP_STATIC)) {
		memcpy(mac, e->mac, 6);
		rc = 0;
	}
	stack_leave(st);
	return rc;
}
