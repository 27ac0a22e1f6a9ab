/* qmp_commands.h — the QMP command table (qmp_commands.c), used by the
 * protocol side (qmp.c). Commands run on the main thread. */
#ifndef VMM_QMP_COMMANDS_H
#define VMM_QMP_COMMANDS_H

#include <jansson.h>

#include "vmm/machine.h"

/* How a command failed (or what it still has to do once replied). */
struct qmp_error {
	char cls[32]; /* "" is GenericError */
	char desc[256];
	void (*after_reply)(struct machine *m); /* quit: exit after the reply */
};

struct qmp_command {
	const char *name;
	/* 0 with *ret (NULL is {}), or -1 with e filled. args may be NULL. */
	int (*fn)(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e);
	/* Its arguments, "name:type,?optional:type" (vmm/qmp_args.h): checked
	 * before fn runs and described by query-qmp-schema. NULL is none. */
	const char *args;
};

const struct qmp_command *qmp_find_command(const char *name);
/* Every command in turn (query-commands, query-qmp-schema); NULL past the end. */
const struct qmp_command *qmp_command_at(size_t i);
/* qmp_libvirt.c: the management-layer commands, ended by a NULL name. */
extern const struct qmp_command qmp_libvirt_commands[];
/* qmp_migration.c: migrate, migrate-incoming, query-migrate. */
extern const struct qmp_command qmp_migration_commands[];
/* qmp_hotplug.c: device_add, device_del, blockdev-add, blockdev-del. */
extern const struct qmp_command qmp_hotplug_commands[];
/* qmp_fds.c: getfd, closefd. */
extern const struct qmp_command qmp_fd_commands[];
/* query-block's entries for the virtio-blk disks (qmp_libvirt.c). */
void qmp_virtio_block_info(struct machine *m, json_t *list);
/* A block node as QEMU shows it (drv NULL: the image's format). */
json_t *qmp_block_node(const char *name, const char *drv, struct block_dev *b,
		       const char *file_node);
/* {"qemu": {"major", "minor", "micro"}, "package"}: greeting, query-version. */
json_t *qmp_version_json(void);
/* qmp_balloon.c: balloon, query-balloon, qom-get, qom-set (the balloon's
 * properties), and qom-list of the balloon's path (NULL: not the balloon). */
int qmp_balloon(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e);
int qmp_query_balloon(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e);
int qmp_qom_get(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e);
int qmp_qom_set(struct machine *m, json_t *args, json_t **ret, struct qmp_error *e);
json_t *qmp_balloon_qom_list(struct machine *m, const char *path);
void qmp_commands_init(struct machine *m);
void qmp_commands_free(void);

#endif /* VMM_QMP_COMMANDS_H */
