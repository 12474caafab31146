# guest/: wtrack-guest, the static workload binary run inside the test
# kernel (libc, pthreads and header-only XXH3 only), and guest/init, the
# initramfs's busybox init script (checked in, nothing to build).
GUEST_SRCS = $(wildcard guest/*.c)
GUEST_OBJS = $(GUEST_SRCS:.c=.o)
GUEST_HDRS = $(wildcard guest/*.h)
PROGRAMS += guest/wtrack-guest

guest/%.o: guest/%.c $(GUEST_HDRS) $(COMMON_HDRS) config.mk
	$(CC) $(ALL_CFLAGS) -pthread -I guest -DWTG_VERSION='"$(or $(WT_VERSION),0.1)"' \
	  -DWTG_ARCH='"$(HOST_ARCH)"' -c $< -o $@

guest/wtrack-guest: $(GUEST_OBJS) common/libwtcommon.a
	$(CC) $(ALL_CFLAGS) -static -pthread $(GUEST_OBJS) common/libwtcommon.a -lpthread -o $@

# Guests of other architectures (share/arches, wtrack-run --arch): the
# same sources built static with TRIPLET-gcc into guest/ARCH/, common's
# objects in guest/ARCH/common/. Those whose cross compiler configure found
# (GUEST_ARCHES) are part of "all"; the others fail with the packages to
# install. The cross compilers do not search /usr/include, so xxhash.h
# (header-only) comes from a folder of its own.
CROSS_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -I common -I guest/cross-include \
	-O2 -g -pthread

guest/cross-include/xxhash.h: $(XXHASH_H) config.mk
	@[ -n "$(XXHASH_H)" ] || { echo "guest: no xxhash.h: install libxxhash-dev, then ./configure" >&2; exit 1; }
	mkdir -p $(@D) && cp $(XXHASH_H) $@

# $(call wt_cross_cc,ARCH): the cross compiler, or a failure naming its packages
wt_cross_cc = command -v $(TRIPLET_$(1))-gcc >/dev/null || { echo "guest/$(1): $(TRIPLET_$(1))-gcc not found: install gcc-$(TRIPLET_$(1)) libc6-dev-$(1)-cross (scripts/install-deps does), then ./configure" >&2; exit 1; }

define WT_CROSS_GUEST
guest/$(1)/%.o: guest/%.c $(GUEST_HDRS) $(COMMON_HDRS) guest/cross-include/xxhash.h config.mk
	@$(call wt_cross_cc,$(1))
	@mkdir -p $$(@D)
	$(TRIPLET_$(1))-gcc $(CROSS_CFLAGS) -I guest -DWTG_VERSION='"$(or $(WT_VERSION),0.1)"' \
	  -DWTG_ARCH='"$(1)"' -c $$< -o $$@

guest/$(1)/common/%.o: common/%.c $(COMMON_HDRS) guest/cross-include/xxhash.h config.mk
	@$(call wt_cross_cc,$(1))
	@mkdir -p $$(@D)
	$(TRIPLET_$(1))-gcc $(CROSS_CFLAGS) -c $$< -o $$@

guest/$(1)/wtrack-guest: $(GUEST_SRCS:guest/%.c=guest/$(1)/%.o) $(COMMON_SRCS:common/%.c=guest/$(1)/common/%.o)
	$(TRIPLET_$(1))-gcc $(CROSS_CFLAGS) -static $$^ -lpthread -o $$@

guest-$(1): guest/$(1)/wtrack-guest
.PHONY: guest-$(1)
CLEAN_FILES += guest/$(1)/wtrack-guest
endef
$(foreach a,$(CROSS_ARCHES),$(eval $(call WT_CROSS_GUEST,$(a))))
PROGRAMS += $(foreach a,$(GUEST_ARCHES),guest/$(a)/wtrack-guest)
CLEAN_FILES += guest/cross-include/xxhash.h
