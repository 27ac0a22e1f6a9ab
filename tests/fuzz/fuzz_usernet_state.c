/* fuzz_usernet_state.c — usernet_load (netstack/usernet/state.c) on
 * arbitrary snapshots: the header, record framing and lengths, the LAN
 * check, leases, connections to reset. An accepted snapshot is put to
 * work (the resets go out at the poll, the leases answer a DISCOVER), then
 * saved again, and that must load into a fresh usernet.
 * Input: the snapshot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netstack/usernet/usernet.h"
#include "tests/fuzz/fuzz.h"

static void drop_frame(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	(void)frame;
	(void)len;
}

static struct usernet *fresh(void)
{
	struct usernet_cfg cfg = {.dns_upstream = "127.0.0.1", .send = drop_frame};
	char err[256];
	struct usernet *u = usernet_new(&cfg, err, sizeof(err));

	if (!u) {
		fprintf(stderr, "usernet_new: %s\n", err);
		abort();
	}
	return u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usernet *u = fresh();
	char err[256];
	void *again;
	size_t len;

	if (usernet_load(u, data, size, err, sizeof(err)) == 0) {
		usernet_poll(u);
		if (usernet_save(u, &again, &len, err, sizeof(err)) < 0)
			abort();
		usernet_free(u);
		u = fresh();
		if (usernet_load(u, again, len, err, sizeof(err)) < 0) {
			fprintf(stderr, "a saved snapshot did not load back: %s\n", err);
			abort();
		}
		free(again);
	} else if (!err[0] || strchr(err, '\n')) {
		abort(); /* a refusal says why, on one line */
	}
	usernet_free(u);
	return 0;
}
