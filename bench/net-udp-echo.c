/* net-udp-echo.c — bench/virtio-net-udp.sh's host side: a UDP echo server
 * on 127.0.0.1 (port 0: any; the port is printed), answering in batches
 * (recvmmsg/sendmmsg) so it stays out of the figures of the VMMs it
 * serves. Runs until killed. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 64

int main(int argc, char **argv)
{
	static char buf[BATCH][2048];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
	struct sockaddr_in from[BATCH];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;

	a.sin_port = htons((unsigned short)(argc > 1 ? atoi(argv[1]) : 0));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		perror("net-udp-echo");
		return 1;
	}
	printf("%d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int n;

		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){buf[i], sizeof(buf[i])};
			m[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
						       .msg_namelen = sizeof(from[i]),
						       .msg_iov = &iov[i],
						       .msg_iovlen = 1};
		}
		n = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++)
			iov[i].iov_len = m[i].msg_len;
		sendmmsg(fd, m, (unsigned)n, 0);
	}
}
