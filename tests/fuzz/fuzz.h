/* fuzz.h — what every fuzz target includes: the libFuzzer entry points
 * and the record format several targets share: an input is
 * a sequence of records, each a 2-byte big-endian length and that many
 * bytes; a length past the end takes the rest. One input can thus carry a
 * whole exchange (a crash reproducer replays alone), while single-record
 * inputs stay easy for the fuzzer to mutate. */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The next record of (data, size) into (rec, rec_len); false at the end. */
static inline bool fuzz_next_record(const uint8_t **data, size_t *size, const uint8_t **rec,
				    size_t *rec_len)
{
	size_t n;

	if (*size < 2)
		return false;
	n = (size_t)(*data)[0] << 8 | (*data)[1];
	*data += 2;
	*size -= 2;
	if (n > *size)
		n = *size;
	*rec = *data;
	*rec_len = n;
	*data += n;
	*size -= n;
	return true;
}

#endif
