/* writes.wtlog from many threads.  The file is mapped shared into memory, and
 * a record is "in the log" once its bytes are in that mapping: they are then
 * in the page cache, which outlives nbdkit exactly as a write(2) would.
 * The mutex is held only to hand out seq and position (the idea of QEMU's
 * blklogwrites) and to move the watermark; every thread copies its own record
 * in parallel, without a system call.  With write(2), ext4 serialized the
 * writers on the log's inode lock and one system call per record (or per
 * group of records) cost more than the plugin's own work: see
 * doc/design.md, "The plugin's log".  Records of 64 KiB and more are the
 * exception: one pwritev at their reserved position costs little next to
 * their copy, and spares the zeroing of each new page (wtp_log_pwrite).
 * Space is allocated ahead with posix_fallocate, under the mutex, so that a
 * full file system fails a reservation with ENOSPC instead of a store into
 * the mapping failing with SIGBUS.  The preallocated tail is cut off when
 * the log is closed; a plugin killed before that leaves zeroes after the
 * last record, which the reader takes as the end of an unclosed log.
 * Records are reserved in position order and queued; a request is
 * acknowledged only when its record and every record before it are copied
 * (the watermark), so a log cut by SIGKILL never has a hole before an
 * acknowledged record.
 * The first store into a page of the log costs a page fault, a zeroed page
 * and the file system's page_mkwrite; a helper thread at SCHED_IDLE
 * prefaults the pages ahead of the next free byte, so that work is done
 * with CPU time nothing else wanted instead of on a request's path. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* Allocation step of the log file: few enough posix_fallocate calls (each
 * under the mutex) while a little of the file system is held in advance. */
#define WTP_LOG_GROW (64u << 20)
/* The mapping is one window of address space over the whole log, so that a
 * record's address never changes; MAP_NORESERVE costs nothing for the part
 * not used.  Smaller windows are tried when the address space is limited. */
#define WTP_LOG_WINDOW_MAX (UINT64_C (1) << 44)
#define WTP_LOG_WINDOW_MIN (UINT64_C (1) << 30)
/* How far ahead of the next free byte the helper prefaults: a fraction of a
 * second of 4 KiB writes, a few 1 MiB writes with data=on. */
#define WTP_LOG_PREFAULT_AHEAD (16u << 20)
/* Records from this size on are written with pwritev (see wtp_log_pwrite);
 * smaller ones are copied into the mapping, which costs no system call. */
#define WTP_LOG_PWRITE_MIN (64u << 10)
/* The most pieces wtlog_encode makes of a record. */
#define WTP_LOG_MAX_IOV 4

/* Whether a record of this size goes in with pwritev (wtp_log_pwrite). */
static bool
wtp_log_by_pwrite (uint64_t size)
{
  return size >= WTP_LOG_PWRITE_MIN;
}

static struct {
  int fd;
  char *path;
  uint64_t start_monotonic_ns;
  unsigned char *map;           /* the log from byte 0, MAP_SHARED */
  uint64_t window;              /* bytes of address space mapped */
  pthread_mutex_t lock;
  uint64_t seq;                 /* last seq handed out */
  uint64_t pos;                 /* next free byte */
  uint64_t allocated;           /* the file's size: bytes allocated */
  uint64_t written;             /* every record before this is copied */
  struct wtp_slot *head, *tail; /* reserved, not yet under the watermark */
  bool broken;                  /* no more reservations */
  /* The prefault helper.  It never takes the mutex: at SCHED_IDLE it could
   * be preempted while holding it, and every request would then wait for
   * an idle CPU.  Reservations publish what to prefault (prefault_from,
   * prefault_to: written under the mutex, read atomically) and post. */
  pthread_t prefaulter;
  bool prefaulter_running;      /* set before any request, by after_fork */
  sem_t prefault_wanted;
  uint64_t prefault_from, prefault_to;
  bool prefault_stop, prefault_failed;
  uint64_t page_size;
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

/* Maps the largest window the address space allows.  0 or -1 with errno. */
static int
wtp_log_map_window (void)
{
  for (uint64_t w = WTP_LOG_WINDOW_MAX; w >= WTP_LOG_WINDOW_MIN; w /= 2) {
    void *p = mmap (NULL, w, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
                    wtp_log.fd, 0);
    if (p != MAP_FAILED) {
      wtp_log.map = p;
      wtp_log.window = w;
      return 0;
    }
    if (errno != ENOMEM)
      return -1;
  }
  return -1;
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
  /* Read and write: a shared writable mapping needs both. */
  wtp_log.fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (wtp_log.fd == -1) {
    nbdkit_error ("open: log: %s: %m", path);
    return -1;
  }
  wtlog_header_encode (h, buf);
  if (wt_pwrite_full (wtp_log.fd, buf, sizeof buf, 0) == -1) {
    nbdkit_error ("write: log header: %s: %m", path);
    return -1;
  }
  wtp_log.start_monotonic_ns = h->start_monotonic_ns;
  wtp_log.pos = wtp_log.written = wtp_log.allocated = WTLOG_HEADER_SIZE;
  wtp_log.page_size = (uint64_t) sysconf (_SC_PAGESIZE);
  if (wtp_log_map_window () == -1) {
    nbdkit_error ("mmap: log: %s: %m", path);
    return -1;
  }
  return 0;
}

bool
wtp_log_is_broken (void)
{
  return __atomic_load_n (&wtp_log.broken, __ATOMIC_ACQUIRE);
}

/* Called with the mutex held.  Records already reserved are still copied
 * and acknowledged: their space is allocated, and they come before the
 * failure. */
static void
wtp_log_break (void)
{
  __atomic_store_n (&wtp_log.broken, true, __ATOMIC_RELEASE);
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
  if (end > wtp_log.window)
    return EFBIG;
  uint64_t ahead = (end + WTP_LOG_GROW - 1) / WTP_LOG_GROW * WTP_LOG_GROW;
  if (ahead > wtp_log.window)
    ahead = wtp_log.window;
  int err = wtp_log_allocate_to (ahead);
  if (err == ENOSPC || err == EFBIG)
    err = wtp_log_allocate_to (end);
  return err;
}

/* Called with the mutex held: the page boundary the helper should have
 * prefaulted up to.  Never past the allocated end, where a store is SIGBUS. */
static uint64_t
wtp_log_prefault_target (void)
{
  uint64_t target = wtp_log.pos + WTP_LOG_PREFAULT_AHEAD;
  if (target > wtp_log.allocated)
    target = wtp_log.allocated;
  return target / wtp_log.page_size * wtp_log.page_size;
}

/* Called with the mutex held: once half of what lies ahead is used, asks
 * the helper for more (one post per 8 MiB of log). */
static void
wtp_log_want_prefault (void)
{
  if (wtp_log.pos + WTP_LOG_PREFAULT_AHEAD / 2 <= wtp_log.prefault_to
      || __atomic_load_n (&wtp_log.prefault_failed, __ATOMIC_RELAXED))
    return;
  uint64_t to = wtp_log_prefault_target ();
  if (to <= wtp_log.prefault_to)
    return;                     /* until the allocation grows */
  uint64_t from = wtp_log.pos / wtp_log.page_size * wtp_log.page_size;
  __atomic_store_n (&wtp_log.prefault_from, from, __ATOMIC_RELAXED);
  __atomic_store_n (&wtp_log.prefault_to, to, __ATOMIC_RELEASE);
  sem_post (&wtp_log.prefault_wanted);
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
  /* The requests check their record's size before they touch the image;
   * one that did not could never be encoded, and breaks the log below. */
  int err = wtlog_record_size_ok (size) ? wtp_log_allocate (wtp_log.pos + size)
    : EFBIG;
  if (err) {
    /* The request's effect on the image can never be logged: from here on
     * the log would not replay to the image, so it takes nothing more. */
    wtp_log_break ();
    errno = err;
    nbdkit_error ("write: log: %s: seq %" PRIu64 " at byte %" PRIu64 ": %m",
                  wtp_log.path, wtp_log.seq + 1, wtp_log.pos);
    pthread_mutex_unlock (&wtp_log.lock);
    errno = err;
    return -1;
  }
  rec->seq = ++wtp_log.seq;
  slot->start = wtp_log.pos;
  slot->end = wtp_log.pos += size;
  /* pwritev fills a large record's pages without zeroing them first:
   * prefaulting them would only add that work. */
  if (wtp_log.prefaulter_running && !wtp_log_by_pwrite (size))
    wtp_log_want_prefault ();
  slot->copied = false;
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

/* Puts a large record into the page cache with pwritev instead of the
 * mapping: a page that pwrite fills whole is never zeroed first, where the
 * first store into a page of the mapping makes the kernel zero (or read)
 * it, which for data=on's 1 MiB writes cost as much as the copy itself.
 * Both land in the same page cache, so the mapping sees the record.
 * Returns false (errno set) when the pwritev failed. */
static bool
wtp_log_pwrite (const struct wtp_slot *slot, const struct iovec *iov, int iovcnt)
{
  struct iovec left[WTP_LOG_MAX_IOV];
  uint64_t pos = slot->start;
  memcpy (left, iov, (size_t) iovcnt * sizeof *left);
  return wt_pwritev_full (wtp_log.fd, left, iovcnt, &pos) == 0;
}

/* Copies the encoded record to its place in the log.  A large record that
 * pwritev could not write is copied through the mapping as a small one is,
 * so it fails (if it does) as every store into the mapping does. */
static void
wtp_log_copy (const struct wtp_slot *slot, const struct iovec *iov, int iovcnt)
{
  if (wtp_log_by_pwrite (slot->end - slot->start) && iovcnt <= WTP_LOG_MAX_IOV) {
    if (wtp_log_pwrite (slot, iov, iovcnt))
      return;
    nbdkit_debug ("log: %s: pwritev at byte %" PRIu64 ": %m; copying through the mapping",
                  wtp_log.path, slot->start);
  }
  unsigned char *to = wtp_log.map + slot->start;
  for (int i = 0; i < iovcnt; i++) {
    memcpy (to, iov[i].iov_base, iov[i].iov_len);
    to += iov[i].iov_len;
  }
}

/* Called with the mutex held: moves the watermark over the copied prefix of
 * the queue and wakes the threads whose records it passed. */
static void
wtp_log_advance (void)
{
  while (wtp_log.head && wtp_log.head->copied) {
    struct wtp_slot *s = wtp_log.head;
    wtp_log.head = s->next;
    wtp_log.written = s->end;
    if (s->waiting)
      pthread_cond_signal (&s->cond);
  }
  if (!wtp_log.head)
    wtp_log.tail = NULL;
}

uint64_t
wtp_log_copy_record (struct wtp_slot *slot, struct wtlog_record *rec,
                     const uint64_t *hashes, const void *data)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[WTP_LOG_MAX_IOV];
  int iovcnt = wtlog_encode (rec, hashes, data, fixed, iov);
  wtp_log_copy (slot, iov, iovcnt);
  uint64_t nhashes = hashes && wtlog_has_hashes (rec->type, rec->flags)
    ? wtlog_sectors_touched (rec->offset, rec->length) : 0;
  return slot->start + WTLOG_FIXED_SIZE + 8 * nhashes;
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
  wtp_log_copy_record (slot, rec, hashes, data);
  wtp_log_wait (slot);
}

const unsigned char *
wtp_log_map (void)
{
  return wtp_log.map;
}

int
wtp_log_append (struct wtlog_record *rec, const uint64_t *hashes,
                const void *data)
{
  struct wtp_slot slot;
  if (wtp_log_reserve (&slot, rec) == -1)
    return -1;
  wtp_log_commit (&slot, rec, hashes, data);
  return 0;
}

int
wtp_log_sync (void)
{
  /* fdatasync writes back the pages dirtied through the mapping too. */
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

/* Reads one byte of every page in [from, to) of the mapping.  Where the
 * hypervisor shadows the guest's page tables (seen on these test machines),
 * the first access to a page after the kernel mapped it still traps to the
 * hypervisor, about a microsecond a page: reading here takes that trap off
 * the requests too.  The loads are atomic because a request may be copying
 * its record into the same page. */
static void
wtp_log_touch (uint64_t from, uint64_t to)
{
  unsigned char sum = 0;
  for (uint64_t at = from; at < to; at += wtp_log.page_size)
    sum += __atomic_load_n (wtp_log.map + at, __ATOMIC_RELAXED);
  __asm__ volatile ("" : : "r" (sum));
}

/* The helper: prefaults what the reservations ask for.  Pages the requests
 * reached while it waited for a CPU are skipped (faulted in already).
 * MADV_POPULATE_WRITE takes the same write faults a store would, so the
 * pages are as a store leaves them; it fails (instead of raising SIGBUS)
 * where a store would fail, and then the helper stops: requests fault their
 * pages themselves, as without it. */
static void *
wtp_log_prefault (void *unused)
{
  struct sched_param idle = { 0 };
  uint64_t done = 0;

  (void) unused;
  pthread_setschedparam (pthread_self (), SCHED_IDLE, &idle);
  for (;;) {
    if (sem_wait (&wtp_log.prefault_wanted) == -1)
      continue;                 /* EINTR */
    if (__atomic_load_n (&wtp_log.prefault_stop, __ATOMIC_ACQUIRE))
      break;
    uint64_t to = __atomic_load_n (&wtp_log.prefault_to, __ATOMIC_ACQUIRE);
    uint64_t from = __atomic_load_n (&wtp_log.prefault_from, __ATOMIC_RELAXED);
    if (from < done)
      from = done;
    if (from >= to)
      continue;
    if (madvise (wtp_log.map + from, to - from, MADV_POPULATE_WRITE) == -1) {
      nbdkit_debug ("log: %s: no more prefaulting at byte %" PRIu64 ": %m",
                    wtp_log.path, from);
      __atomic_store_n (&wtp_log.prefault_failed, true, __ATOMIC_RELAXED);
      break;
    }
    wtp_log_touch (from, to);
    done = to;
  }
  return NULL;
}

void
wtp_log_start_prefaulting (void)
{
  if (!wtp_log.map || sem_init (&wtp_log.prefault_wanted, 0, 0) == -1)
    return;
  int err = pthread_create (&wtp_log.prefaulter, NULL, wtp_log_prefault, NULL);
  if (err) {
    errno = err;
    nbdkit_debug ("log: %s: no prefault thread: %m", wtp_log.path);
    sem_destroy (&wtp_log.prefault_wanted);
    return;
  }
  wtp_log.prefaulter_running = true;
}

void
wtp_log_stop_prefaulting (void)
{
  if (!wtp_log.prefaulter_running)
    return;
  __atomic_store_n (&wtp_log.prefault_stop, true, __ATOMIC_RELEASE);
  sem_post (&wtp_log.prefault_wanted);
  pthread_join (wtp_log.prefaulter, NULL);
  sem_destroy (&wtp_log.prefault_wanted);
  wtp_log.prefaulter_running = false;
  nbdkit_debug ("log: prefault helper stopped");
}

void
wtp_log_close (void)
{
  /* nbdkit does not promise to call .cleanup: the helper must not outlive
   * the mapping it prefaults. */
  wtp_log_stop_prefaulting ();
  if (wtp_log.map) {
    munmap (wtp_log.map, wtp_log.window);
    wtp_log.map = NULL;
  }
  if (wtp_log.fd >= 0) {
    /* Cut off the space allocated ahead: the file ends with its last
     * record. */
    if (ftruncate (wtp_log.fd, (off_t) wtp_log.written) == -1)
      nbdkit_error ("ftruncate: log: %s: %m", wtp_log.path);
    if (fdatasync (wtp_log.fd) == -1)
      nbdkit_error ("fdatasync: log: %s: %m", wtp_log.path);
    if (close (wtp_log.fd) == -1)
      nbdkit_error ("close: log: %s: %m", wtp_log.path);
    wtp_log.fd = -1;
  }
  free (wtp_log.path);
  wtp_log.path = NULL;
}
