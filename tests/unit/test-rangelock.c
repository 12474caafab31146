/* The plugin's range lock (plugin/rangelock.c), which orders overlapping
 * changes between the image and the log: overlapping ranges wait for each
 * other and disjoint ones do not; threads hammering random overlapping
 * ranges never hold a sector twice and never hang (an alarm fails the test
 * that does). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "../../plugin/rangelock.h"

#define SECTOR 512
/* The sectors the hammer's ranges fall in: few, so they overlap often. */
#define SECTORS 256

static struct wtp_range_lock rl = WTP_RANGE_LOCK_INIT;

/* Which thread holds each sector, as the test sees it (0 for none); a
 * second holder is a failure of the lock. */
static unsigned holder[SECTORS];
static unsigned overlaps_seen;

struct waiter {
  uint64_t start, end;
  bool got;                     /* atomic */
};

static void *
acquire_then_release (void *arg)
{
  struct waiter *w = arg;
  struct wtp_range r;
  wtp_range_acquire (&rl, &r, w->start, w->end);
  __atomic_store_n (&w->got, true, __ATOMIC_SEQ_CST);
  wtp_range_release (&rl, &r);
  return NULL;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };
  nanosleep (&ts, NULL);
}

/* Holds [hs, he) and asks for [ws, we) in another thread: whether that
 * thread got it while the first range was held. */
static bool
got_while_held (uint64_t hs, uint64_t he, uint64_t ws, uint64_t we)
{
  struct wtp_range held;
  struct waiter w = { .start = ws, .end = we };
  pthread_t t;
  wtp_range_acquire (&rl, &held, hs, he);
  pthread_create (&t, NULL, acquire_then_release, &w);
  sleep_ms (100);
  bool got = __atomic_load_n (&w.got, __ATOMIC_SEQ_CST);
  wtp_range_release (&rl, &held);
  pthread_join (t, NULL);
  return got && __atomic_load_n (&w.got, __ATOMIC_SEQ_CST);
}

static void
test_pairs (void)
{
  tap_ok (got_while_held (0, 4096, 4096, 8192),
          "adjacent ranges do not wait");
  tap_ok (got_while_held (0, 512, 512, 1024),
          "adjacent sectors do not wait");
  tap_ok (!got_while_held (0, 8192, 4096, 12288),
          "overlapping ranges wait, and go once released");
  tap_ok (!got_while_held (0, 1 << 20, 4096, 8192),
          "a range inside a held one waits");
  tap_ok (!got_while_held (4096, 8192, 0, 1 << 20),
          "a range around a held one waits");
  tap_ok (!got_while_held (0, 8192, 4096, 4096),
          "an empty range inside a held one waits");
  tap_ok (got_while_held (0, 8192, 8192, 8192),
          "an empty range at a held one's end does not wait");
  tap_ok (got_while_held (UINT64_C (1) << 40, (UINT64_C (1) << 40) + 512,
                          0, 512),
          "ranges far apart do not wait");
}

/* A random range of up to 16 sectors among SECTORS, sometimes empty. */
static void
random_range (unsigned *seed, uint64_t *start, uint64_t *end)
{
  uint64_t first = (uint64_t) (rand_r (seed) % SECTORS);
  uint64_t count = (uint64_t) (rand_r (seed) % 17);
  if (first + count > SECTORS)
    count = SECTORS - first;
  *start = first * SECTOR;
  *end = (first + count) * SECTOR;
}

/* Marks the sectors of a held range as this thread's: any already marked
 * is an overlap the lock let through. */
static void
mark (uint64_t start, uint64_t end, unsigned me, bool on)
{
  for (uint64_t sct = start / SECTOR; sct < end / SECTOR; sct++) {
    unsigned expect = on ? 0 : me;
    if (!__atomic_compare_exchange_n (&holder[sct], &expect, on ? me : 0,
                                      false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_SEQ_CST))
      __atomic_add_fetch (&overlaps_seen, 1, __ATOMIC_SEQ_CST);
  }
}

#define THREADS 8
#define ROUNDS 20000

static void *
hammer (void *arg)
{
  unsigned me = (unsigned) (uintptr_t) arg;
  unsigned seed = me * 2654435761u;
  for (int i = 0; i < ROUNDS; i++) {
    uint64_t start, end;
    struct wtp_range r;
    random_range (&seed, &start, &end);
    wtp_range_acquire (&rl, &r, start, end);
    mark (start, end, me, true);
    if (i % 64 == 0)
      sched_yield ();
    mark (start, end, me, false);
    wtp_range_release (&rl, &r);
  }
  return NULL;
}

static void
test_hammer (void)
{
  pthread_t t[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    pthread_create (&t[i], NULL, hammer, (void *) (uintptr_t) (i + 1));
  for (unsigned i = 0; i < THREADS; i++)
    pthread_join (t[i], NULL);
  tap_ok (overlaps_seen == 0, "%d threads x %d random ranges: no sector "
          "held twice (%u seen), no hang", THREADS, ROUNDS, overlaps_seen);
  tap_ok (rl.held == NULL && rl.waiters == 0,
          "every range released, no waiter left");
}

int
main (void)
{
  alarm (120);                  /* a deadlock fails the test */
  tap_plan (10);
  test_pairs ();
  test_hammer ();
  return tap_done ();
}
