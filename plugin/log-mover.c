/* The mover of the plugin's log (log.c): a thread, or a request that needs
 * room or a flush, copies the ring's bytes that the watermark has passed to
 * their place in the log file, with O_DIRECT where the file system has it,
 * in large blocks, stepping over the records written straight into the
 * file; then their space in the ring is free.  The ring's header says up to
 * where the file holds everything (wtlog-ring.h). */
#include "log-state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "le.h"
#include "wtlog-ring.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* The unit of the mover's O_DIRECT writes: offsets, lengths and buffers
 * aligned to the device's logical block, 4096 bytes at most on the disks
 * this runs on. */
#define WTP_LOG_BLOCK UINT64_C (4096)
/* The mover is woken once an eighth of the ring is reserved and not moved;
 * it also wakes every WTP_LOG_MOVE_PERIOD_MS, so that a reader of the
 * running log sees records without waiting long. */
#define WTP_LOG_MOVE_PERIOD_MS 50
/* The largest single O_DIRECT write of the mover. */
#define WTP_LOG_MOVE_MAX (8u << 20)

static uint64_t
wtp_log_block_floor (uint64_t at)
{
  return at / WTP_LOG_BLOCK * WTP_LOG_BLOCK;
}

/* The log opened a second time for the mover: O_DIRECT keeps the log's
 * bytes out of the page cache.  A file system without O_DIRECT (tmpfs)
 * gets the buffered descriptor. */
void
wtp_log_open_direct (const char *path)
{
  wtp_log.dfd = open (path, O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (wtp_log.dfd == -1) {
    nbdkit_debug ("log: %s: no O_DIRECT (%m): moves go through the page cache",
                  path);
    wtp_log.dfd = wtp_log.fd;
  }
}

/* Writes the ring's bytes of log positions [from, to), both on blocks, to
 * the file with O_DIRECT.  A descriptor that refuses a write (EINVAL: the
 * device's block is larger than ours) is given up for the buffered one.
 * 0 or an errno. */
static int
wtp_log_write_blocks (uint64_t from, uint64_t to)
{
  while (from < to) {
    uint64_t n = to - from < WTP_LOG_MOVE_MAX ? to - from : WTP_LOG_MOVE_MAX;
    const unsigned char *src = wtp_log.ring + from % wtp_log.ring_size;
    if (wt_pwrite_full (wtp_log.dfd, src, n, from) == -1) {
      if (errno != EINVAL || wtp_log.dfd == wtp_log.fd)
        return errno;
      nbdkit_debug ("log: %s: O_DIRECT write refused: moves go through the page cache",
                    wtp_log.path);
      close (wtp_log.dfd);
      wtp_log.dfd = wtp_log.fd;
      continue;
    }
    from += n;
  }
  return 0;
}

/* Writes the ring's bytes of log positions [from, to) through the page
 * cache, exactly those bytes.  0 or an errno. */
static int
wtp_log_write_bytes (uint64_t from, uint64_t to)
{
  if (from < to && wt_pwrite_full (wtp_log.fd, wtp_log.ring + from % wtp_log.ring_size,
                                   to - from, from) == -1)
    return errno;
  return 0;
}

/* Writes the ring's bytes of [from, to), a stretch no record written
 * straight into the file overlaps, to the file: the whole blocks inside it
 * with O_DIRECT, the partial blocks at its edges through the page cache.
 * A block is thus written with O_DIRECT at most once, whole, before any
 * write through the page cache touches it (the rest of a partial block,
 * a record written straight into the file): the two kinds of write never
 * meet in one block the wrong way round. */
static int
wtp_log_write_stretch (uint64_t from, uint64_t to)
{
  uint64_t first_whole = wtp_log_block_floor (from + WTP_LOG_BLOCK - 1);
  uint64_t last_whole = wtp_log_block_floor (to);
  if (first_whole >= last_whole)
    return wtp_log_write_bytes (from, to);
  int err = wtp_log_write_bytes (from, first_whole);
  if (!err)
    err = wtp_log_write_blocks (first_whole, last_whole);
  if (!err)
    err = wtp_log_write_bytes (last_whole, to);
  return err;
}

/* Called under move_lock: says in the ring's header that the file holds
 * every byte below moved, before the ring's space is reused (wtlog-ring.h). */
static void
wtp_log_publish_moved (void)
{
  /* One aligned store (le.h: little-endian hosts only): a reader after a
   * SIGKILL finds the old value or the new one. */
  __atomic_store_n ((uint64_t *) (wtp_log.ring_base + WTLOG_RING_OFF_MOVED),
                    wtp_log.moved, __ATOMIC_RELEASE);
}

/* The first record written straight into the file that ends after from
 * and starts before to, if any (false when none).  Takes the mutex: the
 * requests append to the list. */
static bool
wtp_log_next_hole (uint64_t from, uint64_t to, struct wtp_hole *hole)
{
  bool found = false;
  pthread_mutex_lock (&wtp_log.lock);
  for (size_t i = wtp_log.holes_first; i < wtp_log.holes_n; i++) {
    const struct wtp_hole *h = &wtp_log.holes[i];
    if (h->start >= to)
      break;
    if (h->end > from) {
      *hole = *h;
      found = true;
      break;
    }
  }
  pthread_mutex_unlock (&wtp_log.lock);
  return found;
}

/* Called with the mutex held: forgets the holes the mover has passed. */
static void
wtp_log_drop_holes (void)
{
  while (wtp_log.holes_first < wtp_log.holes_n
         && wtp_log.holes[wtp_log.holes_first].end <= wtp_log.moved)
    wtp_log.holes_first++;
  if (wtp_log.holes_first == wtp_log.holes_n)
    wtp_log.holes_first = wtp_log.holes_n = 0;
}

/* Called under move_lock after a move to target (err 0), or a failed one:
 * says so in the ring's header, frees the ring's space below moved and
 * wakes the requests waiting for room; a failure breaks the log.  0, or -1
 * with errno. */
int
wtp_log_moved (uint64_t target, int err)
{
  if (!err && target > wtp_log.moved) {
    wtp_log.moved = target;
    wtp_log_publish_moved ();
  }
  pthread_mutex_lock (&wtp_log.lock);
  if (err) {
    errno = err;
    nbdkit_error ("write: log: %s: moving bytes %" PRIu64 "-%" PRIu64
                  " from the ring: %m", wtp_log.path, wtp_log.moved, target);
    wtp_log_break ();
  }
  else {
    wtp_log_drop_holes ();
    __atomic_store_n (&wtp_log.freed, wtp_log.moved, __ATOMIC_RELEASE);
    if (wtp_log.room_waiters)
      pthread_cond_broadcast (&wtp_log.room);
  }
  pthread_mutex_unlock (&wtp_log.lock);
  errno = err;
  return err ? -1 : 0;
}

/* Copies everything the watermark has passed from the ring into the file,
 * around the records written there straight (which the watermark passed
 * too, so they are in the file).  Then the ring's space below it is free.
 * In queue mode, the queue's move (log-queue.c).  0, or -1 with errno (the
 * log is broken). */
int
wtp_log_move (void)
{
  if (wtp_log.queue)
    return wtp_log_move_queue ();
  pthread_mutex_lock (&wtp_log.move_lock);
  pthread_mutex_lock (&wtp_log.lock);
  uint64_t target = wtp_log.written;
  pthread_mutex_unlock (&wtp_log.lock);
  int err = 0;
  uint64_t at = wtp_log.moved;
  struct wtp_hole hole = { 0, 0 };
  while (!err && at < target) {
    uint64_t to = target;
    bool skip = wtp_log_next_hole (at, target, &hole);
    if (skip)
      to = hole.start > at ? hole.start : at;
    /* data=on with stage=on: the image gets each change first, in order
     * (a record written straight into the file from the file). */
    if (wtp_log.apply_image)
      err = wtp_log_apply_ring (at, to);
    if (!err)
      err = wtp_log_write_stretch (at, to);
    if (!err && skip && wtp_log.apply_image && hole.start >= at)
      err = wtp_log_apply_file (hole.start);
    at = skip ? hole.end : to;
  }
  int r = wtp_log_moved (target, err);
  err = errno;
  pthread_mutex_unlock (&wtp_log.move_lock);
  errno = err;
  return r;
}

/* nbdkit -D wtrack.mover_pause=1: the mover thread moves nothing (the
 * tests' way to fill the queue before a SIGKILL); requests still move when
 * the ring is full, and a flush, a FUA and the unload move everything. */
NBDKIT_DLL_PUBLIC int wtrack_debug_mover_pause = 0;

/* The mover: copies whole blocks from the ring to the file when woken, and
 * every WTP_LOG_MOVE_PERIOD_MS.  A failed move breaks the log; it stops. */
static void *
wtp_log_mover (void *unused)
{
  (void) unused;
  for (;;) {
    struct timespec until;
    clock_gettime (CLOCK_REALTIME, &until);
    until.tv_nsec += WTP_LOG_MOVE_PERIOD_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    sem_timedwait (&wtp_log.move_wanted, &until);
    if (__atomic_load_n (&wtp_log.mover_stop, __ATOMIC_ACQUIRE))
      break;
    if (wtrack_debug_mover_pause)
      continue;
    if (wtp_log_move () == -1)
      break;
  }
  return NULL;
}

void
wtp_log_start_mover (void)
{
  if (sem_init (&wtp_log.move_wanted, 0, 0) == 0) {
    int err = pthread_create (&wtp_log.mover, NULL, wtp_log_mover, NULL);
    if (err) {
      errno = err;
      nbdkit_debug ("log: %s: no mover thread: %m", wtp_log.path);
      sem_destroy (&wtp_log.move_wanted);
    }
    else {
      pthread_mutex_lock (&wtp_log.lock);
      wtp_log.mover_running = true;
      pthread_mutex_unlock (&wtp_log.lock);
    }
  }
}

void
wtp_log_stop_mover (void)
{
  if (wtp_log.mover_running) {
    pthread_mutex_lock (&wtp_log.lock);
    wtp_log.mover_running = false;
    pthread_mutex_unlock (&wtp_log.lock);
    __atomic_store_n (&wtp_log.mover_stop, true, __ATOMIC_RELEASE);
    sem_post (&wtp_log.move_wanted);
    pthread_join (wtp_log.mover, NULL);
    sem_destroy (&wtp_log.move_wanted);
    nbdkit_debug ("log: mover stopped");
  }
}
