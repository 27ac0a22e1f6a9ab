# state/ — the device-state tree (libstate.a, state.h): what snapshots and
# migration save, as a flattened device tree written and read with libfdt.
# Devices write and read their own nodes; the machine owns the tree.
state_SRCS := $(wildcard state/*.c)
$(eval $(call static_lib,state,$(state_SRCS),$(FDT_CFLAGS)))
$(eval $(call unit_test,state,tests/unit/state/test_state.c,libstate.a,$(FDT_LIBS)))
