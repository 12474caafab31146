# tests/: C unit tests (each tests/unit/test-*.c is one TAP program).
UNIT_SRCS = $(wildcard tests/unit/test-*.c)
TEST_PROGRAMS += $(UNIT_SRCS:.c=)

tests/unit/test-%: tests/unit/test-%.c tests/unit/tap.h common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -I tests/unit $< common/libwtcommon.a -o $@

# doc/formats.md against the code; dm-log-writes's constants are in the
# checker's header, which includes glib.h (nothing of glib is linked).
tests/unit/test-formats-doc: ALL_CFLAGS += -I checker $(GLIB_CFLAGS)
tests/unit/test-formats-doc-asan: SAN_CFLAGS += -I checker $(GLIB_CFLAGS)
tests/unit/test-formats-doc tests/unit/test-formats-doc-asan: checker/interchange/dmlog-format.h

# The trace reader's unit test links the reader itself (and the checker's
# util.c it uses) with glib.
TRACE_READ_SRCS = checker/check/trace-read.c checker/check/trace-event.c checker/lib/util.c
tests/unit/test-trace-read: tests/unit/test-trace-read.c tests/unit/tap.h $(TRACE_READ_SRCS) \
  checker/check/trace.h common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -I tests/unit -I checker $(GLIB_CFLAGS) $< $(TRACE_READ_SRCS) \
	  common/libwtcommon.a $(GLIB_LIBS) -o $@
tests/unit/test-trace-read-asan: tests/unit/test-trace-read.c tests/unit/tap.h $(TRACE_READ_SRCS) \
  checker/check/trace.h common/libwtcommon-asan.a
	$(CC) $(SAN_CFLAGS) -I tests/unit -I checker $(GLIB_CFLAGS) $< $(TRACE_READ_SRCS) \
	  common/libwtcommon-asan.a $(GLIB_LIBS) -o $@

# The unit tests again, sanitized (SAN_CFLAGS in the Makefile): a report
# ends the program with a non-zero status, which prove counts as a failure.
SAN_TEST_PROGRAMS += $(UNIT_SRCS:.c=-asan)
tests/unit/test-%-asan: tests/unit/test-%.c tests/unit/tap.h common/libwtcommon-asan.a
	$(CC) $(SAN_CFLAGS) -I tests/unit $< common/libwtcommon-asan.a -o $@

# Helpers the shell tests run (not tests themselves).
TEST_HELPERS += tests/tools/runfacts
tests/tools/%: tests/tools/%.c common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $< common/libwtcommon.a -o $@

TEST_HELPERS += tests/tools/faultset
tests/tools/faultset: tests/tools/faultset.c common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $(GLIB_CFLAGS) $< common/libwtcommon.a $(GLIB_LIBS) -o $@

# A kernel finding of the ops workload reproduced without wtrack
# (doc/ops.md "Found so far").
TEST_HELPERS += tests/tools/eof-mmap-dio

# check: the large synthetic run of scripts/bench-check, and the worst case
# a guest can make within a 64 MiB channel (tests/test-checker-worst.sh;
# for crash's oracle, tests/test-crash-many-files.sh).
TEST_HELPERS += tests/tools/mkbigrun tests/tools/mkworstrun

# Checkpoint manifests read independently of wtrack, and a log with one
# sector's writes left out (the replay and crash run tests).
TEST_HELPERS += tests/tools/ckptfiles tests/tools/dropwrites

# Crafted wtrack and dm-log-writes logs (huge ZERO/TRIM, big epochs, sparse
# dm-log-writes entries of several GiB): the bounded-memory tests.
TEST_HELPERS += tests/tools/craftlog

# A data=on run whose large writes kept one copy (IN_IMAGE and SAVED
# records), with the disk it expects at each point (test-replay-in-image).
TEST_HELPERS += tests/tools/mkinimage

# The shell tests that need no boot, again with the sanitized wtrack and
# plugin: tests/asan/test-NAME.sh is a link to tests/asan-run.sh, which
# runs tests/test-NAME.sh so (prove shows each under its own name).
# Not plugin-errors: there nbdkit with the preloaded ASan hangs in exit()
# (libp11-kit's destructor waits for glibc's setlocale lock) after the log
# filled its file system.
SAN_SHELL_TESTS = $(patsubst %,tests/asan/test-%.sh,checker-check check-btrfs-chunks check-trace checker-dump \
	checker-inputs checker-fifo crash-check campaign-records campaign-blocks \
	crash-reorder interchange-dmlog plugin-faults plugin-fio \
	plugin-kill plugin-one-copy plugin-qemu-io plugin-queue plugin-ring-kill replay-logs replay-points \
	replay-in-image)
tests/asan/test-%.sh: tests/test-%.sh tests/asan-run.sh
	@mkdir -p tests/asan
	ln -sf ../asan-run.sh $@
CLEAN_FILES += $(SAN_SHELL_TESTS)

# The ops workload's list and model, built from the guest's sources.
WT_OPS_SRCS = guest/ops-list.c guest/ops-model.c guest/ops-meet.c guest/rng.c
tests/unit/test-ops: tests/unit/test-ops.c tests/unit/tap.h $(WT_OPS_SRCS) guest/ops.h guest/guest.h common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -I tests/unit -I guest $< $(WT_OPS_SRCS) common/libwtcommon.a -o $@
tests/unit/test-ops-asan: tests/unit/test-ops.c tests/unit/tap.h $(WT_OPS_SRCS) guest/ops.h guest/guest.h common/libwtcommon-asan.a
	$(CC) $(SAN_CFLAGS) -I tests/unit -I guest $< $(WT_OPS_SRCS) common/libwtcommon-asan.a -o $@

# The plugin's index, built from its source (it needs no nbdkit).
tests/unit/test-index: plugin/index.c plugin/index.h
tests/unit/test-index: tests/unit/test-index.c tests/unit/tap.h
	$(CC) $(ALL_CFLAGS) -I tests/unit $< plugin/index.c -lpthread -o $@
tests/unit/test-index-asan: tests/unit/test-index.c tests/unit/tap.h plugin/index.c plugin/index.h
	$(CC) $(SAN_CFLAGS) -I tests/unit $< plugin/index.c -lpthread -o $@

tests/unit/test-rangelock: plugin/rangelock.c plugin/rangelock.h
tests/unit/test-rangelock: tests/unit/test-rangelock.c tests/unit/tap.h
	$(CC) $(ALL_CFLAGS) -I tests/unit $< plugin/rangelock.c -lpthread -o $@
tests/unit/test-rangelock-asan: tests/unit/test-rangelock.c tests/unit/tap.h plugin/rangelock.c plugin/rangelock.h
	$(CC) $(SAN_CFLAGS) -I tests/unit $< plugin/rangelock.c -lpthread -o $@

# The byte-order unit test again for each other architecture whose cross
# compiler configure found (static; tests/test-common-byteorder.sh runs
# them under qemu-user): s390x is big-endian, so common/'s readers and
# writers are tested there too.
define WT_CROSS_BYTEORDER
tests/unit/$(1)/test-byteorder: tests/unit/test-byteorder.c tests/unit/tap.h $(COMMON_SRCS:common/%.c=guest/$(1)/common/%.o)
	@mkdir -p $$(@D)
	$(TRIPLET_$(1))-gcc $(CROSS_CFLAGS) -I tests/unit -static $$(filter %.c %.o,$$^) -lpthread -o $$@
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call WT_CROSS_BYTEORDER,$(a))))
TEST_HELPERS += $(foreach a,$(GUEST_ARCHES),tests/unit/$(a)/test-byteorder)

# Mutation testing (doc/mutation.md): tests/mutate.py builds this target in
# a scratch copy of the tree after each mutant. Not part of check (it takes
# most of 40 minutes); tests/test-mutate-sample.sh runs five of them.
.PHONY: mutate mutate-targets
mutate-targets: all $(TEST_PROGRAMS) $(TEST_HELPERS)
mutate: mutate-targets
	tests/mutate.py
