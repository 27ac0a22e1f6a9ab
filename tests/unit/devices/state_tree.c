/* state_tree.c — the device snapshot suites' shared tree helpers
 * (state_tree.h). */
#include <check.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/devices/state_tree.h"

char state_err[256];

/* The tree the machine will write: the device under /devices. */
void *save_tree(save_fn *save, void *dev, size_t *len)
{
	struct state_writer *w = state_writer_new();
	void *blob;

	ck_assert_ptr_nonnull(w);
	state_begin(w, "devices", 1);
	save(dev, w);
	state_end(w);
	ck_assert_int_eq(state_writer_finish(w, &blob, len, state_err, sizeof(state_err)), 0);
	return blob;
}

int load_tree(load_fn *load, void *dev, const void *blob, size_t len)
{
	struct state_reader r, devs;
	int ret;

	ck_assert_int_eq(state_reader_open(&r, blob, len, state_err, sizeof(state_err)), 0);
	ck_assert_int_eq(state_reader_sub(&r, "/devices", &devs, state_err, sizeof(state_err)), 0);
	ret = load(dev, &devs, state_err, sizeof(state_err));
	state_reader_close(&r);
	return ret;
}

/* Overwrite one property of a saved tree in place (same size). */
void patch(void *blob, const char *node, const char *prop, const void *val, int len)
{
	int off = fdt_path_offset(blob, node);

	ck_assert_int_ge(off, 0);
	ck_assert_int_eq(fdt_setprop_inplace(blob, off, prop, val, len), 0);
}

void patch_u8(void *blob, const char *node, const char *prop, uint8_t v)
{
	patch(blob, node, prop, &v, 1);
}

void patch_u32(void *blob, const char *node, const char *prop, uint32_t v)
{
	fdt32_t be = cpu_to_fdt32(v);

	patch(blob, node, prop, &be, 4);
}

void *patched_copy(const void *blob, size_t len, const char *node, const char *prop, uint32_t v,
		   int size)
{
	void *b = malloc(len);
	fdt16_t be16 = cpu_to_fdt16((uint16_t)v);

	ck_assert_ptr_nonnull(b);
	memcpy(b, blob, len);
	if (size == 4)
		patch_u32(b, node, prop, v);
	else if (size == 2)
		patch(b, node, prop, &be16, 2);
	else
		patch_u8(b, node, prop, (uint8_t)v);
	return b;
}
