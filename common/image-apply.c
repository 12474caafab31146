/* Applying a write log to an image (image-apply.h). */
#include "image-apply.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fileio.h"
#include "image-resolve.h"
#include "sector-hash.h"

#define WT_APPLY_SECTOR_MASK ((uint64_t) WT_SECTOR_SIZE - 1)
#define WT_APPLY_ZERO_CHUNK (1u << 20)
/* The most bytes of an IN_IMAGE record held in memory at once. */
#define WT_APPLY_RESOLVE_CHUNK (1u << 20)

static int
wt_image_pwrite (struct wt_image *t, uint64_t offset, const char *p,
                 uint64_t len, char *err, size_t errlen)
{
  if (wt_pwrite_full (t->fd, p, len, offset) < 0)
    return wtlog_fail (err, errlen, "write: %s at byte %" PRIu64 ": %m",
                       t->path, offset);
  return 0;
}

int
wt_image_write (struct wt_image *t, uint64_t offset, const void *buf,
                uint64_t len, char *err, size_t errlen)
{
  if (t->changed)
    t->changed (t->changed_data, offset, len);
  return wt_image_pwrite (t, offset, buf, len, err, errlen);
}

static int
wt_image_write_zeroes (struct wt_image *t, uint64_t offset, uint64_t len,
                       char *err, size_t errlen)
{
  static const char zeroes[WT_APPLY_ZERO_CHUNK];
  while (len > 0) {
    uint64_t n = len < sizeof zeroes ? len : sizeof zeroes;
    if (wt_image_pwrite (t, offset, zeroes, n, err, errlen) == -1)
      return -1;
    offset += n;
    len -= n;
  }
  return 0;
}

/* BLKZEROOUT takes whole sectors; the unaligned edges are written. */
static int
wt_image_zero_blockdev (struct wt_image *t, uint64_t offset, uint64_t len,
                        char *err, size_t errlen)
{
  uint64_t first = (offset + WT_APPLY_SECTOR_MASK) & ~WT_APPLY_SECTOR_MASK;
  uint64_t end = offset + len;
  uint64_t last = end & ~WT_APPLY_SECTOR_MASK;
  if (first >= last)
    return wt_image_write_zeroes (t, offset, len, err, errlen);
  if (wt_image_write_zeroes (t, offset, first - offset, err, errlen) == -1
      || wt_image_write_zeroes (t, last, end - last, err, errlen) == -1)
    return -1;
  uint64_t range[2] = { first, last - first };
  if (ioctl (t->fd, BLKZEROOUT, range) == 0)
    return 0;
  return wt_image_write_zeroes (t, first, last - first, err, errlen);
}

int
wt_image_zero (struct wt_image *t, uint64_t offset, uint64_t len, char *err,
               size_t errlen)
{
  if (len == 0)
    return 0;
  if (t->changed)
    t->changed (t->changed_data, offset, len);
  if (t->blockdev)
    return wt_image_zero_blockdev (t, offset, len, err, errlen);
  if (fallocate (t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 (off_t) offset, (off_t) len) == 0)
    return 0;
  if (errno != EOPNOTSUPP && errno != ENOSYS)
    return wtlog_fail (err, errlen, "punch hole: %s at byte %" PRIu64 "+%"
                       PRIu64 ": %s", t->path, offset, len, strerror (errno));
  return wt_image_write_zeroes (t, offset, len, err, errlen);
}

bool
wt_record_changes_disk (const struct wtlog_record *rec)
{
  if (rec->flags & WTLOG_F_FAILED)
    return false;
  return rec->type == WTLOG_WRITE || rec->type == WTLOG_ZERO
    || rec->type == WTLOG_TRIM;
}

int
wt_image_write_in_image (struct wt_image *t, uint64_t seq, uint64_t offset,
                         uint64_t length, const uint64_t *hashes, char *err,
                         size_t errlen)
{
  if (!t->resolve)
    return wtlog_fail (err, errlen, "seq %" PRIu64 ": WRITE %" PRIu64 "+%"
                       PRIu64 " is IN_IMAGE: its bytes are in the run's "
                       "final image, and none was given", seq, offset, length);
  size_t chunk = length < WT_APPLY_RESOLVE_CHUNK ? (size_t) length
    : WT_APPLY_RESOLVE_CHUNK;
  char *buf = malloc (chunk ? chunk : 1);
  if (!buf)
    return wtlog_fail (err, errlen, "seq %" PRIu64 ": malloc: %s", seq,
                       strerror (errno));
  int rc = 0;
  for (uint64_t done = 0; rc == 0 && done < length; done += chunk) {
    uint64_t n = length - done < chunk ? length - done : chunk;
    rc = wt_resolve_read (t->resolve, seq, done, n, buf, hashes, err, errlen);
    if (rc == 0)
      rc = wt_image_write (t, offset + done, buf, n, err, errlen);
  }
  free (buf);
  return rc;
}

/* The record's range lies inside the image. */
static int
wt_apply_in_bounds (struct wt_image *t, const struct wtlog_record *rec,
                    char *err, size_t errlen)
{
  if (rec->offset > t->size || rec->length > t->size - rec->offset)
    return wtlog_fail (err, errlen, "seq %" PRIu64 ": %s %" PRIu64 "+%"
                       PRIu64 " lies outside %s (%" PRIu64 " bytes)",
                       rec->seq, wtlog_type_name (rec->type), rec->offset,
                       rec->length, t->path, t->size);
  return 0;
}

int
wt_image_apply (struct wt_image *t, const struct wtlog_record *rec, char *err,
                size_t errlen)
{
  if (wt_record_in_image (rec) && t->resolve)
    return wt_apply_in_bounds (t, rec, err, errlen) == -1 ? -1
      : wt_image_write_in_image (t, rec->seq, rec->offset, rec->length,
                                 rec->hashes, err, errlen);
  if (!wt_record_changes_disk (rec) || (rec->flags & WTLOG_F_APPLIED))
    return 0;
  if (wt_apply_in_bounds (t, rec, err, errlen) == -1)
    return -1;
  if (rec->type != WTLOG_WRITE)
    return wt_image_zero (t, rec->offset, rec->length, err, errlen);
  if (!rec->data)
    return wtlog_fail (err, errlen, "seq %" PRIu64 ": WRITE %" PRIu64 "+%"
                       PRIu64 " has no data in a log recorded with data",
                       rec->seq, rec->offset, rec->length);
  return wt_image_write (t, rec->offset, rec->data, rec->length, err, errlen);
}

int
wt_image_apply_log (struct wt_image *t, struct wtlog_reader *r,
                    const struct wt_apply_hooks *hooks,
                    struct wtlog_record *last, char *err, size_t errlen)
{
  static const struct wt_apply_hooks none;
  struct wtlog_record rec = { 0 };
  if (!hooks)
    hooks = &none;
  int status = 0;
  while (wtlog_reader_next (r, &rec) == 0) {
    if (hooks->stop_before && hooks->stop_before (hooks->ctx, &rec)) {
      status = 1;
      break;
    }
    if (wt_image_apply (t, &rec, err, errlen) == -1) {
      status = -1;
      break;
    }
    if (hooks->stop_after && hooks->stop_after (hooks->ctx, &rec)) {
      status = 1;
      break;
    }
  }
  if (last)
    *last = rec;
  return status;
}
