# vmm — one non-recursive Makefile; every folder adds itself through its module.mk.
#
#   make            build build/vmm, the libraries and the tools
#   make check      install missing packages, build (plus an ASan+UBSan variant), run all tests
#   make check-linux  boot the minimal Linux guest (bzImage and PVH, 1 and 4 vCPUs)
#   make demo       boot Debian's kernel on vmm to a shell (nested and scripted without /dev/kvm)
#   make bench      run the benchmarks side by side with their peers
#   make fuzz       build the fuzz targets with clang/libFuzzer, run each FUZZ_SECONDS (60)
#   make install    DESTDIR=... PREFIX=...
#
# B is the output folder. `make check` builds the same tree a second time into
# build/asan with SANITIZE=1; the configuration (build/config.mk) is shared.

.DEFAULT_GOAL := all
CONFIG := build/config.mk
B ?= build

-include $(CONFIG)

SANITIZE ?= 0
# Parallel jobs for the builds `make check` and friends start themselves.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
WERROR ?= 1
CC ?= cc
AR ?= ar
PREFIX ?= /usr/local
DESTDIR ?=

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT := -O2 -g
ifeq ($(SANITIZE),1)
OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
# FUZZ=1 (make fuzz, with CC=clang): everything instrumented for libFuzzer.
ifeq ($(FUZZ),1)
OPT := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread $(OPT) $(WARN) -Ibuild -I. $(CFLAGS)
LDFLAGS_ALL := -pthread $(filter -fsanitize=%,$(OPT)) $(LDFLAGS)

# What libbackends.a needs at link time, after every archive (liburing;
# zlib and libzstd for compressed qcow2 clusters), and libfdt for the
# device-state tree (libstate.a, which every link gets after its own
# archives: devices save and load themselves through it).
DEVICES_LIBS = $(FDT_LIBS) $(URING_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS)
STATE_LIB = $(B)/libstate.a

# obj SOURCES: the object files for C sources, under $(B)/obj.
obj = $(patsubst %.c,$(B)/obj/%.o,$(filter %.c,$(1)))

# static_lib NAME SOURCES EXTRA_CFLAGS -> $(B)/libNAME.a
define static_lib
$(B)/lib$(1).a: $(call obj,$(2))
	@mkdir -p $$(@D)
	@rm -f $$@ # from scratch: a file that moved to another library must leave this one
	$$(AR) rcs $$@ $$^
$(call obj,$(2)): EXTRA_CFLAGS += $(3)
ALL_LIBS += $(B)/lib$(1).a
endef

# program NAME SOURCES LIBS(link order, file names) LDLIBS -> $(B)/NAME
define program
$(B)/$(1): $(call obj,$(2)) $(addprefix $(B)/,$(3)) $$(STATE_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$(filter %.o %.a,$$^) $(4) $$(DEVICES_LIBS)
PROGRAMS += $(B)/$(1)
endef

# unit_test NAME SOURCES LIBS LDLIBS -> $(B)/tests/unit/NAME, run by `make check`
define unit_test
$(B)/tests/unit/$(1): $(call obj,$(2)) $(addprefix $(B)/,$(3)) $$(STATE_LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$(filter %.o %.a,$$^) $(4) $$(DEVICES_LIBS) $$(CHECK_LIBS)
$(call obj,$(2)): EXTRA_CFLAGS += $$(CHECK_CFLAGS)
UNIT_TESTS += $(B)/tests/unit/$(1)
endef

ALL_LIBS :=
PROGRAMS :=
UNIT_TESTS :=
# Integration tests: executables (scripts) run from the top folder with B, VMM set.
INTEG_TESTS :=
# Tests (of any list) that need /dev/kvm: tests/run.sh runs them natively, or
# inside a nested Linux under QEMU's emulation where the host has no KVM.
# Every LINUX_TESTS entry needs KVM and need not be listed.
KVM_TESTS :=
# Benchmarks that need /dev/kvm (run nested where it is absent, like KVM_TESTS).
KVM_BENCHES :=
# Extra things `make all` builds (guest payloads, generated data).
EXTRA_TARGETS :=
BENCHES :=

MODULES := kernel/kvm state backends devices firmware netstack netstack/usernet regdb vmm tests/guest wlan tests tests/fuzz bench
include $(wildcard $(addsuffix /module.mk,$(MODULES)))

$(B)/obj/%.o: %.c $(CONFIG)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(EXTRA_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)

.PHONY: all deps config check check-build check-run check-linux check-kut check-sandbox demo bench fuzz install clean

all: $(CONFIG)
	@$(MAKE) --no-print-directory build-all

.PHONY: build-all
build-all: $(ALL_LIBS) $(PROGRAMS) $(EXTRA_TARGETS) $(UNIT_TESTS)

$(CONFIG): configure
	@if [ -f $(CONFIG) ]; then ./configure $(CONFIGURE_ARGS); else ./configure; fi

deps:
	@sh scripts/install-deps.sh check

# The README's test command. Installs what is missing, builds both variants, runs everything.
check: deps
	@$(MAKE) --no-print-directory $(CONFIG)
	@$(MAKE) --no-print-directory -j$(JOBS) build-all
	@$(MAKE) --no-print-directory -j$(JOBS) B=build/asan SANITIZE=1 build-all
	@$(MAKE) --no-print-directory check-run

check-run:
	@B=build VMM=build/vmm VMM_ASAN=build/asan/vmm \
		KVM_TESTS="$(KVM_TESTS) $(patsubst build/%,build/asan/%,$(filter build/%,$(KVM_TESTS)))" \
		sh tests/run.sh \
		$(UNIT_TESTS) $(patsubst build/%,build/asan/%,$(UNIT_TESTS)) $(INTEG_TESTS)

# Every integration test that starts vmm, again under -sandbox on with all
# of QEMU's deny options (tests/integration/sandbox.sh, step 4); Linux ones
# too when the guest kernel is built (make check-linux builds it).
# (netstack, regdb and usernet tests start no VMM; the nested runner's L1
# is not vmm.)
SANDBOX_ALL = $(filter-out sandbox linux-sandbox nested-runner netstack-% regdb-% usernet-%, \
	$(notdir $(basename $(filter tests/integration/%.sh,$(INTEG_TESTS) $(LINUX_TESTS)))))
check-sandbox:
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory B=build/asan SANITIZE=1 build-all
	@sh scripts/guest-kernel.sh >/dev/null
	@SANDBOX_SUBTESTS="$(SANDBOX_ALL)" TEST_TIMEOUT=36000 B=build VMM=build/vmm \
		VMM_ASAN=build/asan/vmm KVM_TESTS=tests/integration/sandbox.sh \
		sh tests/run.sh tests/integration/sandbox.sh

# kvm-unit-tests (not packaged; a checkout given by path) under vmm and QEMU,
# optionally both with -machine kernel_irqchip=$(KUT_IRQCHIP) (on|split|off).
check-kut: build/vmm
	@[ -n "$(KUT)" ] || { echo "usage: make check-kut KUT=/path/to/kvm-unit-tests"; exit 2; }
	@B=build VMM=build/vmm KUT_IRQCHIP=$(KUT_IRQCHIP) sh scripts/kut/check.sh $(KUT) $(KUT_TESTS)

check-linux:
	@sh scripts/install-deps.sh check linux
	@$(MAKE) --no-print-directory all
	@# build (or find cached) the guest kernel first, outside the per-test
	@# timeout: ~13 minutes the first time on these hosts
	@sh scripts/guest-kernel.sh >/dev/null
	@# the Debian disk on the host, where the mirror is reachable (nested
	@# L1s have no network); cached after the first time
	@sh scripts/debian-disk.sh >/dev/null
	@B=build VMM=build/vmm KVM_TESTS="$(LINUX_TESTS)" sh tests/run.sh $(LINUX_TESTS)

demo:
	@sh scripts/demo.sh --preflight
	@sh scripts/install-deps.sh demo
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

bench:
	@sh scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory all
	@B=build VMM=build/vmm KVM_BENCHES="$(KVM_BENCHES)" sh bench/run.sh $(BENCHES)

# Coverage-guided fuzzing (tests/fuzz/README.md): clang's libFuzzer build in
# build/fuzz, then every target for FUZZ_SECONDS, one after the other.
FUZZ_SECONDS ?= 60
fuzz: $(CONFIG)
	@sh scripts/install-deps.sh check fuzz
	@$(MAKE) --no-print-directory B=build/fuzz FUZZ=1 CC=clang WERROR=0 fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(patsubst $(B)/%,build/fuzz/%,$(FUZZ_TARGETS))

# Every test script make check and make check-linux run, one per line
# (tests/integration/nested-place.sh checks its marks against them).
.PHONY: print-tests
print-tests:
	@printf '%s\n' $(INTEG_TESTS) $(LINUX_TESTS)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_TARGETS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 build/vmm $(DESTDIR)$(PREFIX)/bin/vmm
	for t in regdb netstack-host; do [ ! -f build/$$t ] || install -m 755 build/$$t $(DESTDIR)$(PREFIX)/bin/$$t; done
	install -m 644 docs/vmm.1 $(DESTDIR)$(PREFIX)/share/man/man1/vmm.1

clean:
	rm -rf build
