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
 * Why a ring: a store into a new page of a mapping costs a page fault, a
 * zeroed page and the file system's page_mkwrite, several microseconds on
 * the machines measured (doc/design.md, "Measuring speed"), and a log
 * mapped whole took a new page per 4 KiB written; the ring's pages are
 * mapped once and used again, and O_DIRECT adds no page to the cache.  With
 * write(2) per record, ext4 serialized the writers on the log's inode lock
 * and the system call cost more than the plugin's own work.
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
 * as the end of an unclosed log. */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "le.h"
#include "wtlog-ring.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* Allocation step of the log file: few enough posix_fallocate calls (each
 * under the mutex) while a little of the file system is held in advance. */
#define WTP_LOG_GROW (64u << 20)
/* The mapping of the log file (read only: reads of the disk's data with
 * data=on) is one window of address space over the whole log, so that a
 * position's address never changes; MAP_NORESERVE costs nothing for the
 * part not used.  Smaller windows are tried when the address space is
 * limited. */
#define WTP_LOG_WINDOW_MAX (UINT64_C (1) << 44)
#define WTP_LOG_WINDOW_MIN (UINT64_C (1) << 30)
/* Records from this size on are written straight into the log with
 * pwritev (wtp_log_copy_direct); smaller ones go through the ring. */
#define WTP_LOG_DIRECT_MIN (64u << 10)
/* Records up to this size (the hashes of a write of up to 60 KiB) are
 * copied by wtp_log_reserve_copy under the mutex, in the pass that reserves
 * them, when no earlier record is still being copied: the request takes
 * the mutex once instead of twice and never waits for the watermark.  The
 * bound keeps long copies (data, many hashes) out of the mutex. */
#define WTP_LOG_COPY_NOW_MAX 1024u
/* The ring's size.  Other sizes measured slower here: 4 KiB random data=on
 * writes against nbdkit file, paired rounds, 0.85x with 64 MiB, about
 * 0.75x with 16 or 32 MiB, 0.57x-0.80x with 136 MiB (doc/design.md). */
#define WTP_LOG_RING_SIZE (UINT64_C (64) << 20)
/* The ring of a log without DATA.  Its records are the write's hashes, 8
 * bytes a sector (about 130 bytes for a 4 KiB write, 3% of the data), so
 * 8 MiB holds over a second of records at the fastest rate measured, and
 * the run keeps 56 MiB less page cache and prefaults an eighth of the
 * pages (doc/design.md, "The plugin's log"). */
#define WTP_LOG_RING_SIZE_HASHES (UINT64_C (8) << 20)
/* The smallest ring, on a file system without room for the full one: it
 * holds a few of the records that go through it (less than
 * WTP_LOG_DIRECT_MIN each). */
#define WTP_LOG_RING_MIN (UINT64_C (256) << 10)
/* The unit of the mover's O_DIRECT writes: offsets, lengths and buffers
 * aligned to the device's logical block, 4096 bytes at most on the disks
 * this runs on. */
#define WTP_LOG_BLOCK UINT64_C (4096)
/* The mover is woken once an eighth of the ring is reserved and not moved;
 * it also wakes every WTP_LOG_MOVE_PERIOD_MS, so that a reader of the
 * running log sees records without waiting long. */
#define WTP_LOG_MOVE_PERIOD_MS 50
/* Data positions (wtp_log_copy_record) of records written straight into
 * the file carry this bit: their bytes are read from the file. */
#define WTP_LOG_POS_FILE (UINT64_C (1) << 63)
/* The largest single O_DIRECT write of the mover. */
#define WTP_LOG_MOVE_MAX (8u << 20)

static struct {
  int fd;                       /* the log: header, allocation, sync, close */
  bool owned;                   /* emptied and written by this plugin */
  int dfd;                      /* the log again, O_DIRECT if it can be: moves */
  char *path;
  uint64_t start_monotonic_ns;
  const unsigned char *map;     /* the log from byte 0: bytes below freed */
  uint64_t window;              /* bytes of address space mapped */
  /* The ring: its header page, then ring_size bytes mapped twice in a row,
   * so that a record that wraps around the end is contiguous in memory. */
  int ring_fd;
  bool ring_locked;             /* this plugin holds the ring's flock */
  char *ring_path;
  unsigned char *ring_base;     /* the header page */
  unsigned char *ring;          /* ring_size * 2 bytes of addresses */
  uint64_t ring_size;
  pthread_mutex_t lock;
  pthread_cond_t room;          /* freed or the watermark moved, or a break */
  unsigned room_waiters;
  uint64_t seq;                 /* last seq handed out */
  uint64_t pos;                 /* next free byte */
  uint64_t allocated;           /* the file's size: bytes allocated */
  uint64_t written;             /* every record before this is copied */
  uint64_t kicked;              /* pos when the mover was last woken */
  /* Log positions below freed are in the file, and their bytes in the ring
   * may be overwritten (read atomically by wtp_log_read). */
  uint64_t freed;
  struct wtp_slot *head, *tail; /* reserved, not yet under the watermark */
  /* Records written straight into the file that the mover has not passed,
   * in log order: the mover skips them (holes[first..n)). */
  struct wtp_hole { uint64_t start, end; } *holes;
  size_t holes_first, holes_n, holes_cap;
  bool broken;                  /* no more reservations */
  /* Moves: one at a time, under move_lock. */
  pthread_mutex_t move_lock;
  uint64_t moved;               /* every byte below this is in the file */
  /* The mover thread. */
  pthread_t mover;
  bool mover_running;           /* set before any request, by after_fork */
  bool mover_stop;
  sem_t move_wanted;
  /* The prefault helper: maps the ring's pages once, at SCHED_IDLE.  It
   * never takes the mutex: at SCHED_IDLE it could be preempted while
   * holding it, and every request would then wait for an idle CPU. */
  pthread_t prefaulter;
  bool prefaulter_running;
  bool prefault_stop;
  uint64_t page_size;
} wtp_log = {
  .fd = -1, .dfd = -1, .ring_fd = -1,
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .room = PTHREAD_COND_INITIALIZER,
  .move_lock = PTHREAD_MUTEX_INITIALIZER,
};

uint64_t
wtp_log_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
  return now - wtp_log.start_monotonic_ns;
}

static uint64_t
wtp_log_block_floor (uint64_t at)
{
  return at / WTP_LOG_BLOCK * WTP_LOG_BLOCK;
}

/* Maps the largest window the address space allows.  0 or -1 with errno. */
static int
wtp_log_map_window (void)
{
  for (uint64_t w = WTP_LOG_WINDOW_MAX; w >= WTP_LOG_WINDOW_MIN; w /= 2) {
    void *p = mmap (NULL, w, PROT_READ, MAP_SHARED | MAP_NORESERVE,
                    wtp_log.fd, 0);
    if (p != MAP_FAILED) {
      /* Reads here are the disk's reads: no use reading ahead in the log. */
      madvise (p, w, MADV_RANDOM);
      wtp_log.map = p;
      wtp_log.window = w;
      return 0;
    }
    if (errno != ENOMEM)
      return -1;
  }
  return -1;
}

/* The log opened a second time for the mover: O_DIRECT keeps the log's
 * bytes out of the page cache.  A file system without O_DIRECT (tmpfs)
 * gets the buffered descriptor. */
static void
wtp_log_open_direct (const char *path)
{
  wtp_log.dfd = open (path, O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (wtp_log.dfd == -1) {
    nbdkit_debug ("log: %s: no O_DIRECT (%m): moves go through the page cache",
                  path);
    wtp_log.dfd = wtp_log.fd;
  }
}

/* Maps the ring file's header page and its ring twice in a row, in one
 * reserved stretch of address space.  0 or -1 with errno. */
static int
wtp_log_map_ring (void)
{
  uint64_t r = wtp_log.ring_size;
  uint64_t whole = WTLOG_RING_HEADER_SIZE + 2 * r;
  unsigned char *base = mmap (NULL, whole, PROT_NONE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return -1;
  if (mmap (base, WTLOG_RING_HEADER_SIZE + r, PROT_READ | PROT_WRITE,
            MAP_SHARED | MAP_FIXED, wtp_log.ring_fd, 0) == MAP_FAILED
      || mmap (base + WTLOG_RING_HEADER_SIZE + r, r, PROT_READ | PROT_WRITE,
               MAP_SHARED | MAP_FIXED, wtp_log.ring_fd,
               WTLOG_RING_HEADER_SIZE) == MAP_FAILED) {
    int err = errno;
    munmap (base, whole);
    errno = err;
    return -1;
  }
  wtp_log.ring_base = base;
  wtp_log.ring = base + WTLOG_RING_HEADER_SIZE;
  return 0;
}

/* Empties the ring file and allocates its space: *size bytes, or less
 * (halved down to WTP_LOG_RING_MIN) on a file system without room for
 * them, where the log itself may still fit.  0 or an errno. */
static int
wtp_log_allocate_ring (uint64_t *size)
{
  if (ftruncate (wtp_log.ring_fd, 0) == -1)
    return errno;
  for (;;) {
    int err = posix_fallocate (wtp_log.ring_fd, 0,
                               (off_t) (WTLOG_RING_HEADER_SIZE + *size));
    if (err != ENOSPC && err != EFBIG)
      return err;
    if (*size / 2 < WTP_LOG_RING_MIN)
      return err;
    *size /= 2;
  }
}

/* Creates LOG.ring, locked while this plugin lives (a reader recovers only
 * from a ring nobody holds), its space allocated, its header written, and
 * maps it.  0 or -1 (error reported). */
static int
wtp_log_create_ring (const struct wtlog_header *h)
{
  unsigned char buf[WTLOG_RING_HEADER_SIZE];
  struct wtlog_ring_header rh = {
    .ring_size = h->flags & WTLOG_H_DATA ? WTP_LOG_RING_SIZE
                                         : WTP_LOG_RING_SIZE_HASHES,
    .moved = WTLOG_HEADER_SIZE,
  };
  const uint64_t wanted = rh.ring_size;

  memcpy (rh.run_id, h->run_id, sizeof rh.run_id);
  wtp_log.ring_path = wtlog_ring_path (wtp_log.path);
  if (!wtp_log.ring_path) {
    nbdkit_error ("malloc: %m");
    return -1;
  }
  /* Not O_TRUNC: a ring another plugin holds must be refused, not emptied. */
  wtp_log.ring_fd = open (wtp_log.ring_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (wtp_log.ring_fd == -1) {
    nbdkit_error ("open: log ring: %s: %m", wtp_log.ring_path);
    return -1;
  }
  if (flock (wtp_log.ring_fd, LOCK_EX | LOCK_NB) == -1) {
    nbdkit_error ("flock: log ring: %s: %m (is another nbdkit writing %s?)",
                  wtp_log.ring_path, wtp_log.path);
    return -1;
  }
  wtp_log.ring_locked = true;
  int err = wtp_log_allocate_ring (&rh.ring_size);
  if (err) {
    errno = err;
    nbdkit_error ("allocate: log ring: %s: %" PRIu64 " bytes: %m",
                  wtp_log.ring_path, WTLOG_RING_HEADER_SIZE + rh.ring_size);
    return -1;
  }
  wtp_log.ring_size = rh.ring_size;
  if (rh.ring_size < wanted)
    nbdkit_debug ("log ring: %s: %" PRIu64 " bytes: no room for more",
                  wtp_log.ring_path, rh.ring_size);
  wtlog_ring_header_encode (&rh, buf);
  if (wt_pwrite_full (wtp_log.ring_fd, buf, sizeof buf, 0) == -1) {
    nbdkit_error ("write: log ring header: %s: %m", wtp_log.ring_path);
    return -1;
  }
  if (wtp_log_map_ring () == -1) {
    nbdkit_error ("mmap: log ring: %s: %m", wtp_log.ring_path);
    return -1;
  }
  return 0;
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
  if (wtp_log_map_window () == -1) {
    nbdkit_error ("mmap: log: %s: %m", path);
    return -1;
  }
  wtp_log_open_direct (path);
  return 0;
}

bool
wtp_log_is_broken (void)
{
  return __atomic_load_n (&wtp_log.broken, __ATOMIC_ACQUIRE);
}

/* Called with the mutex held.  Records already reserved are still copied
 * and acknowledged: their space is allocated, and they come before the
 * failure.  Requests waiting for room in the ring fail. */
static void
wtp_log_break (void)
{
  __atomic_store_n (&wtp_log.broken, true, __ATOMIC_RELEASE);
  pthread_cond_broadcast (&wtp_log.room);
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

/* Copies everything the watermark has passed from the ring into the file,
 * around the records written there straight (which the watermark passed
 * too, so they are in the file).  Then the ring's space below it is free.
 * 0, or -1 with errno (the log is broken). */
static int
wtp_log_move (void)
{
  pthread_mutex_lock (&wtp_log.move_lock);
  pthread_mutex_lock (&wtp_log.lock);
  uint64_t target = wtp_log.written;
  pthread_mutex_unlock (&wtp_log.lock);
  int err = 0;
  uint64_t at = wtp_log.moved;
  struct wtp_hole hole;
  while (!err && at < target) {
    uint64_t to = target;
    bool skip = wtp_log_next_hole (at, target, &hole);
    if (skip)
      to = hole.start > at ? hole.start : at;
    err = wtp_log_write_stretch (at, to);
    at = skip ? hole.end : to;
  }
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
  pthread_mutex_unlock (&wtp_log.move_lock);
  errno = err;
  return err ? -1 : 0;
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
  return size >= WTP_LOG_DIRECT_MIN;
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
  if (!err)
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

uint64_t
wtp_log_copy_record (struct wtp_slot *slot, struct wtlog_record *rec,
                     const uint64_t *hashes, const void *data)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  int iovcnt = wtlog_encode (rec, hashes, data, fixed, iov);
  wtp_log_copy (slot, iov, iovcnt);
  uint64_t nhashes = hashes && wtlog_has_hashes (rec->type, rec->flags)
    ? wtlog_sectors_touched (rec->offset, rec->length) : 0;
  uint64_t data_pos = slot->start + WTLOG_FIXED_SIZE + 8 * nhashes;
  return wtp_log_is_direct (slot->end - slot->start)
    ? data_pos | WTP_LOG_POS_FILE : data_pos;
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
 * may_copy and wtp_log_copy_now can. */
static int
wtp_log_reserve_in_pass (struct wtp_slot *slot, struct wtlog_record *rec,
                         const uint64_t *hashes, const void *data,
                         bool may_copy)
{
  uint64_t size = wtlog_record_size (rec->type, rec->flags, rec->offset,
                                     rec->length);
  pthread_mutex_lock (&wtp_log.lock);
  int r = wtp_log_take (slot, rec, size);
  if (r == 0 && !(may_copy && wtp_log_copy_now (slot, rec, hashes, data)))
    wtp_log_enqueue (slot);
  pthread_mutex_unlock (&wtp_log.lock);
  return r;
}

int
wtp_log_reserve (struct wtp_slot *slot, struct wtlog_record *rec)
{
  return wtp_log_reserve_in_pass (slot, rec, NULL, NULL, false);
}

int
wtp_log_reserve_copy (struct wtp_slot *slot, struct wtlog_record *rec,
                      const uint64_t *hashes, const void *data)
{
  return wtp_log_reserve_in_pass (slot, rec, hashes, data, true);
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

/* Bytes of records under the watermark, which the index points at.  Those
 * of a record written straight into the file, and those below freed, are
 * read from the file; the others from the ring, where a reservation may
 * reuse them only once freed has passed them: a copy that freed overtook
 * while it ran is taken again. */
void
wtp_log_read (void *dst, uint64_t pos, uint64_t length)
{
  unsigned char *out = dst;
  if (pos & WTP_LOG_POS_FILE) {
    memcpy (out, wtp_log.map + (pos & ~WTP_LOG_POS_FILE), length);
    return;
  }
  for (;;) {
    uint64_t freed = __atomic_load_n (&wtp_log.freed, __ATOMIC_ACQUIRE);
    uint64_t split = pos + length < freed ? pos + length
      : pos > freed ? pos : freed;
    memcpy (out, wtp_log.map + pos, split - pos);
    if (split == pos + length)
      return;
    memcpy (out + (split - pos), wtp_log.ring + split % wtp_log.ring_size,
            pos + length - split);
    __atomic_thread_fence (__ATOMIC_ACQUIRE);
    if (__atomic_load_n (&wtp_log.freed, __ATOMIC_RELAXED) <= split)
      return;
  }
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
  if (wtp_log_move () == -1)
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
    if (wtp_log_move () == -1)
      break;
  }
  return NULL;
}

/* Reads one byte of every page in [from, to) of the ring.  Where the
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
    sum += __atomic_load_n (wtp_log.ring + at, __ATOMIC_RELAXED);
  __asm__ volatile ("" : : "r" (sum));
}

/* The helper: maps the ring's pages (its first copy) once, a step at a
 * time so that it can be stopped.  MADV_POPULATE_WRITE takes the same
 * write faults a store would; it fails (instead of raising SIGBUS) where a
 * store would fail, and then the helper stops: requests fault their pages
 * themselves, as without it. */
static void *
wtp_log_prefault (void *unused)
{
  struct sched_param idle = { 0 };
  const uint64_t step = 1u << 20;

  (void) unused;
  pthread_setschedparam (pthread_self (), SCHED_IDLE, &idle);
  for (uint64_t at = 0; at < wtp_log.ring_size; at += step) {
    if (__atomic_load_n (&wtp_log.prefault_stop, __ATOMIC_ACQUIRE))
      break;
    uint64_t n = wtp_log.ring_size - at < step ? wtp_log.ring_size - at : step;
    if (madvise (wtp_log.ring + at, n, MADV_POPULATE_WRITE) == -1) {
      nbdkit_debug ("log: %s: no more prefaulting at byte %" PRIu64 ": %m",
                    wtp_log.ring_path, at);
      break;
    }
    wtp_log_touch (at, at + n);
  }
  return NULL;
}

void
wtp_log_start_threads (void)
{
  if (!wtp_log.ring)
    return;
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
  int err = pthread_create (&wtp_log.prefaulter, NULL, wtp_log_prefault, NULL);
  if (err) {
    errno = err;
    nbdkit_debug ("log: %s: no prefault thread: %m", wtp_log.path);
    return;
  }
  wtp_log.prefaulter_running = true;
}

void
wtp_log_stop_threads (void)
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
  if (wtp_log.prefaulter_running) {
    __atomic_store_n (&wtp_log.prefault_stop, true, __ATOMIC_RELEASE);
    pthread_join (wtp_log.prefaulter, NULL);
    wtp_log.prefaulter_running = false;
    nbdkit_debug ("log: prefault helper stopped");
  }
}

/* Unmaps and closes the ring; removes it only if it is this plugin's and
 * the log holds all it held (a ring left behind completes the log when it
 * is next read). */
static void
wtp_log_close_ring (bool all_moved)
{
  if (wtp_log.ring_base) {
    munmap (wtp_log.ring_base, WTLOG_RING_HEADER_SIZE + 2 * wtp_log.ring_size);
    wtp_log.ring_base = wtp_log.ring = NULL;
  }
  if (wtp_log.ring_fd >= 0) {
    if (wtp_log.ring_locked && all_moved && unlink (wtp_log.ring_path) == -1)
      nbdkit_error ("unlink: log ring: %s: %m", wtp_log.ring_path);
    close (wtp_log.ring_fd);
    wtp_log.ring_fd = -1;
  }
  free (wtp_log.ring_path);
  wtp_log.ring_path = NULL;
}

void
wtp_log_close (void)
{
  /* nbdkit does not promise to call .cleanup: the threads must not outlive
   * the mappings they work on. */
  wtp_log_stop_threads ();
  /* A ring whose log this plugin never wrote holds nothing. */
  bool all_moved = !wtp_log.owned || wtp_log_move () == 0;
  if (wtp_log.map) {
    munmap ((void *) wtp_log.map, wtp_log.window);
    wtp_log.map = NULL;
  }
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
    if (ftruncate (wtp_log.fd, (off_t) wtp_log.written) == -1) {
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
  free (wtp_log.path);
  wtp_log.path = NULL;
}
