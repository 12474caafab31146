/* The ring of the plugin's log (log.c): a fixed file beside the log
 * (LOG.ring, doc/formats.md), its header page and then its ring mapped
 * twice in a row, so that a record that wraps around the ring's end is
 * contiguous in memory; and the helper that prefaults the ring's pages.
 * Why a ring: a store into a new page of a mapping costs a page fault, a
 * zeroed page and the file system's page_mkwrite, several microseconds on
 * the machines measured (doc/performance.md), and a log
 * mapped whole took a new page per 4 KiB written; the ring's pages are
 * mapped once and used again, and O_DIRECT adds no page to the cache.  With
 * write(2) per record, ext4 serialized the writers on the log's inode lock
 * and the system call cost more than the plugin's own work. */
#include "log-state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fileio.h"
#include "wtlog-ring.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* The ring's size.  Other sizes measured slower here: 4 KiB random data=on
 * writes against nbdkit file, paired rounds, 0.85x with 64 MiB, about
 * 0.75x with 16 or 32 MiB, 0.57x-0.80x with 136 MiB (doc/design-plugin.md). */
#define WTP_LOG_RING_SIZE (UINT64_C (64) << 20)
/* The ring of a log without DATA.  Its records are the write's hashes, 8
 * bytes a sector (about 130 bytes for a 4 KiB write, 3% of the data), so
 * 8 MiB holds over a second of records at the fastest rate measured, and
 * the run keeps 56 MiB less page cache and prefaults an eighth of the
 * pages (doc/design-plugin.md, "The plugin's log"). */
#define WTP_LOG_RING_SIZE_HASHES (UINT64_C (8) << 20)
/* The smallest ring, on a file system without room for the full one: it
 * holds a few of the records that go through it (less than
 * WTP_LOG_DIRECT_MIN each). */
#define WTP_LOG_RING_MIN (UINT64_C (256) << 10)

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
int
wtp_log_create_ring (const struct wtlog_header *h)
{
  unsigned char buf[WTLOG_RING_HEADER_SIZE];
  struct wtlog_ring_header rh = {
    .ring_size = h->flags & WTLOG_H_DATA ? WTP_LOG_RING_SIZE
                                         : WTP_LOG_RING_SIZE_HASHES,
    .moved = WTLOG_HEADER_SIZE,
    .version = wtp_log.queue ? WTLOG_RING_VERSION_QUEUE : WTLOG_RING_VERSION,
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
wtp_log_start_prefault (void)
{
  int err = pthread_create (&wtp_log.prefaulter, NULL, wtp_log_prefault, NULL);
  if (err) {
    errno = err;
    nbdkit_debug ("log: %s: no prefault thread: %m", wtp_log.path);
    return;
  }
  wtp_log.prefaulter_running = true;
}

void
wtp_log_stop_prefault (void)
{
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
void
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
