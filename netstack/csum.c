/* csum.c — the Internet checksum (RFC 1071), summed 64 bits at a time. */
#include "netstack/internal.h"

uint32_t ns_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;

	/* One's-complement addition is byte-order independent (RFC 1071
	 * 2(B)), so add native-endian words and fold at the end. */
	while (len >= 32) {
		uint64_t w[4];

		memcpy(w, p, 32);
		for (int i = 0; i < 4; i++) {
			uint64_t lo = w[i] & 0xffffffffu, hi = w[i] >> 32;

			acc += lo + hi;
		}
		p += 32;
		len -= 32;
	}
	while (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		acc += w;
		p += 4;
		len -= 4;
	}
	while (len >= 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		uint16_t w = 0;

		memcpy(&w, p, 1); /* the pad byte is zero, in network order */
		acc += w;
	}
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t ns_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t ip_pseudo_csum_fold(uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
			     size_t len)
{
	uint32_t s = 0;
	uint16_t w[6];

	/* src, dst in network order; then zero, proto, length. */
	memcpy(&w[0], &src, 4);
	memcpy(&w[2], &dst, 4);
	w[4] = htons(proto);
	w[5] = htons((uint16_t)len);
	s = ns_csum_add(s, w, sizeof(w));
	return ns_csum_fold(ns_csum_add(s, l4, len));
}
