# plugin/: nbdkit-wtrack-plugin.so, the recording nbdkit plugin, and its man
# page (when pod2man is there).
PLUGIN_SRCS = plugin/wtrack.c plugin/request.c plugin/store.c \
	plugin/log.c plugin/log-ring.c plugin/log-mover.c plugin/log-queue.c plugin/log-state.c \
	plugin/rangelock.c plugin/faults.c plugin/pending.c plugin/index.c plugin/owners.c plugin/phase.c
PLUGIN_HDRS = $(wildcard plugin/*.h)
PLUGIN_OBJS = $(PLUGIN_SRCS:.c=.pic.o)
PROGRAMS += plugin/nbdkit-wtrack-plugin.so

# WT_VERSION comes from checker/checker.mk (expanded when the rule runs).
# nbdkit's callbacks have fixed signatures, most ignore some parameters.
plugin/%.pic.o: plugin/%.c $(PLUGIN_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) $(NBDKIT_CFLAGS) -Wno-unused-parameter -fPIC -fvisibility=hidden \
	  -DWTP_VERSION='"$(or $(WT_VERSION),0.1)"' -c $< -o $@

plugin/nbdkit-wtrack-plugin.so: $(PLUGIN_OBJS) common/libwtcommon-pic.a
	$(CC) $(ALL_CFLAGS) -shared -fPIC $(PLUGIN_OBJS) common/libwtcommon-pic.a \
	  -lpthread -lm -o $@

# The sanitized plugin (see SAN_CFLAGS in the Makefile). nbdkit itself is
# not sanitized: run it with gcc's libasan.so in LD_PRELOAD (tests/asan-run.sh).
SAN_PROGRAMS += plugin/nbdkit-wtrack-plugin-asan.so
plugin/%.asan.o: plugin/%.c $(PLUGIN_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(SAN_CFLAGS) $(NBDKIT_CFLAGS) -Wno-unused-parameter -fvisibility=hidden \
	  -DWTP_VERSION='"$(or $(WT_VERSION),0.1)"' -c $< -o $@

plugin/nbdkit-wtrack-plugin-asan.so: $(PLUGIN_SRCS:.c=.asan.o) common/libwtcommon-asan.a
	$(CC) $(SAN_CFLAGS) -shared $^ -lpthread -lm -o $@

ifneq ($(shell command -v pod2man 2>/dev/null),)
PROGRAMS += plugin/nbdkit-wtrack-plugin.1
plugin/nbdkit-wtrack-plugin.1: plugin/nbdkit-wtrack-plugin.pod
	pod2man --section=1 --center=wtrack --release=$(or $(WT_VERSION),0.1) \
	  --name=nbdkit-wtrack-plugin $< > $@
endif

CLEAN_FILES += plugin/*.pic.o
