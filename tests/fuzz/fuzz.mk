# tests/fuzz/: libFuzzer harnesses, built with clang (FUZZ_CC) and ASan +
# UBSan from objects of their own (*.fuzz.o: libFuzzer's coverage needs
# every object compiled with -fsanitize=fuzzer-no-link).
#   make fuzz [FUZZ_SECONDS=180]   each harness for FUZZ_SECONDS, one after
#                                  another, growing tests/fuzz/corpus/NAME
#   tests/test-fuzz-smoke.sh       (make check) the seeds and a short fuzz
# Crashes are written to tests/fuzz/crashes/ (not committed).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 180
FUZZ_NAMES = wtlog channel manifest dmlog check campaign collect cold trace
FUZZ_PROGRAMS = $(FUZZ_NAMES:%=tests/fuzz/fuzz-%)
FUZZ_SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_CFLAGS = $(BASE_CFLAGS) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SEEDS = tests/fuzz/seeds/.made

.PHONY: fuzz fuzz-build

common/%.fuzz.o: common/%.c $(COMMON_HDRS) config.mk
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
ifeq ($(shell uname -m),x86_64)
common/sector-hash-avx2.fuzz.o: FUZZ_CFLAGS += -mavx2
endif
common/libwtcommon-fuzz.a: $(COMMON_SRCS:.c=.fuzz.o)
	rm -f $@ && ar rcs $@ $^

# clang counts a g_autofree variable that is there only to be freed at the
# end of its scope as unused; gcc does not, and its build keeps the warning.
checker/%.fuzz.o: checker/%.c $(CHECKER_HDRS) $(COMMON_HDRS) config.mk
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wno-unused-variable -I checker $(GLIB_CFLAGS) $(JSON_CFLAGS) -DWT_VERSION='"$(WT_VERSION)"' -c $< -o $@

tests/fuzz/%.fuzz.o: tests/fuzz/%.c tests/fuzz/fuzz-util.h $(COMMON_HDRS) $(CHECKER_HDRS) config.mk
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I checker -I tests/fuzz $(GLIB_CFLAGS) $(JSON_CFLAGS) -c $< -o $@

# Every checker object but the one with main().
FUZZ_CHECKER_OBJS = $(patsubst %.c,%.fuzz.o,$(filter-out checker/wtrack.c,$(CHECKER_SRCS)))
FUZZ_LINK = $(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer

tests/fuzz/fuzz-wtlog tests/fuzz/fuzz-channel tests/fuzz/fuzz-manifest: \
  tests/fuzz/fuzz-%: tests/fuzz/fuzz-%.fuzz.o tests/fuzz/fuzz-util.fuzz.o common/libwtcommon-fuzz.a
	$(FUZZ_LINK) $^ -o $@

tests/fuzz/fuzz-dmlog: tests/fuzz/fuzz-dmlog.fuzz.o tests/fuzz/fuzz-util.fuzz.o \
  checker/interchange/dmlog-format.fuzz.o checker/lib/util.fuzz.o checker/lib/cli.fuzz.o common/libwtcommon-fuzz.a
	$(FUZZ_LINK) $^ $(JSON_LIBS) $(GLIB_LIBS) -o $@

# The harnesses that go through a wtrack command.
tests/fuzz/fuzz-check tests/fuzz/fuzz-campaign tests/fuzz/fuzz-collect tests/fuzz/fuzz-cold \
  tests/fuzz/fuzz-trace: \
  tests/fuzz/fuzz-%: tests/fuzz/fuzz-%.fuzz.o tests/fuzz/fuzz-util.fuzz.o \
  $(FUZZ_CHECKER_OBJS) common/libwtcommon-fuzz.a
	$(FUZZ_LINK) $^ $(JSON_LIBS) $(GLIB_LIBS) -lm -o $@

# The seeds: one small run from the project's writers (mkseeds.c), and its
# data log exported to dm-log-writes by wtrack itself.
tests/fuzz/mkseeds: tests/fuzz/mkseeds.c tests/fuzz/fuzz-util.h common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -I tests/fuzz $< common/libwtcommon.a -o $@

$(FUZZ_SEEDS): tests/fuzz/mkseeds checker/wtrack $(wildcard tests/fixtures/trace/*.txt)
	rm -rf tests/fuzz/seeds
	tests/fuzz/mkseeds tests/fuzz/seeds
	mkdir -p tests/fuzz/seeds/dmlog tests/fuzz/seeds/trace
	cp tests/fixtures/trace/*.txt tests/fuzz/seeds/trace/
	checker/wtrack export --format dm-log-writes --channel tests/fuzz/seeds/channel/run.bin \
	  tests/fuzz/seeds/wtlog/run-data.wtlog tests/fuzz/seeds/dmlog/run.dmlog
	touch $@

fuzz-build: $(FUZZ_PROGRAMS) $(FUZZ_SEEDS)

# -rss_limit_mb: libFuzzer's default (2 GiB) is also its malloc limit; an
# allocation above it is a finding (an input that makes a reader allocate
# that much).
fuzz: fuzz-build
	@mkdir -p tests/fuzz/crashes
	@set -e; for n in $(FUZZ_NAMES); do \
	  mkdir -p tests/fuzz/corpus/$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  tests/fuzz/fuzz-$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=tests/fuzz/crashes/$$n- tests/fuzz/corpus/$$n tests/fuzz/seeds/$$n; \
	done

CLEAN_FILES += $(FUZZ_PROGRAMS) tests/fuzz/mkseeds common/libwtcommon-fuzz.a
