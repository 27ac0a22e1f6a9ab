/* telnet.c — the server side of telnet=on sockets: the option greeting
 * and the input filter that takes the client's commands out of the data. */
#include "vmm/chardev.h"

enum {
	IAC = 255,
	DONT = 254,
	DO = 253,
	WONT = 252,
	WILL = 251,
	SB = 250,
	SE = 240,
	OPT_BINARY = 0,
	OPT_ECHO = 1,
	OPT_SGA = 3,
};

const uint8_t telnet_greeting[12] = {IAC, WILL, OPT_ECHO,   IAC, WILL, OPT_SGA,
				     IAC, WILL, OPT_BINARY, IAC, DO,   OPT_BINARY};

size_t telnet_filter(struct telnet_state *t, uint8_t *buf, size_t len)
{
	size_t out = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t b = buf[i];

		if (t->skip) {
			t->skip--;
		} else if (t->iac) {
			t->iac = false;
			if (b == IAC && !t->sub)
				buf[out++] = IAC;
			else if (b >= WILL && b <= DONT)
				t->skip = 1; /* the option byte */
			else if (b == SB)
				t->sub = true;
			else if (b == SE)
				t->sub = false;
			/* any other command (NOP, AYT, BRK...) is dropped */
		} else if (b == IAC) {
			t->iac = true;
		} else if (!t->sub) {
			buf[out++] = b;
		}
	}
	return out;
}
