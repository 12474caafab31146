# common/: the formats, CRC32C and the sector hash, linked into every part.
# Built twice: for the host, and static without glib for the guest.
COMMON_SRCS = common/crc32c.c common/wtlog.c common/wtlog-read.c common/wtlog-strip.c common/wtlog-ring.c common/channel.c \
	common/manifest.c common/fileio.c common/image-apply.c common/image-resolve.c common/search.c \
	common/sector-hash.c common/sector-hash-avx2.c
COMMON_OBJS = $(COMMON_SRCS:.c=.o)
COMMON_PIC_OBJS = $(COMMON_SRCS:.c=.pic.o)
COMMON_HDRS = $(wildcard common/*.h)

common/%.o: common/%.c $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) -c $< -o $@

common/%.pic.o: common/%.c $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

common/%.asan.o: common/%.c $(COMMON_HDRS) config.mk
	$(CC) $(SAN_CFLAGS) -c $< -o $@

# Only this file may use AVX2; sector-hash.c calls it where the CPU has it.
ifeq ($(shell uname -m),x86_64)
common/sector-hash-avx2.o common/sector-hash-avx2.pic.o: ALL_CFLAGS += -mavx2
common/sector-hash-avx2.asan.o: SAN_CFLAGS += -mavx2
endif

common/libwtcommon.a: $(COMMON_OBJS)
	rm -f $@ && ar rcs $@ $^

common/libwtcommon-pic.a: $(COMMON_PIC_OBJS)
	rm -f $@ && ar rcs $@ $^

common/libwtcommon-asan.a: $(COMMON_SRCS:.c=.asan.o)
	rm -f $@ && ar rcs $@ $^

CLEAN_FILES += common/libwtcommon.a common/libwtcommon-pic.a common/libwtcommon-asan.a
