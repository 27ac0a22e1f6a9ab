/* state_tree.h — what the device snapshot suites share: a device saved
 * into the tree the machine writes (the device under /devices), loaded
 * back, and one property of a saved tree overwritten in place to build
 * the bad trees a loader must refuse. Errors land in state_err. */
#ifndef VMM_TESTS_UNIT_DEVICES_STATE_TREE_H
#define VMM_TESTS_UNIT_DEVICES_STATE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "state/state.h"

extern char state_err[256];

typedef void save_fn(void *dev, struct state_writer *w);
typedef int load_fn(void *dev, const struct state_reader *r, char *e, size_t elen);

void *save_tree(save_fn *save, void *dev, size_t *len);
int load_tree(load_fn *load, void *dev, const void *blob, size_t len);
void patch(void *blob, const char *node, const char *prop, const void *val, int len);
void patch_u8(void *blob, const char *node, const char *prop, uint8_t v);
void patch_u32(void *blob, const char *node, const char *prop, uint32_t v);
/* A malloc'd copy of blob with one 1-, 2- or 4-byte property set to v. */
void *patched_copy(const void *blob, size_t len, const char *node, const char *prop, uint32_t v,
		   int size);

#endif /* VMM_TESTS_UNIT_DEVICES_STATE_TREE_H */
