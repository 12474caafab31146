/* writes.wtlog from many threads.  A record under 64 KiB goes first into
 * the ring, a fixed file beside the log (LOG.ring, doc/formats.md) mapped
 * shared into
 * memory: every thread copies its own record there in parallel, without a
 * system call, and a record is "in the log" once its bytes are in that
 * mapping: they are then in the page cache, which outlives nbdkit exactly
 * as a write(2) would.  A mover (a thread, or a request that needs room or
 * a flush) then copies the ring's bytes to their place in the log file,
 * with O_DIRECT where the file system has it, in large blocks.  A larger
 * record is written straight into the log with pwritev, and the mover
 * steps over it.
 * The mutex is held only to hand out seq and position (the idea of QEMU's
 * blklogwrites) and to move the watermark.  Records are reserved in
 * position order and queued; a request is acknowledged only when its record
 * and every record before it are copied (the watermark), so a log cut by
 * SIGKILL never has a hole before an acknowledged record.  A killed plugin
 * leaves the newest records in the ring only: every reader completes the
 * log from it first (wtlog_ring_recover).
 * Space is allocated ahead with posix_fallocate, under the mutex, so that a
 * full file system fails a reservation with ENOSPC instead of a move.  The
 * preallocated tail is cut off when the log is closed; a plugin killed
 * before that leaves zeroes after the last record, which the reader takes
 * as the end of an unclosed log.
 * This file: the reservation and the watermark, the copy of a record to its
 * place, reads of logged bytes, and the log's creation and close;
 * log-ring.c maps the ring and prefaults it, log-mover.c moves its bytes
 * into the file. */
#include "log.h"
#include "log-state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "image-apply.h"
#include "wtlog-ring.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* Allocation step of the log file: few enough posix_fallocate calls (each
 * under the mutex) while a little of the file system is held in advance. */
#define WTP_LOG_GROW (64u << 20)
/* Records from this size on are written straight into the log with
 * pwritev (wtp_log_copy_direct); smaller ones go through the ring. */
#define WTP_LOG_DIRECT_MIN (64u << 10)
/* Records up to this size (an 8 KiB write with its bytes, or the hashes
 * of one of up to 500 KiB) are copied by wtp_log_reserve_copy under the
 * mutex, in the pass that reserves them, when no earlier record is still
 * being copied: the request takes the mutex once instead of twice and
 * never waits for the watermark.  A 4 KiB record's copy and CRC take
 * about 0.3 us, short enough to hold the mutex for (copied outside it,
 * the queue's 4 KiB writes waited for the watermark: 0.6 context switches
 * a request, measured); the bound keeps longer copies out of it. */
#define WTP_LOG_COPY_NOW_MAX 8448u

uint64_t
wtp_log_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
  return now - wtp_log.start_monotonic_ns;
}

int
wtp_log_create (const char *path, const struct wtlog_header *h)
{
  unsigned char buf[WTLOG_HEADER_SIZE];

  wtp_log.path = strdup (path);
  if (!wtp_log.path) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  wtp_log.fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (wtp_log.fd == -1) {
    nbdkit_error ("open: log: %s: %m", path);
    return -1;
  }
  /* Emptied only once the ring's lock says no other nbdkit writes it. */
  if (wtp_log_create_ring (h) == -1)
    return -1;
  if (ftruncate (wtp_log.fd, 0) == -1) {
    nbdkit_error ("truncate: log: %s: %m", path);
    return -1;
  }
  wtp_log.owned = true;
  wtlog_header_encode (h, buf);
  if (wt_pwrite_full (wtp_log.fd, buf, sizeof buf, 0) == -1) {
    nbdkit_error ("write: log header: %s: %m", path);
    return -1;
  }
  wtp_log.start_monotonic_ns = h->start_monotonic_ns;
  wtp_log.pos = wtp_log.written = wtp_log.allocated = WTLOG_HEADER_SIZE;
  wtp_log.freed = wtp_log.moved = wtp_log.kicked = WTLOG_HEADER_SIZE;
  wtp_log.page_size = (uint64_t) sysconf (_SC_PAGESIZE);
  wtp_log_open_direct (path);
  return 0;
}

bool
wtp_log_is_broken (void)
{
  return __atomic_load_n (&wtp_log.broken, __ATOMIC_ACQUIRE);
}

uint64_t
wtp_log_last_seq (void)
{
  pthread_mutex_lock (&wtp_log.lock);
  uint64_t seq = wtp_log.seq;
  pthread_mutex_unlock (&wtp_log.lock);
  return seq;
}

/* posix_fallocate from the allocated end to byte end.  0 or an errno. */
static int
wtp_log_allocate_to (uint64_t end)
{
  int err;
  do
    err = posix_fallocate (wtp_log.fd, (off_t) wtp_log.allocated,
                           (off_t) (end - wtp_log.allocated));
  while (err == EINTR);
  if (err == 0)
    wtp_log.allocated = end;
  return err;
}

/* Called with the mutex held: makes the file at least end bytes long, with
 * its blocks allocated; a step ahead when the file system has room, else
 * just what is needed.  0 or an errno. */
static int
wtp_log_allocate (uint64_t end)
{
  if (end <= wtp_log.allocated)
    return 0;
  uint64_t ahead = (end + WTP_LOG_GROW - 1) / WTP_LOG_GROW * WTP_LOG_GROW;
  int err = wtp_log_allocate_to (ahead);
  if (err == ENOSPC || err == EFBIG)
    err = wtp_log_allocate_to (end);
  return err;
}

/* Called with the mutex held: waits until the ring has room for size bytes
 * at pos, moving what it can itself (the mover may not run) and otherwise
 * waiting for the records before it to be copied.  0 or an errno. */
static int
wtp_log_wait_room (uint64_t size)
{
  while (wtp_log.pos + size > wtp_log.freed + wtp_log.ring_size) {
    if (wtp_log.broken)
      return EIO;
    if (wtp_log.written > wtp_log.freed) {
      pthread_mutex_unlock (&wtp_log.lock);
      wtp_log_move ();
      pthread_mutex_lock (&wtp_log.lock);
      continue;
    }
    wtp_log.room_waiters++;
    pthread_cond_wait (&wtp_log.room, &wtp_log.lock);
    wtp_log.room_waiters--;
  }
  return 0;
}

/* Called with the mutex held: wakes the mover once an eighth of the ring
 * was reserved since it was last woken. */
static void
wtp_log_want_move (void)
{
  if (!wtp_log.mover_running || wtp_log.pos - wtp_log.kicked < wtp_log.ring_size / 8)
    return;
  wtp_log.kicked = wtp_log.pos;
  sem_post (&wtp_log.move_wanted);
}

/* Whether a record of this size goes straight into the file.  A large
 * record's copy costs more than the system call; pwritev fills whole pages
 * without zeroing them first, and the ring stays small. */
static bool
wtp_log_is_direct (uint64_t size)
{
  /* The queue's log file is written by the mover alone, at its own
   * positions. */
  return !wtp_log.queue && size >= WTP_LOG_DIRECT_MIN;
}

bool
wtp_log_record_fits (uint64_t size)
{
  if (!wtlog_record_size_ok (size)) {
    nbdkit_error ("write: log: %s: a record of %" PRIu64 " bytes is larger "
                  "than the format holds", wtp_log.path, size);
    return false;
  }
  /* ring_size is set when the log is created and never changes. */
  if (wtp_log_is_direct (size) || size <= wtp_log.ring_size)
    return true;
  nbdkit_error ("write: log: %s: a record of %" PRIu64 " bytes cannot go "
                "through the ring of %" PRIu64 " bytes", wtp_log.path, size,
                wtp_log.ring_size);
  return false;
}

/* Called with the mutex held: puts a large record of size bytes at pos in
 * the list of holes the mover skips.  0 or an errno. */
static int
wtp_log_add_hole (uint64_t size)
{
  if (wtp_log.holes_n == wtp_log.holes_cap) {
    size_t cap = wtp_log.holes_cap ? 2 * wtp_log.holes_cap : 16;
    struct wtp_hole *h = realloc (wtp_log.holes, cap * sizeof *h);
    if (!h)
      return ENOMEM;
    wtp_log.holes = h;
    wtp_log.holes_cap = cap;
  }
  wtp_log.holes[wtp_log.holes_n++] = (struct wtp_hole) {
    .start = wtp_log.pos, .end = wtp_log.pos + size,
  };
  return 0;
}

/* Called with the mutex held, which it may let go of while it waits for
 * room in the ring: takes the record's seq and size bytes of the log for
 * slot, allocating the file's space.  0, or -1 with errno: EIO when the log
 * is broken, else the error that broke it. */
static int
wtp_log_take (struct wtp_slot *slot, struct wtlog_record *rec, uint64_t size)
{
  if (wtp_log.broken) {
    errno = EIO;
    return -1;
  }
  /* The requests check their record's size before they touch the image;
   * one that did not could never be encoded, and breaks the log below. */
  bool direct = wtp_log_is_direct (size);
  int err = wtlog_record_size_ok (size) ? 0 : EFBIG;
  /* The wait for room lets go of the mutex: pos is taken after it. */
  if (!err && !direct)
    err = wtp_log_wait_room (size);
  /* The queue's mover extends the log file itself (a fraction of this). */
  if (!err && !wtp_log.queue)
    err = wtp_log_allocate (wtp_log.pos + size);
  if (!err && direct)
    err = wtp_log_add_hole (size);
  if (err) {
    /* The request's effect on the image can never be logged: from here on
     * the log would not replay to the image, so it takes nothing more. */
    if (!wtp_log.broken) {
      errno = err;
      nbdkit_error ("write: log: %s: seq %" PRIu64 " at byte %" PRIu64 ": %m",
                    wtp_log.path, wtp_log.seq + 1, wtp_log.pos);
    }
    wtp_log_break ();
    errno = err;
    return -1;
  }
  rec->seq = ++wtp_log.seq;
  slot->start = wtp_log.pos;
  slot->end = wtp_log.pos += size;
  if (wtp_log.apply_image && wt_record_changes_disk (rec)
      && !(rec->flags & WTLOG_F_APPLIED))
    __atomic_store_n (&wtp_log.apply_end, slot->end, __ATOMIC_RELEASE);
  wtp_log_want_move ();
  return 0;
}

/* Called with the mutex held: puts slot at the end of the queue of records
 * being copied, which the watermark passes in order. */
static void
wtp_log_enqueue (struct wtp_slot *slot)
{
  slot->copied = false;
  slot->waiting = false;
  slot->next = NULL;
  if (wtp_log.tail)
    wtp_log.tail->next = slot;
  else
    wtp_log.head = slot;
  wtp_log.tail = slot;
}

/* Writes a large record straight to its place in the file with pwritev.
 * Its space is allocated: a failure (EIO) is the file system's, as a store
 * into a mapping that raises SIGBUS; nbdkit stops here too, so that nothing
 * unlogged is acknowledged. */
static void
wtp_log_copy_direct (const struct wtp_slot *slot, const struct iovec *iov,
                     int iovcnt)
{
  struct iovec left[4];
  uint64_t pos = slot->start;
  memcpy (left, iov, (size_t) iovcnt * sizeof *left);
  if (wt_pwritev_full (wtp_log.fd, left, iovcnt, &pos) == 0)
    return;
  nbdkit_error ("write: log: %s: record at byte %" PRIu64 ": %m: stopping",
                wtp_log.path, slot->start);
  abort ();
}

/* Copies the encoded record to its place: in the ring, contiguous in
 * memory even where it wraps around the ring's end (the ring is mapped
 * twice), or in the file for a large one. */
static void
wtp_log_copy (const struct wtp_slot *slot, const struct iovec *iov, int iovcnt)
{
  if (wtp_log_is_direct (slot->end - slot->start)) {
    wtp_log_copy_direct (slot, iov, iovcnt);
    return;
  }
  unsigned char *to = wtp_log.ring + slot->start % wtp_log.ring_size;
  for (int i = 0; i < iovcnt; i++) {
    memcpy (to, iov[i].iov_base, iov[i].iov_len);
    to += iov[i].iov_len;
  }
}

/* Called with the mutex held: moves the watermark over the copied prefix of
 * the queue and wakes the threads whose records it passed, and those that
 * wait for room (what the watermark passed can be moved). */
static void
wtp_log_advance (void)
{
  bool moved_on = false;
  while (wtp_log.head && wtp_log.head->copied) {
    struct wtp_slot *s = wtp_log.head;
    wtp_log.head = s->next;
    wtp_log.written = s->end;
    moved_on = true;
    if (s->waiting)
      pthread_cond_signal (&s->cond);
  }
  if (!wtp_log.head)
    wtp_log.tail = NULL;
  if (moved_on && wtp_log.room_waiters)
    pthread_cond_broadcast (&wtp_log.room);
}

void
wtp_log_copy_record (struct wtp_slot *slot, struct wtlog_record *rec,
                     const uint64_t *hashes, const void *data)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  int iovcnt = wtlog_encode (rec, hashes, data, fixed, iov);
  wtp_log_copy (slot, iov, iovcnt);
}

/* Called with the mutex held: copies a small record into its slot while no
 * earlier record is still being copied, and moves the watermark past it.
 * Whether it did. */
static bool
wtp_log_copy_now (struct wtp_slot *slot, struct wtlog_record *rec,
                  const uint64_t *hashes, const void *data)
{
  if (slot->end - slot->start > WTP_LOG_COPY_NOW_MAX || wtp_log.head)
    return false;
  wtp_log_copy_record (slot, rec, hashes, data);
  slot->copied = true;
  wtp_log.written = slot->end;
  if (wtp_log.room_waiters)
    pthread_cond_broadcast (&wtp_log.room);
  return true;
}

/* One pass over the mutex: the reservation, and the copy too when
 * wtp_log_copy_now can. */
int
wtp_log_reserve_copy (struct wtp_slot *slot, struct wtlog_record *rec,
                      const uint64_t *hashes, const void *data)
{
  uint64_t size = wtlog_record_size (rec->type, rec->flags, rec->offset,
                                     rec->length);
  pthread_mutex_lock (&wtp_log.lock);
  int r = wtp_log_take (slot, rec, size);
  if (r == 0 && !wtp_log_copy_now (slot, rec, hashes, data))
    wtp_log_enqueue (slot);
  pthread_mutex_unlock (&wtp_log.lock);
  return r;
}

void
wtp_log_wait (struct wtp_slot *slot)
{
  pthread_mutex_lock (&wtp_log.lock);
  slot->copied = true;
  wtp_log_advance ();
  if (wtp_log.written < slot->end) {
    pthread_cond_init (&slot->cond, NULL);
    slot->waiting = true;
    while (wtp_log.written < slot->end)
      pthread_cond_wait (&slot->cond, &wtp_log.lock);
    pthread_cond_destroy (&slot->cond);
  }
  pthread_mutex_unlock (&wtp_log.lock);
}

void
wtp_log_commit (struct wtp_slot *slot, struct wtlog_record *rec,
                const uint64_t *hashes, const void *data)
{
  if (slot->copied)
    return;                     /* wtp_log_reserve_copy did it all */
  wtp_log_copy_record (slot, rec, hashes, data);
  wtp_log_wait (slot);
}

uint64_t
wtp_log_apply_end (void)
{
  return __atomic_load_n (&wtp_log.apply_end, __ATOMIC_ACQUIRE);
}

int
wtp_log_append (struct wtlog_record *rec, const uint64_t *hashes,
                const void *data)
{
  struct wtp_slot slot;
  if (wtp_log_reserve_copy (&slot, rec, hashes, data) == -1)
    return -1;
  wtp_log_commit (&slot, rec, hashes, data);
  return 0;
}

int
wtp_log_settle (void)
{
  return wtp_log_move ();
}

int
wtp_log_sync (void)
{
  /* The queue: the image holds what the log's records say is applied. */
  if (wtp_log_move () == -1 || wtp_log_sync_image () == -1)
    return -1;
  /* The moves' data and the extents they converted from unwritten. */
  if (fdatasync (wtp_log.fd) == 0)
    return 0;
  int err = errno;
  nbdkit_error ("fdatasync: log: %s: %m", wtp_log.path);
  pthread_mutex_lock (&wtp_log.lock);
  /* What is written may not be durable: nothing more can be acknowledged. */
  wtp_log_break ();
  pthread_mutex_unlock (&wtp_log.lock);
  errno = err;
  return -1;
}

void
wtp_log_start_threads (void)
{
  if (!wtp_log.ring)
    return;
  wtp_log_start_mover ();
  wtp_log_start_prefault ();
}

void
wtp_log_stop_threads (void)
{
  wtp_log_stop_mover ();
  wtp_log_stop_prefault ();
}

void
wtp_log_close (void)
{
  /* nbdkit does not promise to call .cleanup: the threads must not outlive
   * the mappings they work on. */
  wtp_log_stop_threads ();
  /* A ring whose log this plugin never wrote holds nothing. */
  bool all_moved = !wtp_log.owned || wtp_log_move () == 0;
  if (wtp_log.dfd >= 0 && wtp_log.dfd != wtp_log.fd)
    close (wtp_log.dfd);
  wtp_log.dfd = -1;
  if (wtp_log.fd >= 0 && !wtp_log.owned) {
    /* Another nbdkit's log (its ring was locked): not ours to touch. */
    close (wtp_log.fd);
    wtp_log.fd = -1;
  }
  if (wtp_log.fd >= 0) {
    /* Cut off the space allocated ahead: the file ends with its last
     * record. */
    uint64_t end = wtp_log.queue ? wtp_log.file_end : wtp_log.written;
    if (ftruncate (wtp_log.fd, (off_t) end) == -1) {
      nbdkit_error ("ftruncate: log: %s: %m", wtp_log.path);
      all_moved = false;
    }
    if (fdatasync (wtp_log.fd) == -1) {
      nbdkit_error ("fdatasync: log: %s: %m", wtp_log.path);
      all_moved = false;
    }
    if (close (wtp_log.fd) == -1)
      nbdkit_error ("close: log: %s: %m", wtp_log.path);
    wtp_log.fd = -1;
  }
  wtp_log_close_ring (all_moved);
  free (wtp_log.holes);
  wtp_log.holes = NULL;
  free (wtp_log.qbuf);
  wtp_log.qbuf = NULL;
  free (wtp_log.path);
  wtp_log.path = NULL;
}
