# kernel/kvm/ — the only code that issues /dev/kvm ioctls (libkvm.a).
kvm_SRCS := $(wildcard kernel/kvm/*.c)
$(eval $(call static_lib,kvm,$(kvm_SRCS),))
$(eval $(call unit_test,kvm,tests/unit/kvm/test_kvm.c,libkvm.a,))
KVM_TESTS += $(B)/tests/unit/kvm
