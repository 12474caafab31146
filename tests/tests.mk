# tests/: C unit tests (each tests/unit/test-*.c is one TAP program).
UNIT_SRCS = $(wildcard tests/unit/test-*.c)
TEST_PROGRAMS += $(UNIT_SRCS:.c=)

tests/unit/test-%: tests/unit/test-%.c tests/unit/tap.h common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -I tests/unit $< common/libwtcommon.a -o $@

# doc/formats.md against the code; dm-log-writes's constants are in the
# checker's header, which includes glib.h (nothing of glib is linked).
tests/unit/test-formats-doc: ALL_CFLAGS += -I checker $(GLIB_CFLAGS)
tests/unit/test-formats-doc: checker/dmlog-format.h

# Helpers the shell tests run (not tests themselves).
TEST_HELPERS += tests/tools/runfacts
tests/tools/%: tests/tools/%.c common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $< common/libwtcommon.a -o $@

TEST_HELPERS += tests/tools/faultset
tests/tools/faultset: tests/tools/faultset.c common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $(GLIB_CFLAGS) $< common/libwtcommon.a $(GLIB_LIBS) -o $@

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
