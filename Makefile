# wtrack: one non-recursive Makefile; each part adds its rules from its own
# fragment (common/common.mk, plugin/plugin.mk, ...).

# The rule for config.mk below comes first; plain "make" still means "all".
.DEFAULT_GOAL := all

ifeq ($(filter clean distclean help,$(MAKECMDGOALS)),)
include config.mk
endif

# config.mk comes from configure, after the set-up installed what it probes.
config.mk: configure
	scripts/install-deps
	./configure

WARN = -Wall -Wextra $(if $(filter yes,$(WERROR)),-Werror)
BASE_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -I common $(XXHASH_CFLAGS)
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS)

# The sanitized build (make asan; make check runs it): the host tool, the
# plugin and the unit tests again, from objects of their own (*.asan.o,
# all PIC so one libwtcommon-asan.a serves the tool and the plugin), named
# *-asan.  The guest is static and stays unsanitized.  -O1 after CFLAGS:
# fast enough, and every frame still in the reports.  UBSan's runtime is
# linked statically: only so does it honour UBSAN_OPTIONS=log_path in a
# program that also has ASan (gcc 12), which tests/asan-run.sh relies on.
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-static-libubsan
SAN_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) -O1 $(SAN_FLAGS) -fPIC

PROGRAMS :=
SAN_PROGRAMS :=
TEST_PROGRAMS :=
SAN_TEST_PROGRAMS :=
TEST_HELPERS :=
CLEAN_FILES :=

.PHONY: all asan check run bench install clean distclean deps help

all:

include common/common.mk
include plugin/plugin.mk
include guest/guest.mk
include checker/checker.mk
include tests/tests.mk
include tests/fuzz/fuzz.mk

all: $(PROGRAMS)

asan: $(SAN_PROGRAMS) $(SAN_TEST_PROGRAMS)

deps:
	scripts/install-deps

# Every test under prove: C unit tests, then shell tests with real clients
# and real boots.  TESTS=... runs a subset.
# Then the sanitized unit and shell tests (make asan).
TESTS ?= $(TEST_PROGRAMS) $(sort $(wildcard tests/test-*.sh)) \
	$(SAN_TEST_PROGRAMS) $(SAN_SHELL_TESTS)
check: deps
	$(MAKE) all asan fuzz-build $(TEST_PROGRAMS) $(TEST_HELPERS) $(SAN_SHELL_TESTS)
	prove -f $(PROVE_FLAGS) $(TESTS)

# The default scenario: Linus's 2006 reproducer on ext4 with his VM
# settings, sized to finish in about a minute under TCG.
RUN_DIR ?= run
RUN_ARGS ?= --fs ext4 --sysctl vm.dirty_ratio=5 --sysctl vm.dirty_background_ratio=3 \
	--data-log --workload linus2006 --size 32M
run: deps
	$(MAKE) all
	scripts/wtrack-run --out $(RUN_DIR) $(RUN_ARGS)

bench: deps
	$(MAKE) all
	scripts/bench

# The plugin goes where nbdkit looks for "nbdkit wtrack" (its plugindir,
# from configure; outside PREFIX), the man page where man looks under PREFIX.
# Both can be given on the command line; DESTDIR is put in front of all.
MANDIR ?= $(PREFIX)/share/man
PLUGIN_MAN = $(filter plugin/nbdkit-wtrack-plugin.1,$(PROGRAMS))
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/wtrack \
	  $(DESTDIR)$(NBDKIT_PLUGINDIR)
	install -m 755 checker/wtrack $(DESTDIR)$(PREFIX)/bin/wtrack
	install -m 755 plugin/nbdkit-wtrack-plugin.so $(DESTDIR)$(NBDKIT_PLUGINDIR)/
	install -m 755 guest/wtrack-guest guest/init $(DESTDIR)$(PREFIX)/lib/wtrack/
	for a in $(GUEST_ARCHES); do \
	  install -D -m 755 guest/$$a/wtrack-guest $(DESTDIR)$(PREFIX)/lib/wtrack/$$a/wtrack-guest || exit 1; \
	done
ifneq ($(PLUGIN_MAN),)
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(PLUGIN_MAN) $(DESTDIR)$(MANDIR)/man1/
endif

clean:
	rm -f $(PROGRAMS) $(SAN_PROGRAMS) $(TEST_PROGRAMS) $(SAN_TEST_PROGRAMS) \
	  $(TEST_HELPERS) $(CLEAN_FILES)
	find . -name '*.o' -delete

distclean: clean
	rm -f config.mk config.log

help:
	@echo "make run     set up, build, boot the default kernel, print the report"
	@echo "make check   set up, build, run every test under prove"
	@echo "make bench   compare the plugin with nbdkit file (scripts/bench)"
	@echo "make asan    the sanitized wtrack, plugin and unit tests (*-asan)"
	@echo "make fuzz    every libFuzzer harness for FUZZ_SECONDS (default 180)"
