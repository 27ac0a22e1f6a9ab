/* fuzz_telnet.c — the telnet input filter (vmm/telnet.c): a client's
 * bytes in records (fuzz.h), each one read(); the state carries over, the
 * output never grows and never holds a command byte's option. */
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz.h"
#include "vmm/chardev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct telnet_state t = {0};
	const uint8_t *rec;
	uint8_t buf[4096];
	size_t len;

	while (fuzz_next_record(&data, &size, &rec, &len)) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);

		memcpy(buf, rec, n);
		if (telnet_filter(&t, buf, n) > n)
			abort();
	}
	return 0;
}
