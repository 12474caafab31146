/* Range lock: a short list of held ranges under one mutex.  nbdkit runs a
 * bounded number of worker threads, so the list stays short and a linear
 * scan costs less than any tree. */
#include "rangelock.h"

#include <stdbool.h>

static bool
wtp_range_overlaps (const struct wtp_range_lock *rl, uint64_t start,
                    uint64_t end)
{
  for (const struct wtp_range *h = rl->held; h; h = h->next)
    if (h->start < end && start < h->end)
      return true;
  return false;
}

void
wtp_range_acquire (struct wtp_range_lock *rl, struct wtp_range *r,
                   uint64_t start, uint64_t end)
{
  r->start = start;
  r->end = end;
  pthread_mutex_lock (&rl->lock);
  while (wtp_range_overlaps (rl, start, end)) {
    rl->waiters++;
    pthread_cond_wait (&rl->released, &rl->lock);
    rl->waiters--;
  }
  r->next = rl->held;
  rl->held = r;
  pthread_mutex_unlock (&rl->lock);
}

void
wtp_range_release (struct wtp_range_lock *rl, struct wtp_range *r)
{
  pthread_mutex_lock (&rl->lock);
  for (struct wtp_range **p = &rl->held; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      break;
    }
  if (rl->waiters)
    pthread_cond_broadcast (&rl->released);
  pthread_mutex_unlock (&rl->lock);
}
