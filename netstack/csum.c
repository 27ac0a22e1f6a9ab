/* csum.c — the Internet checksum (RFC 1071): 64-bit one's-complement
 * adds with the carry folded back in (an add-with-carry chain on x86-64,
 * as Linux's csum_partial; long runs vectorized), and a copy that
 * checksums in the same pass (Linux's csum_partial_copy) for data that is
 * copied anyway. */
#include "netstack/internal.h"

/* One's-complement addition is byte-order independent (RFC 1071 2(B)),
 * so native-endian words are added and folded at the end. */
static inline uint64_t add_carry(uint64_t a, uint64_t b)
{
	uint64_t s = a + b;

	return s + (s < b); /* the end-around carry; cannot carry again */
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
	return w;
}

/* Long runs (>= 4 KiB): 32-bit halves added into one 64-bit sum (no
 * carries to fold until the end), a loop the compiler vectorizes. There
 * it beats the add-with-carry chain, which one carry flag limits to 8
 * bytes a cycle (on this host 33 against 26 GB/s at 64 KiB); below, the
 * chain wins (32 against 29 GB/s at 1.5 KiB). Not inlined: inlined, gcc
 * 12 vectorizes it worse (27 GB/s). */
enum { WIDE_MIN = 4096 };

static __attribute__((noinline)) uint64_t sum_wide(uint64_t acc, const uint8_t *p, size_t len)
{
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
	return acc;
}

/* acc plus the 64-byte blocks at p. */
static uint64_t sum_blocks(uint64_t acc, const uint8_t *p, size_t blocks)
{
#if defined(__x86_64__)
	for (; blocks; blocks--, p += 64)
		__asm__("addq 0(%[p]), %[a]\n\t"
			"adcq 8(%[p]), %[a]\n\t"
			"adcq 16(%[p]), %[a]\n\t"
			"adcq 24(%[p]), %[a]\n\t"
			"adcq 32(%[p]), %[a]\n\t"
			"adcq 40(%[p]), %[a]\n\t"
			"adcq 48(%[p]), %[a]\n\t"
			"adcq 56(%[p]), %[a]\n\t"
			"adcq $0, %[a]"
			: [a] "+r"(acc)
			: [p] "r"(p), "m"(*(const uint8_t(*)[64])p)
			: "cc");
#else
	uint64_t acc2 = 0; /* two chains, so the adds overlap */

	for (; blocks; blocks--, p += 64)
		for (int i = 0; i < 64; i += 16) {
			acc = add_carry(acc, load64(p + i));
			acc2 = add_carry(acc2, load64(p + i + 8));
		}
	acc = add_carry(acc, acc2);
#endif
	return acc;
}

/* acc plus the last len < 64 bytes at p; an odd last byte is padded with
 * a zero byte (in network order, so it stays at its own address). */
static uint64_t sum_tail(uint64_t acc, const uint8_t *p, size_t len)
{
	uint64_t w = 0;

	for (; len >= 8; len -= 8, p += 8)
		acc = add_carry(acc, load64(p));
	memcpy(&w, p, len);
	return add_carry(acc, w);
}

static uint32_t fold64(uint64_t acc)
{
	uint64_t s = (acc & 0xffffffffu) + (acc >> 32);

	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

uint32_t ns_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;

	if (len >= WIDE_MIN) { /* sum < 2^32 and < 2^31 adds of < 2^33: no overflow */
		acc = sum_wide(acc, p, len & ~(size_t)63);
		p += len & ~(size_t)63;
		len &= 63;
	}
	acc = sum_blocks(acc, p, len / 64);

	return fold64(sum_tail(acc, p + (len & ~(size_t)63), len & 63));
}

uint32_t ns_csum_copy(uint32_t sum, void *dst, const void *src, size_t len)
{
	const uint8_t *s = src;
	uint8_t *d = dst;
	uint64_t acc = sum, acc2 = 0;

	/* Two add chains, each word summed from the register it was loaded
	 * into for the store: the data is read once. */
	for (; len >= 16; len -= 16, s += 16, d += 16) {
		uint64_t a = load64(s), b = load64(s + 8);

		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		acc = add_carry(acc, a);
		acc2 = add_carry(acc2, b);
	}
	memcpy(d, s, len);
	return fold64(sum_tail(add_carry(acc, acc2), s, len));
}

uint32_t ns_csum_swab(uint32_t sum)
{
	uint16_t f = ns_csum_fold(sum);

	return (uint16_t)(f << 8 | f >> 8);
}

uint16_t ns_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t ip_pseudo_csum_fold_sum(uint32_t src, uint32_t dst, uint8_t proto, const void *hdr,
				 size_t hlen, size_t len, uint32_t rest_sum)
{
	uint64_t acc;
	uint16_t w[6];

	/* src, dst in network order; then zero, proto, length. */
	memcpy(&w[0], &src, 4);
	memcpy(&w[2], &dst, 4);
	w[4] = htons(proto);
	w[5] = htons((uint16_t)len);
	acc = (uint64_t)ns_csum_add(ns_csum_add(0, w, sizeof(w)), hdr, hlen) + rest_sum;
	return ns_csum_fold(fold64(acc));
}

uint16_t ip_pseudo_csum_fold(uint32_t src, uint32_t dst, uint8_t proto, const void *l4,
			     size_t len)
{
	return ip_pseudo_csum_fold_sum(src, dst, proto, l4, len, len, 0);
}
