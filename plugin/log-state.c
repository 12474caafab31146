/* The plugin's log: its one state (log-state.h), and the break every part
 * of it may call for. */
#include "log-state.h"

#include <pthread.h>

struct wtp_log_state wtp_log = {
  .fd = -1, .dfd = -1, .ring_fd = -1,
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .room = PTHREAD_COND_INITIALIZER,
  .move_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Called with the mutex held.  Records already reserved are still copied
 * and acknowledged: their space is allocated, and they come before the
 * failure.  Requests waiting for room in the ring fail. */
void
wtp_log_break (void)
{
  __atomic_store_n (&wtp_log.broken, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast (&wtp_log.room);
}
