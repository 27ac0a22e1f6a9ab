/* host.c — netstack-host --user-net: serve a TAP device inside a network
 * namespace with usernet (placeholder until the usernet work lands). */
#include <stdio.h>

#include "netstack/usernet/usernet.h"

int usernet_host_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "netstack-host: --user-net is not implemented yet\n");
	return 1;
}
