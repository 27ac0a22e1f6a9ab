/* migration_devices.h — the chipset's part of the saved device tree. */
#ifndef VMM_MIGRATION_DEVICES_H
#define VMM_MIGRATION_DEVICES_H

#include <stdbool.h>
#include <stddef.h>

#include "state/state.h"

struct machine;
/* False with *unsaved naming a chipset device that cannot be saved yet. */
bool chipset_saved(const struct machine *m, const char **unsaved);
/* The chipset's nodes, inside /devices. */
void save_chipset(struct machine *m, struct state_writer *w);
int load_chipset(struct machine *m, const struct state_reader *devs, char *err, size_t errlen);

#endif /* VMM_MIGRATION_DEVICES_H */
