# netstack/usernet/ — user-mode networking backend on netstack (issue 8).
# Its own library with its own public header, usernet.h.
usernet_SRCS := $(wildcard netstack/usernet/*.c)
$(eval $(call static_lib,usernet,$(usernet_SRCS),$(SLIRP_CFLAGS)))
