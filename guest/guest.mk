# guest/: wtrack-guest, the static workload binary run inside the test
# kernel (libc, pthreads and header-only XXH3 only), and guest/init, the
# initramfs's busybox init script (checked in, nothing to build).
GUEST_SRCS = $(wildcard guest/*.c)
GUEST_OBJS = $(GUEST_SRCS:.c=.o)
GUEST_HDRS = $(wildcard guest/*.h)
PROGRAMS += guest/wtrack-guest

guest/%.o: guest/%.c $(GUEST_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) -pthread -I guest -DWTG_VERSION='"$(or $(WT_VERSION),0.1)"' -c $< -o $@

guest/wtrack-guest: $(GUEST_OBJS) common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -static -pthread $(GUEST_OBJS) common/libwtcommon.a -lpthread -o $@
