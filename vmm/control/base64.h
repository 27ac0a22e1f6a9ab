/* base64.h — RFC 4648 base64 for QMP's format=base64 (ringbuf-read and
 * ringbuf-write). */
#ifndef VMM_CONTROL_BASE64_H
#define VMM_CONTROL_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* The characters base64_encode writes for len bytes, without the NUL. */
#define BASE64_LEN(len) (((len) + 2) / 3 * 4)

/* Encode len bytes into out (BASE64_LEN(len) + 1 bytes, NUL-terminated). */
void base64_encode(const uint8_t *in, size_t len, char *out);
/* Decode the NUL-terminated text into out (room for strlen(in) / 4 * 3
 * bytes): the bytes written, or -1 when a character is outside the
 * alphabet or padding is misplaced. An incomplete last group of fewer
 * than four characters is dropped, as QEMU's decoder does. */
long base64_decode(const char *in, uint8_t *out);

#endif /* VMM_CONTROL_BASE64_H */
