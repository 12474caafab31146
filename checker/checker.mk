# checker/: the wtrack host command. Every checker/*.c and checker/*/*.c is
# part of it. Layout: checker/wtrack.c dispatches to checker/cmd-NAME.c (a
# command's option parsing and its main loop; add a command as cmd-NAME.c
# plus one line in wtrack.c); checker/NAME/ holds the modules only that
# command uses (campaign/, check/, crash/, dump/, replay/; interchange/ the
# dm-log-writes conversions of import and export); checker/lib/ the modules
# several commands share, checker/lib/html/ the HTML pages' CSS and script
# (embedded below). A module moves to lib/ once a second command
# uses it, so a file's folder says who depends on it (doc/design.md,
# "The checker's layout"). Includes name the folder: "lib/util.h".
WT_VERSION = 0.1
CHECKER_SRCS = $(wildcard checker/*.c checker/*/*.c)
CHECKER_OBJS = $(CHECKER_SRCS:.c=.o)
CHECKER_HDRS = $(wildcard checker/*.h checker/*/*.h)
PROGRAMS += checker/wtrack

checker/%.o: checker/%.c $(CHECKER_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) -I checker $(GLIB_CFLAGS) $(JSON_CFLAGS) -DWT_VERSION='"$(WT_VERSION)"' -c $< -o $@

checker/wtrack: $(CHECKER_OBJS) common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $(CHECKER_OBJS) common/libwtcommon.a $(JSON_LIBS) $(GLIB_LIBS) -lm -o $@

# The sanitized wtrack (see SAN_CFLAGS in the Makefile).
SAN_PROGRAMS += checker/wtrack-asan
checker/%.asan.o: checker/%.c $(CHECKER_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(SAN_CFLAGS) -I checker $(GLIB_CFLAGS) $(JSON_CFLAGS) -DWT_VERSION='"$(WT_VERSION)"' -c $< -o $@

checker/wtrack-asan: $(CHECKER_SRCS:.c=.asan.o) common/libwtcommon-asan.a
	$(CC) $(SAN_CFLAGS) $^ $(JSON_LIBS) $(GLIB_LIBS) -lm -o $@

# replay: the synthetic log generator of the replay tests and scripts/bench-replay.
TEST_HELPERS += tests/unit/gen-wtlog
tests/unit/gen-wtlog: tests/unit/gen-wtlog.c common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) $< common/libwtcommon.a -o $@

# The HTML report's stylesheet and script are embedded by .incbin.
checker/lib/html-assets.o checker/lib/html-assets.asan.o checker/lib/html-assets.fuzz.o: \
  checker/lib/html/report.css checker/lib/html/report.js checker/lib/html/report-trace.js
