/* data=on's one copy of large writes (owners.h).  The owner map is a range
 * index (index.c) whose "log" extents are the ranges an IN_IMAGE record's
 * bytes still fill in the image.  A change of any kind first saves the
 * owned sectors it touches into the log (a SAVED record, read from the
 * image: no queued record can have changed them since, or it would have
 * saved them and ended the ownership), then takes them over.  It runs
 * under the change's range lock and before its record is reserved, so the
 * SAVED record comes after the IN_IMAGE one and before the change in log
 * order, as the readers' rule needs ("the first SAVED record after it
 * that covers the byte"); overlapping changes run it one at a time. */
#include "owners.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "fileio.h"
#include "index.h"
#include "log.h"
#include "sector-hash.h"
#include "wtlog.h"

static struct wtp_index wtp_owners;
static const struct wtp_export *wtp_owners_disk;
static bool wtp_owners_on;

int
wtp_owners_open (const struct wtp_export *disk, bool data)
{
  if (!data)
    return 0;
  if (wtp_index_init (&wtp_owners, disk->size) == -1) {
    nbdkit_error ("malloc: owner map of %s: %m", disk->path);
    return -1;
  }
  wtp_owners_disk = disk;
  wtp_owners_on = true;
  return 0;
}

bool
wtp_owners_active (void)
{
  return wtp_owners_on;
}

/* The sectors [start, end) of the image into the log as a SAVED record.
 * 0 or an errno. */
static int
wtp_owners_save (uint32_t conn, uint64_t start, uint64_t end)
{
  uint64_t length = end - start;
  uint64_t nsectors = length / WT_SECTOR_SIZE;
  unsigned char *bytes = malloc (length);
  uint64_t *hashes = malloc (nsectors * sizeof *hashes);
  int err = 0;
  if (!bytes || !hashes)
    err = ENOMEM;
  else if (wt_pread_full (wtp_owners_disk->fd, bytes, length, start)
           != (ssize_t) length)
    err = errno ? errno : EIO;
  if (!err) {
    wt_sector_hashes (bytes, nsectors, hashes);
    uint64_t now = wtp_log_now ();
    struct wtlog_record rec = {
      .type = WTLOG_SAVED, .flags = WTLOG_F_DATA, .conn = conn,
      .t_start = now, .t_end = now, .offset = start, .length = length,
    };
    if (wtp_log_append (&rec, hashes, bytes) == -1)
      err = errno;
  }
  if (err) {
    errno = err;
    nbdkit_error ("write: disk: saving %" PRIu64 "+%" PRIu64 " of %s before "
                  "a change overwrites it: %m", start, length,
                  wtp_owners_disk->path);
  }
  free (bytes);
  free (hashes);
  return err;
}

int
wtp_owners_before_change (uint32_t conn, uint64_t offset, uint64_t length,
                          bool in_image)
{
  uint64_t lo = offset / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  uint64_t hi = (offset + length + WT_SECTOR_SIZE - 1)
    / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  struct wtp_index_piece *pieces = NULL;
  size_t n = 0;
  struct wtp_index_spare spare = { 0 };
  if (hi <= lo)
    return 0;
  if ((wtp_index_extents (&wtp_owners) > 0
       && wtp_index_list_log (&wtp_owners, lo, hi - lo, &pieces, &n) == -1)
      || ((n > 0 || in_image)
          && wtp_index_spare_get (&wtp_owners, &spare, lo, hi - lo) == -1)) {
    free (pieces);
    return ENOMEM;
  }
  int err = 0;
  for (size_t i = 0; !err && i < n; i++)
    err = wtp_owners_save (conn, pieces[i].start, pieces[i].end);
  /* What was saved is no record's any more; an IN_IMAGE change owns its
   * range (the seq is not needed: only "owned" is asked). */
  if (!err && in_image)
    wtp_index_set_log (&wtp_owners, lo, hi - lo, 0, &spare);
  else if (!err && n > 0)
    wtp_index_set_zero (&wtp_owners, lo, hi - lo, &spare);
  wtp_index_spare_put (&spare);
  free (pieces);
  return err;
}

void
wtp_owners_close (void)
{
  if (wtp_owners_on)
    wtp_index_free (&wtp_owners);
  wtp_owners_on = false;
}
