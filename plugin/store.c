/* The log as the disk's store (store.h): the pending map of what the
 * image does not hold yet while nbdkit serves, reads through it, and at
 * unload the drain of the queue onto the image. */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "faults.h"
#include "fileio.h"
#include "log.h"
#include "pending.h"
#include "phase.h"
#include "sector-hash.h"

bool wtp_store_mode;
bool wtp_store_data;
static struct wtp_export *wtp_store_disk;

/* With faults the image must be able to differ from the log (a lie keeps
 * the old bytes while the log has the new ones): the image is then written
 * as the requests come, and the log only copies it. */
void
wtp_store_choose (struct wtp_export *disk, bool stage, bool data)
{
  wtp_store_disk = disk;
  wtp_store_data = data;
  wtp_store_mode = stage && disk->writable && !wtp_faults_any ();
  disk->store = wtp_store_mode;
  nbdkit_debug ("disk: %s", wtp_store_mode
                ? (data ? "the queue, data=on: the mover writes the image behind "
                          "the requests, the log gets the records whole"
                   : "the queue: the mover writes the image behind the requests, "
                     "the log gets the records without their bytes")
                : "the image is written as requests come");
}

/* The queue's image: the mover writes it (stage=on, data=off). */
int
wtp_store_queue_setup (void)
{
  struct stat st;
  const struct wtp_export *disk = wtp_store_disk;
  if (!wtp_store_mode)
    return 0;
  return wtp_log_set_queue (disk->fd, disk->path, disk->size,
                            fstat (disk->fd, &st) == 0 && S_ISBLK (st.st_mode),
                            wtp_store_data);
}

bool
wtp_store_through (const struct wtlog_record *rec)
{
  if (!wtp_log_applies_image () || rec->type != WTLOG_WRITE
      || (rec->flags & WTLOG_F_FAILED))
    return false;
  /* data=off: every write (the image is written once either way, and by
   * its request it costs no copy into the ring, no CRC of its bytes and no
   * second pass of the mover). */
  if (!wtp_store_data)
    return true;
  /* data=on: large writes, whose bytes are then only in the image
   * (IN_IMAGE), which the readers check against its hashes: whole sectors
   * only. */
  return wtlog_record_size (rec->type, rec->flags, rec->offset, rec->length)
           >= WTP_STORE_THROUGH_MIN
    && (rec->offset | rec->length) % WT_SECTOR_SIZE == 0;
}

void
wtp_store_mark_through (struct wtlog_record *rec)
{
  rec->flags = (rec->flags & ~WTLOG_F_DATA) | WTLOG_F_APPLIED
    | (wtp_store_data ? WTLOG_F_IN_IMAGE : 0);
}

int
wtp_store_write_through (const struct wtlog_record *rec, const void *buf)
{
  const struct wtp_export *disk = wtp_store_disk;
  uint64_t before = wtp_log_apply_end ();
  if (wtp_log_drain_to (before) == -1) {
    nbdkit_error ("write: the queue before %" PRIu64 "+%" PRIu64 " cannot "
                  "be moved: %m", rec->offset, rec->length);
    return errno;
  }
  if (wt_pwrite_full (disk->fd, buf, rec->length, rec->offset) == -1) {
    nbdkit_error ("write: disk: %s: %" PRIu64 "+%" PRIu64 ": %m",
                  disk->path, rec->offset, rec->length);
    return errno;
  }
  return 0;
}

int
wtp_store_open (void)
{
  if (wtp_store_mode && wtp_pending_init (wtp_store_disk->size) == -1) {
    nbdkit_error ("malloc: pending map of %s: %m", wtp_store_disk->path);
    return -1;
  }
  return 0;
}

void
wtp_store_mark (const struct wtlog_record *rec, uint64_t until)
{
  wtp_pending_mark (rec->offset, rec->length, until);
}

/* Reads count bytes; past the end of the file reads zeroes.  0 or errno. */
static int
wtp_pread_all (int fd, void *buf, size_t count, uint64_t offset)
{
  ssize_t got = wt_pread_full (fd, buf, count, offset);
  if (got < 0)
    return errno;
  memset ((char *) buf + got, 0, count - (size_t) got);
  return 0;
}

/* What the export holds at [offset, offset+count): with the log as the
 * store, the image once the mover has written every change the pending
 * map has for the range (moving the queue that far itself when it must).
 * 0 or errno. */
int
wtp_read_current (struct wtp_export *e, void *buf, size_t count,
                  uint64_t offset)
{
  if (wtp_is_store (e)) {
    uint64_t until = wtp_pending_until (offset, count);
    if (wtp_log_drain_to (until) == -1)
      return errno;
  }
  return wtp_pread_all (e->fd, buf, count, offset);
}

/* The image's sync after the apply, timed as its own phase of the exit.
 * true when done. */
static bool
wtp_store_sync_image (const struct wtp_export *disk)
{
  struct timespec phase;
  wtp_phase_start (&phase);
  if (fdatasync (disk->fd) == -1) {
    nbdkit_error ("fdatasync: disk: %s: %m", disk->path);
    return false;
  }
  wtp_phase_done ("image sync", &phase);
  return true;
}

/* The queue at unload: everything moved (applied onto the image), the
 * image made durable. */
bool
wtp_store_apply (const char *log_path)
{
  struct timespec phase;
  wtp_phase_start (&phase);
  if (wtp_log_settle () == -1)
    return false;
  wtp_phase_done ("drain", &phase);
  return wtp_store_sync_image (wtp_store_disk);
}

/* data=off: the records never had their bytes in the log file; its header
 * loses DATA and STORE. */
void
wtp_store_strip (const char *log_path)
{
  struct timespec phase;
  wtp_phase_start (&phase);
  if (wtp_log_queue_finish (log_path) == 0)
    wtp_phase_done ("header", &phase);
}

void
wtp_store_close (void)
{
  wtp_pending_free ();
}
