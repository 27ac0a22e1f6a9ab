/* fuzz_base64.c — QMP's base64 decoder on any text: it never writes past
 * what it promises, and whatever it accepts encodes back to text that
 * decodes to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "vmm/control/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *again;
	uint8_t *out = malloc(size / 4 * 3 + 1), *back;
	long n;

	memcpy(text, data, size);
	text[size] = 0;
	n = base64_decode(text, out);
	if (n >= 0) {
		again = malloc(BASE64_LEN((size_t)n) + 1);
		back = malloc((size_t)n + 3);
		base64_encode(out, (size_t)n, again);
		if (base64_decode(again, back) != n || memcmp(out, back, (size_t)n))
			abort();
		free(again);
		free(back);
	}
	free(text);
	free(out);
	return 0;
}
