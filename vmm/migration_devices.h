/* migration_devices.h — the chipset's part of the saved device tree. */
#ifndef VMM_MIGRATION_DEVICES_H
#define VMM_MIGRATION_DEVICES_H

#include <stddef.h>

#include "state/state.h"

struct machine;
/* The chipset's nodes, inside /devices. */
void save_chipset(struct machine *m, struct state_writer *w);
int load_chipset(struct machine *m, const struct state_reader *devs, char *err, size_t errlen);

#endif /* VMM_MIGRATION_DEVICES_H */
