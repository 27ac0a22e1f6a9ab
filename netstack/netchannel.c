/* netchannel.c — channels keyed by (proto, local, remote) in an AVL tree. */
#include <stdlib.h>

#include "netstack/internal.h"

static int key_cmp(const struct chan_key *a, const struct chan_key *b)
{
	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	if (a->laddr != b->laddr)
		return a->laddr < b->laddr ? -1 : 1;
	if (a->lport != b->lport)
		return a->lport < b->lport ? -1 : 1;
	if (a->raddr != b->raddr)
		return a->raddr < b->raddr ? -1 : 1;
	if (a->rport != b->rport)
		return a->rport < b->rport ? -1 : 1;
	return 0;
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
	st->chans = avl_insert(st->chans, ch);
	ch->in_tree = true;
	st->nchans++;
}

void chan_tree_remove(struct ns_stack *st, struct ns_chan *ch)
{
	if (!ch->in_tree)
		return;
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

struct ns_chan *chan_lookup(struct ns_stack *st, uint8_t proto, uint32_t laddr, uint16_t lport,
			    uint32_t raddr, uint16_t rport)
{
	const struct chan_key keys[] = {
		{ proto, laddr, raddr, lport, rport },
		{ proto, 0, raddr, lport, rport },
		{ proto, laddr, 0, lport, 0 },
		{ proto, 0, 0, lport, 0 },
		{ proto, 0, 0, 0, 0 },
	};

	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct ns_chan *ch = chan_tree_find(st, &keys[i]);

		if (ch && !ch->closed)
			return ch;
	}
	return NULL;
}

/* Is (proto, laddr, lport) bound by anyone (any remote)? */
bool chan_port_in_use(struct ns_stack *st, uint8_t proto, uint32_t laddr, uint16_t lport)
{
	struct chan_key lo = { proto, laddr, 0, lport, 0 };
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
	if (best && best->key.proto == proto && best->key.laddr == laddr &&
	    best->key.lport == lport)
		return true;
	return laddr != 0 && chan_port_in_use(st, proto, 0, lport);
}

uint16_t chan_ephemeral_port(struct ns_stack *st, uint8_t proto, uint32_t laddr)
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

ssize_t chan_sendto_locked(struct ns_chan *ch, const void *buf, size_t len,
			   const struct ns_pktinfo *info)
{
	struct ns_stack *st = ch->st;
	uint32_t src = info->src.addr ? info->src.addr : ch->key.laddr;
	uint16_t sport = info->src.port ? info->src.port : ch->key.lport;
	int rc;

	if (!info->dst.addr)
		return -EDESTADDRREQ;
	if (ch->key.proto == NS_PROTO_UDP) {
		rc = udp_output(st, src, sport, info->dst.addr, info->dst.port, buf, len);
	} else if (ch->key.proto == NS_PROTO_ICMP) {
		uint8_t *msg = st->tx + NS_HEADROOM;
		struct icmp_hdr *h = (void *)msg;

		if (len < sizeof(*h) || len > 65535 - 20)
			return -EINVAL;
		memcpy(msg, buf, len);
		h->csum = 0;
		h->csum = (uint16_t)~ns_csum_fold(ns_csum_add(0, msg, len));
		st->stats.icmp_tx++;
		if (!src)
			src = iface_src_for(st, info->dst.addr);
		rc = ip_output(st, src, info->dst.addr, NS_PROTO_ICMP, info->ttl, info->tos, msg,
			       len, false);
	} else {
		return -EOPNOTSUPP;
	}
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
	struct chan_key k = { 0 };
	struct ns_chan *ch = NULL;
	int e = 0;

	if (proto != NS_PROTO_UDP && proto != NS_PROTO_ICMP) {
		*err = -EPROTONOSUPPORT;
		return NULL;
	}
	k.proto = (uint8_t)proto;
	if (local) {
		k.laddr = local->addr;
		k.lport = local->port;
	}
	if (remote) {
		k.raddr = remote->addr;
		k.rport = remote->port;
	}
	stack_enter(st);
	if (k.laddr && !iface_is_local(st, k.laddr))
		e = -EADDRNOTAVAIL;
	/* Port 0 is ephemeral, except for the catch-all {0, 0} with no remote. */
	else if (!k.lport && proto == NS_PROTO_UDP && (k.laddr || k.raddr || k.rport) &&
		 !(k.lport = chan_ephemeral_port(st, k.proto, k.laddr)))
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

	info.dst.addr = ch->key.raddr;
	info.dst.port = ch->key.rport;
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
