/* The queue's pending map (pending.c): for each stretch of the disk, the
 * ring position up to which the mover must have moved before the image
 * holds that stretch's last acknowledged change.  Requests mark their
 * change under their range lock, before they are acknowledged; a read (or
 * a write's edge sector) that finds a position the mover has not passed
 * moves the queue that far first, then reads the image.  It replaces the
 * index of where each range's bytes were in the ring: one atomic store per
 * stretch instead of a tree update and its allocations on every write. */
#ifndef WTP_PENDING_H
#define WTP_PENDING_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Stretches: at most this many (2 MiB of map), of at least 64 KiB (a
 * power of two): a 1 GiB disk's map, 128 KiB, stays in the caches. */
#define WTP_PENDING_MAX_STRETCHES (UINT64_C (1) << 18)
#define WTP_PENDING_MIN_SHIFT 16

/* A map of a disk of disk_size bytes.  0, or -1 with errno ENOMEM. */
int wtp_pending_init (uint64_t disk_size);
/* [offset, offset+length) changes once the mover passes ring position
 * until. */
void wtp_pending_mark (uint64_t offset, uint64_t length, uint64_t until);
/* The greatest position marked over [offset, offset+length) (0: none). */
uint64_t wtp_pending_until (uint64_t offset, uint64_t length);
void wtp_pending_free (void);

#pragma GCC visibility pop

#endif
