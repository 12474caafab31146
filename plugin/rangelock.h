/* A lock over byte ranges: requests whose ranges overlap run one after the
 * other, requests on disjoint ranges run in parallel. */
#ifndef WTP_RANGELOCK_H
#define WTP_RANGELOCK_H

#include <pthread.h>
#include <stdint.h>

/* One held range; lives on the stack of the request that holds it. */
struct wtp_range {
  uint64_t start, end;          /* [start, end) */
  struct wtp_range *next;
};

struct wtp_range_lock {
  pthread_mutex_t lock;
  pthread_cond_t released;
  struct wtp_range *held;
  unsigned waiters;
};

#define WTP_RANGE_LOCK_INIT \
  { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0 }

void wtp_range_acquire (struct wtp_range_lock *rl, struct wtp_range *r,
                        uint64_t start, uint64_t end);
void wtp_range_release (struct wtp_range_lock *rl, struct wtp_range *r);

#endif
