/* netchannel.c — channels keyed by (proto, local, remote) in an AVL tree. */
#include <stdlib.h>

#include "netstack/internal.h"

/* Any total order will do; the last word first because it is the one
 * that tells IPv4 addresses apart (the rest is the ::ffff: prefix). :: is
 * the smallest address, so a bound key with a wildcard remote is the
 * smallest of its (proto, laddr, lport) group. */
static inline int addr_cmp(const struct ipaddr *a, const struct ipaddr *b)
{
	for (int i = 3; i >= 0; i--)
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	return 0;
}

static inline int key_cmp(const struct chan_key *a, const struct chan_key *b)
{
	int c;

	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	if ((c = addr_cmp(&a->laddr, &b->laddr)))
		return c;
	if (a->lport != b->lport)
		return a->lport < b->lport ? -1 : 1;
	if ((c = addr_cmp(&a->raddr, &b->raddr)))
		return c;
	if (a->rport != b->rport)
		return a->rport < b->rport ? -1 : 1;
	return 0;
}

int chan_key_cmp(const struct chan_key *a, const struct chan_key *b)
{
	return key_cmp(a, b);
}

static int height(const struct ns_chan *n)
{
	return n ? n->height : 0;
}

static void fix_height(struct ns_chan *n)
{
	int l = height(n->left), r = height(n->right);

	n->height = (l > r ? l : r) + 1;
}

static struct ns_chan *rotate_right(struct ns_chan *n)
{
	struct ns_chan *l = n->left;

	n->left = l->right;
	l->right = n;
	fix_height(n);
	fix_height(l);
	return l;
}

static struct ns_chan *rotate_left(struct ns_chan *n)
{
	struct ns_chan *r = n->right;

	n->right = r->left;
	r->left = n;
	fix_height(n);
	fix_height(r);
	return r;
}

static struct ns_chan *rebalance(struct ns_chan *n)
{
	int bal;

	fix_height(n);
	bal = height(n->left) - height(n->right);
	if (bal > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (bal < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	return n;
}

static struct ns_chan *avl_insert(struct ns_chan *root, struct ns_chan *n)
{
	if (!root) {
		n->left = n->right = NULL;
		n->height = 1;
		return n;
	}
	if (key_cmp(&n->key, &root->key) < 0)
		root->left = avl_insert(root->left, n);
	else
		root->right = avl_insert(root->right, n);
	return rebalance(root);
}

static struct ns_chan *avl_remove_min(struct ns_chan *n, struct ns_chan **min)
{
	if (!n->left) {
		*min = n;
		return n->right;
	}
	n->left = avl_remove_min(n->left, min);
	return rebalance(n);
}

static struct ns_chan *avl_remove(struct ns_chan *root, struct ns_chan *n)
{
	int c;

	if (!root)
		return NULL;
	c = key_cmp(&n->key, &root->key);
	if (root == n) {
		struct ns_chan *min;

		if (!n->right)
			return n->left;
		n->right = avl_remove_min(n->right, &min);
		min->left = n->left;
		min->right = n->right;
		return rebalance(min);
	}
	/* Equal keys never coexist, but walk by key all the same. */
	if (c < 0)
		root->left = avl_remove(root->left, n);
	else
		root->right = avl_remove(root->right, n);
	return rebalance(root);
}

void chan_tree_insert(struct ns_stack *st, struct ns_chan *ch)
{
	st->lk_ch = NULL; /* a new key may now be the better match */
	st->chans = avl_insert(st->chans, ch);
	ch->in_tree = true;
	st->nchans++;
}

void chan_tree_remove(struct ns_stack *st, struct ns_chan *ch)
{
	if (!ch->in_tree)
		return;
	st->lk_ch = NULL;
	st->chans = avl_remove(st->chans, ch);
	ch->in_tree = false;
	st->nchans--;
}

struct ns_chan *chan_tree_find(struct ns_stack *st, const struct chan_key *k)
{
	struct ns_chan *n = st->chans;

	while (n) {
		int c = key_cmp(k, &n->key);

		if (c == 0)
			return n;
		n = c < 0 ? n->left : n->right;
	}
	return NULL;
}

static int check(const struct ns_chan *n, const struct chan_key *lo, const struct chan_key *hi)
{
	int l, r;

	if (!n)
		return 0;
	if ((lo && key_cmp(&n->key, lo) <= 0) || (hi && key_cmp(&n->key, hi) >= 0))
		return -1;
	l = check(n->left, lo, &n->key);
	r = check(n->right, &n->key, hi);
	if (l < 0 || r < 0 || l - r > 1 || r - l > 1 || n->height != (l > r ? l : r) + 1)
		return -1;
	return n->height;
}

int chan_tree_check(struct ns_stack *st)
{
	return check(st->chans, NULL, NULL);
}

static struct ns_chan *find_open(struct ns_stack *st, const struct chan_key *k)
{
	struct ns_chan *ch = chan_tree_find(st, k);

	return ch && !ch->closed ? ch : NULL;
}

static struct ns_chan *chan_lookup_walk(struct ns_stack *st, const struct chan_key *kp);

struct ns_chan *chan_lookup(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr,
			    uint16_t lport, const struct ipaddr *raddr, uint16_t rport)
{
	struct chan_key k = { proto, *laddr, *raddr, lport, rport };
	struct ns_chan *ch;

	/* The same packet's answer as last time: a flow's packets come in
	 * trains (any change to the tree forgets it). */
	if (st->lk_ch && !key_cmp(&k, &st->lk_key))
		return st->lk_ch;
	ch = chan_lookup_walk(st, &k);
	if (ch) {
		st->lk_key = k;
		st->lk_ch = ch;
	}
	return ch;
}

static struct ns_chan *chan_lookup_walk(struct ns_stack *st, const struct chan_key *kp)
{
	const uint8_t proto = kp->proto;
	const struct ipaddr *laddr = &kp->laddr, *raddr = &kp->raddr;
	const uint16_t lport = kp->lport, rport = kp->rport;
	struct ipaddr any, any6 = { { 0, 0, 0, 0 } };
	struct ns_chan *ch;

	/* The exact key first, alone: established flows, the hot path. */
	if ((ch = find_open(st, kp)))
		return ch;
	any = ipa_any_like(laddr);
	const struct chan_key keys[] = {
		{ proto, any, *raddr, lport, rport },
		{ proto, *laddr, any, lport, 0 },
		{ proto, any, any, lport, 0 },
		/* IPv4 reaches dual-stack (IPv6 any) listeners too */
		{ proto, any6, any6, lport, 0 },
		{ proto, any, any, 0, 0 },
	};

	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (i == 3 && !ipa_is_v4(laddr))
			continue; /* same as key 2 for IPv6 */
		if ((ch = find_open(st, &keys[i])))
			return ch;
	}
	return NULL;
}

/* Is (proto, laddr, lport) bound by anyone (any remote)? */
static bool port_bound(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr,
		       uint16_t lport)
{
	const struct ipaddr zero = { { 0, 0, 0, 0 } };
	struct chan_key lo = { proto, *laddr, zero, lport, 0 };
	struct ns_chan *n = st->chans, *best = NULL;

	/* Smallest key >= lo; any key with the same (proto, laddr, lport). */
	while (n) {
		if (key_cmp(&n->key, &lo) >= 0) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best && best->key.proto == proto && ipa_eq(&best->key.laddr, laddr) &&
	       best->key.lport == lport;
}

/* The port is taken for laddr: by laddr itself, by its family's any, and
 * between IPv4 any and the dual-stack :: both ways. */
bool chan_port_in_use(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr,
		      uint16_t lport)
{
	const struct ipaddr zero = { { 0, 0, 0, 0 } }, any4 = ipa_v4(0);
	const struct ipaddr any = ipa_any_like(laddr);

	if (port_bound(st, proto, laddr, lport))
		return true;
	if (!ipa_is_any(laddr))
		return chan_port_in_use(st, proto, &any, lport);
	return port_bound(st, proto, ipa_is_v4(laddr) ? &zero : &any4, lport);
}

uint16_t chan_ephemeral_port(struct ns_stack *st, uint8_t proto, const struct ipaddr *laddr)
{
	for (unsigned i = 0; i < 16384; i++) {
		uint16_t p = st->next_port;

		st->next_port = p >= 65535 ? 49152 : p + 1;
		if (!chan_port_in_use(st, proto, laddr, p))
			return p;
	}
	return 0;
}

struct ns_chan *chan_new(struct ns_stack *st, const struct chan_key *k)
{
	struct ns_chan *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->key = *k;
	ch->st = st;
	ch->qmax = 256;
	waitq_init(&ch->own_wq);
	ch->wq = &ch->own_wq;
	return ch;
}

void chan_free(struct ns_stack *st, struct ns_chan *ch)
{
	chan_tree_remove(st, ch);
	while (ch->qhead) {
		struct ns_pkt *p = ch->qhead;

		ch->qhead = p->next;
		pkt_free(st, p);
	}
	waitq_destroy(st, &ch->own_wq);
	free(ch);
}

bool chan_deliver(struct ns_stack *st, struct ns_chan *ch, const void *data, size_t len,
		  const struct ns_pktinfo *info)
{
	struct ns_pkt *p;

	if (ch->qlen >= ch->qmax)
		return false;
	p = pkt_alloc(st, len);
	if (!p)
		return false;
	memcpy(p->data, data, len);
	p->info = *info;
	if (ch->qtail)
		ch->qtail->next = p;
	else
		ch->qhead = p;
	ch->qtail = p;
	ch->qlen++;
	waitq_notify(st, ch->wq);
	return true;
}

ssize_t chan_recv_locked(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info,
			 bool peek)
{
	struct ns_pkt *p = ch->qhead;
	size_t len;

	if (!p)
		return -EAGAIN;
	len = p->len;
	memcpy(buf, p->data, len < cap ? len : cap);
	if (info)
		*info = p->info;
	if (peek)
		return (ssize_t)len;
	ch->qhead = p->next;
	if (!ch->qhead)
		ch->qtail = NULL;
	ch->qlen--;
	pkt_free(ch->st, p);
	if (!ch->qhead)
		waitq_clear_fd(ch->wq);
	return (ssize_t)len;
}

/* The source of a datagram to dst: info's, else the channel's, when of
 * dst's family; "any" lets the output path choose. */
static struct ipaddr send_src(const struct ns_chan *ch, const struct ns_pktinfo *info,
			      const struct ipaddr *dst)
{
	struct ipaddr src = ipa_from_sa(&info->src);

	if (ipa_is_any(&src) || ipa_is_v4(&src) != ipa_is_v4(dst))
		src = ch->key.laddr;
	if (ipa_is_v4(&src) != ipa_is_v4(dst))
		src = ipa_any_like(dst);
	return src;
}

static int icmp_chan_send(struct ns_stack *st, const struct ipaddr *src,
			  const struct ipaddr *dst, const void *buf, size_t len,
			  const struct ns_pktinfo *info)
{
	uint8_t *msg = st->tx + NS_HEADROOM;
	struct icmp_hdr *h = (void *)msg;
	struct ipaddr s = *src;
	uint8_t proto = ipa_is_v4(dst) ? NS_PROTO_ICMP : NS_PROTO_ICMPV6;

	if (len < sizeof(*h) || len > 65535 - 40)
		return -EINVAL;
	if (ipa_is_any(&s) && ipa_src_for(st, dst, &s) < 0)
		return -ENETUNREACH;
	memcpy(msg, buf, len);
	h->csum = 0;
	if (proto == NS_PROTO_ICMP) {
		h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, msg, len));
		st->stats.icmp_tx++;
	} else {
		h->csum = (uint16_t)~ipa_pseudo_csum_fold_sum(&s, dst, proto, msg, len, len, 0);
		st->stats.icmp6_tx++;
	}
	return ipa_output(st, &s, dst, proto, info->ttl, info->tos, msg, len, false);
}

ssize_t chan_sendto_locked(struct ns_chan *ch, const void *buf, size_t len,
			   const struct ns_pktinfo *info)
{
	struct ns_stack *st = ch->st;
	struct ipaddr dst = ipa_from_sa(&info->dst), src;
	uint16_t sport = info->src.port ? info->src.port : ch->key.lport;
	int rc;

	if (ipa_is_any(&dst))
		return -EDESTADDRREQ;
	src = send_src(ch, info, &dst);
	if (ch->key.proto == NS_PROTO_UDP)
		rc = udp_output(st, &src, sport, &dst, info->dst.port, buf, len);
	else if (ch->key.proto == NS_PROTO_ICMP || ch->key.proto == NS_PROTO_ICMPV6)
		rc = icmp_chan_send(st, &src, &dst, buf, len, info);
	else
		return -EOPNOTSUPP;
	return rc < 0 ? rc : (ssize_t)len;
}

void chan_close_locked(struct ns_chan *ch)
{
	ch->closed = true;
	chan_free(ch->st, ch);
}

/* ---------------------------------------------------------------- public */

struct ns_chan *ns_chan_create(struct ns_stack *st, int proto, const struct ns_sockaddr *local,
			       const struct ns_sockaddr *remote, int *err)
{
	const struct ns_sockaddr none = { 0 };
	struct chan_key k = { 0 };
	struct ns_chan *ch = NULL;
	int e = 0;

	if (proto != NS_PROTO_UDP && proto != NS_PROTO_ICMP && proto != NS_PROTO_ICMPV6) {
		*err = -EPROTONOSUPPORT;
		return NULL;
	}
	k.proto = (uint8_t)proto;
	/* Without a local address the family is the remote's (or IPv6 for
	 * ICMPv6); a missing remote is the local family's any. */
	if (!local && remote)
		k.laddr = ipa_any_like((struct ipaddr[]){ ipa_from_sa(remote) });
	else
		k.laddr = ipa_from_sa(local ? local : &none);
	if (proto == NS_PROTO_ICMPV6 && ipa_is_v4(&k.laddr))
		memset(&k.laddr, 0, sizeof(k.laddr));
	k.lport = local ? local->port : 0;
	k.raddr = remote ? ipa_from_sa(remote) : ipa_any_like(&k.laddr);
	k.rport = remote ? remote->port : 0;
	stack_enter(st);
	if (ipa_is_v4(&k.laddr) != ipa_is_v4(&k.raddr))
		e = -EAFNOSUPPORT;
	else if (!ipa_is_any(&k.laddr) && !ipa_is_local(st, &k.laddr))
		e = -EADDRNOTAVAIL;
	/* Port 0 is ephemeral, except for the catch-all {0, 0} with no remote. */
	else if (!k.lport && proto == NS_PROTO_UDP &&
		 (!ipa_is_any(&k.laddr) || !ipa_is_any(&k.raddr) || k.rport) &&
		 !(k.lport = chan_ephemeral_port(st, k.proto, &k.laddr)))
		e = -EADDRINUSE;
	else if (chan_tree_find(st, &k))
		e = -EADDRINUSE;
	else if (!(ch = chan_new(st, &k)))
		e = -ENOMEM;
	else
		chan_tree_insert(st, ch);
	stack_leave(st);
	*err = e;
	return ch;
}

ssize_t ns_chan_sendto(struct ns_chan *ch, const void *buf, size_t len,
		       const struct ns_pktinfo *info)
{
	ssize_t rc;

	stack_enter(ch->st);
	rc = chan_sendto_locked(ch, buf, len, info);
	stack_leave(ch->st);
	return rc;
}

ssize_t ns_chan_send(struct ns_chan *ch, const void *buf, size_t len)
{
	struct ns_pktinfo info = { 0 };

	ipa_to_sa(&ch->key.raddr, ch->key.rport, &info.dst);
	return ns_chan_sendto(ch, buf, len, &info);
}

ssize_t ns_chan_recv(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info,
		     int timeout_ms)
{
	struct ns_stack *st = ch->st;
	ssize_t rc;

	stack_enter(st);
	while ((rc = chan_recv_locked(ch, buf, cap, info, false)) == -EAGAIN && timeout_ms != 0) {
		if (waitq_wait(st, ch->wq, timeout_ms) == -ETIMEDOUT) {
			rc = chan_recv_locked(ch, buf, cap, info, false);
			break;
		}
	}
	stack_leave(st);
	return rc;
}

ssize_t ns_chan_recv_nb(struct ns_chan *ch, void *buf, size_t cap, struct ns_pktinfo *info)
{
	return ns_chan_recv(ch, buf, cap, info, 0);
}

int ns_chan_fd(struct ns_chan *ch)
{
	int fd;

	stack_enter(ch->st);
	fd = waitq_fd(ch->wq);
	if (!ch->qhead)
		waitq_clear_fd(ch->wq);
	stack_leave(ch->st);
	return fd;
}

void ns_chan_set_queue_max(struct ns_chan *ch, unsigned max)
{
	stack_enter(ch->st);
	ch->qmax = max ? max : 1;
	stack_leave(ch->st);
}

void ns_chan_close(struct ns_chan *ch)
{
	struct ns_stack *st;

	if (!ch)
		return;
	st = ch->st;
	stack_enter(st);
	chan_close_locked(ch);
	stack_leave(st);
}
