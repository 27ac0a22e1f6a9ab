/* base64.c — RFC 4648 base64, the alphabet with '+' and '/' and '='
 * padding, for QMP's format=base64. */
#include <string.h>

#include "vmm/control/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(const uint8_t *in, size_t len, char *out)
{
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		size_t left = len - i;

		if (left > 1)
			v |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			v |= in[i + 2];
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = left > 1 ? alphabet[v >> 6 & 63] : '=';
		*out++ = left > 2 ? alphabet[v & 63] : '=';
	}
	*out = 0;
}

/* A character's 6 bits, 64 for padding, -1 outside the alphabet. */
static int sextet(char ch)
{
	const char *p;

	if (ch == '=')
		return 64;
	p = ch ? strchr(alphabet, ch) : NULL;
	return p ? (int)(p - alphabet) : -1;
}

long base64_decode(const char *in, uint8_t *out)
{
	size_t len = strlen(in), n = 0;

	for (size_t i = 0; i < len; i++)
		if (sextet(in[i]) < 0)
			return -1;
	for (size_t i = 0; i + 4 <= len; i += 4) {
		int s[4];
		uint32_t v = 0;
		unsigned pad = 0;

		for (unsigned k = 0; k < 4; k++) {
			s[k] = sextet(in[i + k]);
			if (s[k] == 64)
				pad++;
			else if (pad) /* data after '=' */
				return -1;
			v = v << 6 | (uint32_t)(s[k] & 63);
		}
		if (pad > 2 || (pad && i + 4 != len)) /* '=' only ends the text */
			return -1;
		out[n++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[n++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[n++] = (uint8_t)v;
	}
	return (long)n;
}
