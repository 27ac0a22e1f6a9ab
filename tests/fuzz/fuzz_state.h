/* fuzz_state.h — the round the device-state targets share: the input is a
 * saved state tree; when it reads (fdt_check_full and the rest of
 * state_reader_open), its /devices is loaded into fresh devices, they are
 * driven, and what loaded is saved again and loaded into another fresh
 * set, which must accept exactly what the first set did (a loaded device
 * always holds a state its own loader takes back). */
#ifndef FUZZ_STATE_H
#define FUZZ_STATE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "state/state.h"

struct fuzz_state_ops {
	const char *name;
	void *(*create)(void);	/* fresh devices (abort when they cannot be made) */
	void (*destroy)(void *devs);
	/* load each device from under /devices, remembering which took it */
	void (*load)(void *devs, const struct state_reader *devices);
	void (*drive)(void *devs); /* ports, registers, timers... */
	void (*save)(void *devs, struct state_writer *w); /* those that loaded */
	unsigned (*loaded)(const void *devs); /* a bit per device that loaded */
};

/* Save what a set loaded, and load that into a fresh set. */
static inline void fuzz_state_resave(const struct fuzz_state_ops *ops, void *devs)
{
	struct state_writer *w = state_writer_new();
	struct state_reader r, devices;
	char err[256];
	unsigned loaded = ops->loaded(devs);
	void *again, *blob;
	size_t len;

	if (!w)
		abort();
	state_begin(w, "devices", 1);
	ops->save(devs, w);
	state_end(w);
	if (state_writer_finish(w, &blob, &len, err, sizeof(err)) < 0 ||
	    state_reader_open(&r, blob, len, err, sizeof(err)) < 0 ||
	    state_reader_sub(&r, "/devices", &devices, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", ops->name, err);
		abort();
	}
	ops->destroy(devs); /* their ports are free for the second set */
	again = ops->create();
	ops->load(again, &devices);
	if (ops->loaded(again) != loaded) {
		fprintf(stderr, "%s: devices %#x loaded, their saves %#x\n", ops->name, loaded,
			ops->loaded(again));
		abort();
	}
	ops->destroy(again);
	state_reader_close(&r);
	free(blob);
}

static inline int fuzz_state_round(const struct fuzz_state_ops *ops, const uint8_t *data,
				   size_t size)
{
	struct state_reader r, devices;
	char err[256];
	void *devs;

	if (state_reader_open(&r, data, size, err, sizeof(err)) < 0)
		return 0;
	if (state_reader_sub(&r, "/devices", &devices, err, sizeof(err)) == 0) {
		devs = ops->create();
		ops->load(devs, &devices);
		ops->drive(devs);
		fuzz_state_resave(ops, devs);
	}
	state_reader_close(&r);
	return 0;
}

#endif /* FUZZ_STATE_H */
