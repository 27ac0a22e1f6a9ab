# tests/ — unit suites (libcheck) live in tests/unit/<library>/, integration
# tests in tests/integration/. Each library's module.mk may also add its own.
$(eval $(call unit_test,devices_bus,tests/unit/devices/test_bus.c,libdevices.a,))
# The nested runner itself (VMM_TEST_NESTED=always on a few tests): runs on
# every machine, so the path for machines without /dev/kvm stays tested.
INTEG_TESTS += tests/integration/nested-runner.sh
