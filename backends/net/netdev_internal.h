/* netdev_internal.h — helpers the network backends (net_user.c, net_tap.c) share;
 * their public interface is in backends/backends.h. */
#ifndef VMM_DEVICES_NETDEV_INTERNAL_H
#define VMM_DEVICES_NETDEV_INTERNAL_H

#include <linux/virtio_net.h>


/* One key=value of a -netdev string: 0, or -1 with err. */
typedef int (*netdev_opt_fn)(void *arg, const char *key, const char *val, char *err, size_t errlen);
/* Call fn for each option but id=: 0, or -1 with err ("TYPE: ..."). */
int netdev_each_opt(const char *type, const char *opts, netdev_opt_fn fn, void *arg, char *err,
		    size_t errlen);
/* QEMU's on/off spellings (on, yes, y, true / off, no, n, false). */
int netdev_parse_bool(const char *key, const char *v, bool *out, char *err, size_t errlen);

#endif /* VMM_DEVICES_NETDEV_INTERNAL_H */
