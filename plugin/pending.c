/* The queue's pending map (pending.h): an array of ring positions, one per
 * stretch of the disk.  Positions only grow, and a stretch keeps the
 * greatest one marked on it: a reader compares it with the ring's freed
 * position, so a stretch whose changes the mover has all passed costs one
 * load and nothing more.  Marks of different writes in one stretch race;
 * an atomic maximum keeps the later position whichever lands first. */
#include "pending.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static uint64_t *wtp_pending;   /* ring positions, one per stretch */
static uint64_t wtp_pending_n;
static unsigned wtp_pending_shift;

int
wtp_pending_init (uint64_t disk_size)
{
  unsigned shift = WTP_PENDING_MIN_SHIFT;
  while (disk_size > 0
         && ((disk_size - 1) >> shift) >= WTP_PENDING_MAX_STRETCHES)
    shift++;
  wtp_pending_shift = shift;
  wtp_pending_n = disk_size > 0 ? ((disk_size - 1) >> shift) + 1 : 1;
  wtp_pending = calloc (wtp_pending_n, sizeof *wtp_pending);
  if (!wtp_pending) {
    errno = ENOMEM;
    return -1;
  }
  return 0;
}

/* The stretches [*first, *last] that [offset, offset+length) touches,
 * clamped to the map (the requests check their range against the disk). */
static void
wtp_pending_stretches (uint64_t offset, uint64_t length, uint64_t *first,
                       uint64_t *last)
{
  uint64_t end = offset + length - 1;
  *first = offset >> wtp_pending_shift;
  *last = end >> wtp_pending_shift;
  if (*last >= wtp_pending_n)
    *last = wtp_pending_n - 1;
  if (*first > *last)
    *first = *last;
}

void
wtp_pending_mark (uint64_t offset, uint64_t length, uint64_t until)
{
  uint64_t first, last;
  if (length == 0)
    return;
  wtp_pending_stretches (offset, length, &first, &last);
  for (uint64_t s = first; s <= last; s++) {
    uint64_t seen = __atomic_load_n (&wtp_pending[s], __ATOMIC_RELAXED);
    while (seen < until
           && !__atomic_compare_exchange_n (&wtp_pending[s], &seen, until,
                                            true, __ATOMIC_RELEASE,
                                            __ATOMIC_RELAXED))
      ;
  }
}

uint64_t
wtp_pending_until (uint64_t offset, uint64_t length)
{
  uint64_t first, last, most = 0;
  if (length == 0)
    return 0;
  wtp_pending_stretches (offset, length, &first, &last);
  for (uint64_t s = first; s <= last; s++) {
    uint64_t at = __atomic_load_n (&wtp_pending[s], __ATOMIC_ACQUIRE);
    if (at > most)
      most = at;
  }
  return most;
}

void
wtp_pending_free (void)
{
  free (wtp_pending);
  wtp_pending = NULL;
}
