/* usernet.h — user-mode networking on netstack (issue 8): one public header.
 *
 * A backend that owns a virtual LAN (10.0.2.0/24 by default), takes and
 * emits Ethernet frames, and relays the guest's traffic to host sockets.
 * The API is filled in by the usernet work; this header is its seam.
 */
#ifndef USERNET_H
#define USERNET_H

/* netstack-host's --user-net mode (netstack/usernet/host.c): argc/argv are
 * netstack-host's own; returns the process exit status. */
int usernet_host_main(int argc, char **argv);

#endif /* USERNET_H */
