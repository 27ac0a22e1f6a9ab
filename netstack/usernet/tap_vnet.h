/* tap_vnet.h — netstack-host's offloading TAP link (tap_vnet.c). */
#ifndef USERNET_TAP_VNET_H
#define USERNET_TAP_VNET_H

#include "netstack/netstack.h"

/* TAP with IFF_VNET_HDR, checksum and TSO4 offload; NULL with *err. */
struct ns_link *tap_vnet_open(const char *name, unsigned mtu, int *err);
/* Write the TCP segments coalesced so far (call after each loop round). */
void tap_vnet_flush(struct ns_link *l);

#endif
