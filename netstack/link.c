/* link.c — the one seam between the stack and whatever carries frames. */
#include <stdio.h>
#include <stdlib.h>

#include "netstack/internal.h"

int ns_link_transmit(struct ns_link *l, const void *frame, size_t len)
{
	int rc;

	if (len < ETH_HLEN || len > NS_FRAME_MAX(l->mtu))
		return -EMSGSIZE;
	rc = l->ops->transmit(l, frame, len);
	if (rc < 0) {
		l->tx_errors++;
		return rc;
	}
	l->tx_frames++;
	l->tx_bytes += len;
	return 0;
}

ssize_t ns_link_receive(struct ns_link *l, void *buf, size_t cap)
{
	return l->ops->receive ? l->ops->receive(l, buf, cap) : 0;
}

int ns_link_fd(struct ns_link *l)
{
	return l->ops->fd ? l->ops->fd(l) : -1;
}

void ns_link_destroy(struct ns_link *l)
{
	if (!l)
		return;
	if (l->ops->destroy)
		l->ops->destroy(l);
	else
		free(l);
}

struct ns_link *ns_link_new(const struct ns_link_ops *ops, void *priv, unsigned mtu,
			    const uint8_t mac[6], const char *name)
{
	struct ns_link *l;

	if (!ops || !ops->transmit || mtu < 68 || mtu > 65521)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->ops = ops;
	l->priv = priv;
	l->mtu = mtu;
	if (mac)
		memcpy(l->mac, mac, 6);
	snprintf(l->name, sizeof(l->name), "%s", name ? name : "link");
	return l;
}
