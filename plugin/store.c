/* The log as the disk's store (store.h): the index of where each range's
 * bytes are while nbdkit serves, reads through it, and at unload the apply
 * onto the image and, with data=off, the strip of the payloads. */
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
#include "image-apply.h"
#include "log.h"
#include "phase.h"

bool wtp_store_mode;
bool wtp_store_data;
static struct wtp_export *wtp_store_disk;
static struct wtp_index wtp_index;  /* with the log as the store */

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
wtp_store_through (struct wtlog_record *rec)
{
  if (!wtp_log_is_queue () || rec->type != WTLOG_WRITE
      || (rec->flags & WTLOG_F_FAILED)
      || wtlog_record_size (rec->type, rec->flags, rec->offset, rec->length)
         < WTP_STORE_THROUGH_MIN)
    return false;
  rec->flags = (rec->flags & ~WTLOG_F_DATA) | WTLOG_F_APPLIED;
  return true;
}

void
wtp_store_write_through (const struct wtp_slot *slot,
                         const struct wtlog_record *rec, const void *buf)
{
  const struct wtp_export *disk = wtp_store_disk;
  if (wtp_log_drain_to (slot->apply_before) == -1)
    nbdkit_error ("write: the queue before seq %" PRIu64 " cannot be moved "
                  "(%m): stopping", rec->seq);
  else if (wt_pwrite_full (disk->fd, buf, rec->length, rec->offset) == -1)
    nbdkit_error ("write: disk: %s: %" PRIu64 "+%" PRIu64 ": %m: stopping",
                  disk->path, rec->offset, rec->length);
  else
    return;
  /* Its record is reserved and says APPLIED: nothing unwritten may be
   * acknowledged, and the records after it wait for it. */
  abort ();
}

int
wtp_store_open (void)
{
  if (wtp_store_mode
      && wtp_index_init (&wtp_index, wtp_store_disk->size) == -1) {
    nbdkit_error ("malloc: index of %s: %m", wtp_store_disk->path);
    return -1;
  }
  return 0;
}

int
wtp_store_spare (struct wtp_index_spare *spare, uint64_t offset,
                 uint64_t count)
{
  return wtp_index_spare_get (&wtp_index, spare, offset, count);
}

void
wtp_store_point (const struct wtlog_record *rec, uint64_t data_pos,
                 struct wtp_index_spare *spare)
{
  if (rec->type == WTLOG_WRITE)
    wtp_index_set_log (&wtp_index, rec->offset, rec->length, data_pos, spare);
  else
    wtp_index_set_zero (&wtp_index, rec->offset, rec->length, spare);
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

static int
wtp_read_image (void *ctx, void *buf, size_t count, uint64_t offset)
{
  const struct wtp_export *e = ctx;
  return wtp_pread_all (e->fd, buf, count, offset);
}

/* What the export holds at [offset, offset+count): with the log as the
 * store, the index's extents from the log and the rest from the image.
 * 0 or errno. */
int
wtp_read_current (struct wtp_export *e, void *buf, size_t count,
                  uint64_t offset)
{
  if (!wtp_is_store (e))
    return wtp_pread_all (e->fd, buf, count, offset);
  return wtp_index_read (&wtp_index, buf, count, offset, wtp_log_read,
                         wtp_read_image, e);
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

/* The log as the store: its records applied onto the image, in log order,
 * with replay's code, and the image made durable.  true when done. */
/* The queue at unload: everything moved (applied onto the image), the
 * image made durable. */
static bool
wtp_store_drain (void)
{
  struct timespec phase;
  wtp_phase_start (&phase);
  if (wtp_log_settle () == -1)
    return false;
  wtp_phase_done ("drain", &phase);
  return wtp_store_sync_image (wtp_store_disk);
}

bool
wtp_store_apply (const char *log_path)
{
  if (wtp_log_applies_image ())
    return wtp_store_drain ();
  const struct wtp_export *disk = wtp_store_disk;
  char err[512];
  struct stat st;
  uint64_t started = wtp_log_now ();
  struct timespec phase;
  wtp_phase_start (&phase);
  /* The reader reads the log file: the ring's last records go there first. */
  if (wtp_log_settle () == -1)
    return false;
  struct wtlog_reader *r = wtlog_reader_open (log_path, NULL, err, sizeof err);
  if (!r) {
    nbdkit_error ("apply: %s", err);
    return false;
  }
  struct wt_image img = {
    .fd = disk->fd, .path = disk->path, .size = disk->size,
    .blockdev = fstat (disk->fd, &st) == 0 && S_ISBLK (st.st_mode),
  };
  bool ok = wt_image_apply_log (&img, r, NULL, NULL, err, sizeof err) == 0;
  const struct wtlog_status *ls = wtlog_reader_status (r);
  if (!ok)
    nbdkit_error ("apply: log %s onto the disk: %s", log_path, err);
  else if (ls->torn) {
    nbdkit_error ("apply: log %s onto the disk: %s", log_path, ls->error);
    ok = false;
  }
  else {
    wtp_phase_done ("apply", &phase);
    ok = wtp_store_sync_image (disk);
  }
  if (ok)
    nbdkit_debug ("apply: %" PRIu64 " records onto %s in %.3f s (index: %"
                  PRIu64 " extents)", ls->records, disk->path,
                  (double) (wtp_log_now () - started) / 1e9,
                  wtp_index_extents (&wtp_index));
  wtlog_reader_close (r);
  return ok;
}

/* data=off with the log as the store: the image now holds every write, so
 * the bytes leave the log.  When the strip fails the log keeps them (a
 * data=on log, closed and whole): nothing is lost, only space. */
void
wtp_store_strip (const char *log_path)
{
  if (wtp_log_is_queue ()) {
    /* The records never had their bytes in the file: only the header. */
    struct timespec phase;
    wtp_phase_start (&phase);
    if (wtp_log_queue_finish (log_path) == 0)
      wtp_phase_done ("header", &phase);
    return;
  }
  char err[512];
  uint64_t started = wtp_log_now ();
  struct timespec phase;
  wtp_phase_start (&phase);
  if (wtlog_strip_data_unsynced (log_path, err, sizeof err) == -1) {
    nbdkit_error ("strip: the payloads stay in the log: %s", err);
    return;
  }
  wtp_phase_done ("strip", &phase);
  /* The rename is durable once the log's directory is. */
  wtp_phase_start (&phase);
  if (wtlog_sync_dir_of (log_path) == -1) {
    nbdkit_error ("fsync: the directory of %s: %m", log_path);
    return;
  }
  wtp_phase_done ("dir sync", &phase);
  nbdkit_debug ("strip: the payloads left %s in %.3f s", log_path,
                (double) (wtp_log_now () - started) / 1e9);
}

void
wtp_store_close (void)
{
  wtp_index_free (&wtp_index);
}
