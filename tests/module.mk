# tests/ — unit suites (libcheck) live in tests/unit/<library>/, integration
# tests in tests/integration/. Each library's module.mk may also add its own.
$(eval $(call unit_test,devices_bus,tests/unit/devices/test_bus.c,libdevices.a,))
