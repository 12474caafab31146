/* writes.wtlog from many threads.  The mutex is held only to hand out seq and
 * position (the idea of QEMU's blklogwrites) and to move the watermark.
 * Records are encoded outside it, then written by group commit: the thread
 * that finds the oldest unwritten slot ready becomes the writer and writes
 * the whole ready prefix of the queue with one pwritev.  Writing records in
 * parallel gained nothing: ext4 serializes buffered writes to one file on
 * its inode lock, and the waiters spun on it (16% of the CPU with data=on);
 * one writer also turns many small records into one system call.
 * Slots are queued in position order; the writer wakes only the threads
 * whose slots it wrote (a broadcast would wake every waiter for every batch
 * and make them fight for the mutex), and hands the writer's role to the
 * next ready slot when its own record is written. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

static struct {
  int fd;
  char *path;
  uint64_t start_monotonic_ns;
  pthread_mutex_t lock;
  uint64_t seq;                 /* last seq handed out */
  uint64_t pos;                 /* next free byte */
  uint64_t written;             /* every byte before this is written */
  struct wtp_slot *head, *tail; /* reserved, not yet under the watermark */
  bool writing;                 /* a thread is writing a batch */
  struct iovec batch[IOV_MAX];  /* the batch, owned by the writing thread */
  bool broken;
  uint64_t broken_at;           /* first byte that can never be written */
  uint64_t failed_seq;          /* the record whose write failed ... */
  int failed_err;               /* ... gets this error, later ones EIO */
} wtp_log = {
  .fd = -1,
  .lock = PTHREAD_MUTEX_INITIALIZER,
};

uint64_t
wtp_log_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
  return now - wtp_log.start_monotonic_ns;
}

/* Writes n iovecs at *pos; *pos ends where writing stopped.  0 or -1 with
 * errno set. */
int
wtp_log_create (const char *path, const struct wtlog_header *h)
{
  unsigned char buf[WTLOG_HEADER_SIZE];
  struct iovec iov = { buf, sizeof buf };
  uint64_t pos = 0;

  wtp_log.path = strdup (path);
  if (!wtp_log.path) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  wtp_log.fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (wtp_log.fd == -1) {
    nbdkit_error ("open: log: %s: %m", path);
    return -1;
  }
  wtlog_header_encode (h, buf);
  if (wtlog_pwritev_all (wtp_log.fd, &iov, 1, &pos) == -1) {
    nbdkit_error ("write: log header: %s: %m", path);
    return -1;
  }
  wtp_log.start_monotonic_ns = h->start_monotonic_ns;
  wtp_log.pos = wtp_log.written = WTLOG_HEADER_SIZE;
  return 0;
}

bool
wtp_log_is_broken (void)
{
  return __atomic_load_n (&wtp_log.broken, __ATOMIC_ACQUIRE);
}

/* Called with the mutex held: every waiter rechecks whether its slot can
 * still be reached. */
static void
wtp_log_break (uint64_t at)
{
  if (!wtp_log.broken || at < wtp_log.broken_at)
    wtp_log.broken_at = at;
  __atomic_store_n (&wtp_log.broken, true, __ATOMIC_RELEASE);
  for (struct wtp_slot *s = wtp_log.head; s; s = s->next)
    if (s->waiting)
      pthread_cond_signal (&s->cond);
}

uint64_t
wtp_log_last_seq (void)
{
  pthread_mutex_lock (&wtp_log.lock);
  uint64_t seq = wtp_log.seq;
  pthread_mutex_unlock (&wtp_log.lock);
  return seq;
}

int
wtp_log_reserve (struct wtp_slot *slot, struct wtlog_record *rec)
{
  uint64_t size = wtlog_record_size (rec->type, rec->flags, rec->offset,
                                     rec->length);
  pthread_mutex_lock (&wtp_log.lock);
  if (wtp_log.broken) {
    pthread_mutex_unlock (&wtp_log.lock);
    errno = EIO;
    return -1;
  }
  rec->seq = slot->seq = ++wtp_log.seq;
  slot->start = wtp_log.pos;
  slot->end = wtp_log.pos += size;
  slot->ready = false;
  slot->waiting = false;
  slot->next = NULL;
  if (wtp_log.tail)
    wtp_log.tail->next = slot;
  else
    wtp_log.head = slot;
  wtp_log.tail = slot;
  pthread_mutex_unlock (&wtp_log.lock);
  return 0;
}

/* Called with the mutex held. */
static void
wtp_log_unqueue (struct wtp_slot *slot)
{
  struct wtp_slot *prev = NULL;
  for (struct wtp_slot *s = wtp_log.head; s; prev = s, s = s->next)
    if (s == slot) {
      if (prev)
        prev->next = s->next;
      else
        wtp_log.head = s->next;
      if (wtp_log.tail == s)
        wtp_log.tail = prev;
      return;
    }
}

/* Called with the mutex held: whether slot may still be written: a break
 * (a failed write or fdatasync) stops the log at broken_at. */
static bool
wtp_log_writable (const struct wtp_slot *slot)
{
  return !wtp_log.broken || slot->end <= wtp_log.broken_at;
}

/* Called with the mutex held: whether the oldest unwritten slot is ready and
 * nobody writes, so the caller may write a batch.  A gap (a slot removed
 * after a failure) stops the watermark for good. */
static bool
wtp_log_can_write_batch (void)
{
  return !wtp_log.writing && wtp_log.head && wtp_log.head->ready
    && wtp_log.head->start == wtp_log.written
    && wtp_log_writable (wtp_log.head);
}

/* Called with the mutex held: gathers the ready prefix of the queue into
 * wtp_log.batch; returns the iovec count. */
static int
wtp_log_gather (void)
{
  int n = 0;
  for (struct wtp_slot *s = wtp_log.head;
       s && s->ready && wtp_log_writable (s) && n + s->iovcnt <= IOV_MAX;
       s = s->next) {
    memcpy (wtp_log.batch + n, s->iov, s->iovcnt * sizeof *s->iov);
    n += s->iovcnt;
  }
  return n;
}

/* Called with the mutex held: every slot that ends at or before end is in
 * the file; move the watermark over them and wake their threads. */
static void
wtp_log_advance (uint64_t end)
{
  while (wtp_log.head && wtp_log.head->end <= end) {
    struct wtp_slot *s = wtp_log.head;
    wtp_log.head = s->next;
    wtp_log.written = s->end;
    if (s->waiting)
      pthread_cond_signal (&s->cond);
  }
  if (!wtp_log.head)
    wtp_log.tail = NULL;
}

/* Called with the mutex held: a batch's write stopped inside the queue's
 * head (the records before it are written and advanced over). */
static void
wtp_log_write_failed (int err)
{
  struct wtp_slot *s = wtp_log.head;
  errno = err;
  nbdkit_error ("write: log: %s: seq %" PRIu64 " at byte %" PRIu64 ": %m",
                wtp_log.path, s->seq, s->start);
  wtp_log.failed_seq = s->seq;
  wtp_log.failed_err = err;
  wtp_log_break (s->start);
}

/* Called with the mutex held, by the thread that may write a batch (see
 * wtp_log_can_write_batch); drops the mutex during the write. */
static void
wtp_log_write_batch (void)
{
  int iovcnt = wtp_log_gather ();
  uint64_t at = wtp_log.head->start;

  wtp_log.writing = true;
  pthread_mutex_unlock (&wtp_log.lock);
  int r = wtlog_pwritev_all (wtp_log.fd, wtp_log.batch, iovcnt, &at);
  int err = errno;
  pthread_mutex_lock (&wtp_log.lock);
  wtp_log.writing = false;
  wtp_log_advance (at);
  if (r == -1)
    wtp_log_write_failed (err);
}

/* Called with the mutex held: writes batches while they are there to write,
 * until the slot is under the watermark (0) or can never be, because an
 * earlier record failed (-1, EIO).  Once its own record is written the
 * thread leaves, and the next ready slot's thread takes over. */
static int
wtp_log_write_or_wait (struct wtp_slot *slot)
{
  int r = 0;
  while (wtp_log.written < slot->end) {
    if (!wtp_log_writable (slot)) {
      wtp_log_unqueue (slot);
      errno = slot->seq == wtp_log.failed_seq ? wtp_log.failed_err : EIO;
      r = -1;
      break;
    }
    if (wtp_log_can_write_batch ()) {
      wtp_log_write_batch ();
      continue;
    }
    if (!slot->waiting) {
      pthread_cond_init (&slot->cond, NULL);
      slot->waiting = true;
    }
    pthread_cond_wait (&slot->cond, &wtp_log.lock);
  }
  if (wtp_log_can_write_batch () && wtp_log.head->waiting)
    pthread_cond_signal (&wtp_log.head->cond);
  if (slot->waiting) {
    slot->waiting = false;
    pthread_cond_destroy (&slot->cond);
  }
  return r;
}

int
wtp_log_commit (struct wtp_slot *slot, struct wtlog_record *rec,
                const uint64_t *hashes, const void *data)
{
  slot->iovcnt = wtlog_encode (rec, hashes, data, slot->fixed, slot->iov);
  pthread_mutex_lock (&wtp_log.lock);
  slot->ready = true;
  int r = wtp_log_write_or_wait (slot);
  pthread_mutex_unlock (&wtp_log.lock);
  return r;
}

int
wtp_log_append (struct wtlog_record *rec, const uint64_t *hashes,
                const void *data)
{
  struct wtp_slot slot;
  if (wtp_log_reserve (&slot, rec) == -1)
    return -1;
  return wtp_log_commit (&slot, rec, hashes, data);
}

int
wtp_log_sync (void)
{
  if (fdatasync (wtp_log.fd) == 0)
    return 0;
  int err = errno;
  nbdkit_error ("fdatasync: log: %s: %m", wtp_log.path);
  pthread_mutex_lock (&wtp_log.lock);
  /* What is written may not be durable: nothing more can be acknowledged. */
  wtp_log_break (wtp_log.pos);
  pthread_mutex_unlock (&wtp_log.lock);
  errno = err;
  return -1;
}

void
wtp_log_close (void)
{
  if (wtp_log.fd >= 0) {
    if (fdatasync (wtp_log.fd) == -1)
      nbdkit_error ("fdatasync: log: %s: %m", wtp_log.path);
    if (close (wtp_log.fd) == -1)
      nbdkit_error ("close: log: %s: %m", wtp_log.path);
    wtp_log.fd = -1;
  }
  free (wtp_log.path);
  wtp_log.path = NULL;
}
