/* The plugin's requests: reads, the write-like requests (write, zero,
 * trim) through one funnel, wtp_change, flush and block status.  Each
 * write-like request is applied to the image (or, with the log as the
 * store, only hashed) and recorded under a range lock, then acknowledged
 * once its record and every record before it are in the log (log.h). */
#include "request.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "faults.h"
#include "fileio.h"
#include "log.h"
#include "owners.h"
#include "rangelock.h"
#include "sector-hash.h"
#include "store.h"
#include "wtlog.h"

/* Hash arrays up to this many sectors (256 KiB of request) live on the
 * stack: no allocation on the hot path of ordinary requests. */
#define WTP_STACK_HASHES 512
#define WTP_ZERO_CHUNK (1u << 20)

static const char wtp_zeroes[WTP_ZERO_CHUNK];

/* Fails the current request with err (also left in errno). */
static int
wtp_fail (int err)
{
  nbdkit_set_error (err);
  errno = err;
  return -1;
}

/* 0 or errno. */
static int
wtp_pwrite_all (int fd, const void *buf, size_t count, uint64_t offset)
{
  return wt_pwrite_full (fd, buf, count, offset) < 0 ? errno : 0;
}

int
wtp_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
           uint32_t flags)
{
  struct wtp_handle *h = handle;
  int err = wtp_read_current (h->exp, buf, count, offset);
  if (err) {
    errno = err;
    nbdkit_error ("pread: %s: %s: %m", h->exp->what, h->exp->path);
    return wtp_fail (err);
  }
  return 0;
}

/* The hash of every sector the write touches, as it reads afterwards: whole
 * sectors from the request, edge sectors merged with their old content.
 * Called under the range lock.  0 or errno. */
static int
wtp_hash_after (struct wtp_export *e, const char *buf, uint64_t count,
                uint64_t offset, uint64_t *hashes)
{
  uint64_t first = offset / WT_SECTOR_SIZE;
  uint64_t n = wtlog_sectors_touched (offset, count);
  uint64_t end = offset + count;
  unsigned char sector[WT_SECTOR_SIZE];

  for (uint64_t i = 0; i < n; i++) {
    uint64_t at = (first + i) * WT_SECTOR_SIZE;
    if (at >= offset && at + WT_SECTOR_SIZE <= end) {
      hashes[i] = wt_sector_hash (buf + (at - offset));
      continue;
    }
    int err = wtp_read_current (e, sector, WT_SECTOR_SIZE, at);
    if (err)
      return err;
    uint64_t lo = at > offset ? at : offset;
    uint64_t hi = at + WT_SECTOR_SIZE < end ? at + WT_SECTOR_SIZE : end;
    memcpy (sector + (lo - at), buf + (lo - offset), hi - lo);
    hashes[i] = wt_sector_hash (sector);
  }
  return 0;
}

/* A torn write: only the sectors the fault keeps reach the image. */
static int
wtp_write_torn (int fd, const char *buf, uint64_t count, uint64_t offset,
                const struct wtp_fault *f)
{
  uint64_t end = offset + count;
  for (uint64_t i = 0; i < f->nsectors; i++) {
    if (!f->stored[i])
      continue;
    uint64_t at = (f->first_sector + i) * WT_SECTOR_SIZE;
    uint64_t lo = at > offset ? at : offset;
    uint64_t hi = at + WT_SECTOR_SIZE < end ? at + WT_SECTOR_SIZE : end;
    int err = wtp_pwrite_all (fd, buf + (lo - offset), hi - lo, lo);
    if (err)
      return err;
  }
  return 0;
}

/* Puts the request into the image as the fault (if any) says.  0 or errno. */
static int
wtp_write_image (struct wtp_export *exp, const char *buf, uint64_t count,
                 uint64_t offset, const struct wtp_fault *f, bool fua)
{
  int err = 0;
  if (wtp_is_store (exp))
    return 0;                   /* the log's copy is the write */
  switch (f->kind) {
  case WTP_FAULT_NONE:
    err = wtp_pwrite_all (exp->fd, buf, count, offset);
    break;
  case WTP_FAULT_TEAR:
    err = wtp_write_torn (exp->fd, buf, count, offset, f);
    break;
  case WTP_FAULT_LIE:
  case WTP_FAULT_VANISH:
    return 0;
  case WTP_FAULT_EIO:
    return EIO;
  }
  if (!err && fua && fdatasync (exp->fd) == -1)
    err = errno;
  if (err) {
    errno = err;
    nbdkit_error ("write: %s: %s: %" PRIu64 "+%" PRIu64 ": %m", exp->what,
                  exp->path, offset, count);
  }
  return err;
}

/* One write-like request (a write, a zero, a trim) on its way through the
 * funnel they all take, wtp_change: QEMU's blklogwrites likewise takes
 * every request that changes the disk through one function, whatever it
 * does to the disk.  What it asks is in rec from the start; rec is
 * completed as the change goes. */
struct wtp_change {
  struct wtp_export *exp;
  struct wtlog_record rec;
  const char *buf;              /* a write's bytes; NULL for zero and trim */
  uint64_t *hashes;             /* a write's sector hashes; else NULL */
  struct wtp_fault *fault;      /* what the fault rules decided */
  bool store;                   /* the log is the export's store */
  bool through;                 /* its request writes it onto the image (store.h) */
  struct wtp_range range;       /* held from the image's change to the log */
};

/* What a change does to the image (or, with the log as the store, what it
 * must read first), under the range lock.  0 or errno. */
typedef int wtp_apply_fn (struct wtp_change *c);

/* The range lock over the sectors the change touches (a write reads and
 * merges its partial edge sectors under it); a trim with no whole sector
 * inside locks its empty range where it stands. */
static void
wtp_change_lock (struct wtp_change *c)
{
  uint64_t n = wtlog_sectors_touched (c->rec.offset, c->rec.length);
  uint64_t start = n ? c->rec.offset / WT_SECTOR_SIZE * WT_SECTOR_SIZE
    : c->rec.offset;
  wtp_range_acquire (&c->exp->ranges, &c->range, start,
                     start + n * WT_SECTOR_SIZE);
}

/* A vanished write: it reaches neither the image nor the log; the ground
 * truth says after which seq it would have come. */
static int
wtp_change_vanish (struct wtp_change *c)
{
  c->fault->after_seq = wtp_log_last_seq ();
  wtp_range_release (&c->exp->ranges, &c->range);
  wtp_faults_record (c->fault, 0, c->rec.offset, c->rec.length);
  return 0;
}

/* The record's way into the log, the same for every change.  It is
 * reserved while the range lock holds, so overlapping changes reach the
 * image and the log in the same order.  A small record is copied in the
 * reservation itself when nothing before it is still being copied.  With
 * the log as the store a write through is written onto the image before
 * its record is reserved, and a queued change's record is copied and its
 * range marked pending before the lock goes (a later overlapping write
 * reads its edge sectors as the mover leaves them).  Then the wait for the
 * records before it, and with FUA the log made durable.  err is the change's own result
 * (0 or errno). */
static int
wtp_change_log (struct wtp_change *c, int err)
{
  struct wtlog_record *rec = &c->rec;
  struct wtp_slot slot;
  bool queued = c->store && !err;
  bool through = queued && c->through;
  if (through) {
    /* Written before its record is reserved: a record in the log says
     * APPLIED only of bytes in the image (a failed write is logged
     * FAILED, and the image may hold part of it, as with stage=off). */
    err = wtp_store_write_through (rec, c->buf);
    if (err) {
      rec->flags = (rec->flags & ~WTLOG_F_DATA) | WTLOG_F_FAILED;
      rec->err = err;
      queued = through = false;
    }
    else
      wtp_store_mark_through (rec);
  }
  int reserved = wtp_log_reserve_copy (&slot, rec, c->hashes, c->buf);
  /* A queued record is copied before its range is marked and let go: in
   * the reservation when it could be, else here. */
  bool copy_here = reserved == 0 && queued && !slot.copied;

  if (copy_here)
    wtp_log_copy_record (&slot, rec, c->hashes, c->buf);
  /* A write through is in the image already. */
  if (reserved == 0 && queued && !through)
    wtp_store_mark (rec, slot.end);
  wtp_range_release (&c->exp->ranges, &c->range);
  if (reserved == -1)
    return wtp_fail (errno);
  if (copy_here)
    wtp_log_wait (&slot);
  else
    wtp_log_commit (&slot, rec, c->hashes, c->buf);
  if ((rec->flags & WTLOG_F_FUA) && !err && wtp_log_sync () == -1)
    return wtp_fail (errno);
  return err ? wtp_fail (err) : 0;
}

/* The funnel: the range locked, the image changed by apply, the record
 * completed with the outcome (a failed change logged FAILED, without
 * payload), then logged. */
static int
wtp_change (struct wtp_change *c, wtp_apply_fn *apply)
{
  c->store = wtp_is_store (c->exp);
  c->through = c->store && wtp_store_through (&c->rec);
  wtp_change_lock (c);
  int err = apply (c);
  /* With the log as the store apply changed nothing yet: the bytes of
   * IN_IMAGE records it will overwrite are saved first. */
  if (!err && c->store && wtp_owners_active ())
    err = wtp_owners_before_change (c->rec.conn, c->rec.offset,
                                    c->rec.length, c->through);
  c->rec.t_end = wtp_log_now ();
  if (err) {
    c->rec.flags = (c->rec.flags & ~WTLOG_F_DATA) | WTLOG_F_FAILED;
    c->rec.err = err;
  }
  if (c->fault->kind == WTP_FAULT_VANISH)
    return wtp_change_vanish (c);
  int r = wtp_change_log (c, err);
  /* rec.seq is 0 when no record was reserved. */
  if (c->fault->kind != WTP_FAULT_NONE)
    wtp_faults_record (c->fault, c->rec.seq, c->rec.offset, c->rec.length);
  return r;
}

/* A write's change: the hashes of the sectors it touches as they read
 * afterwards, then the image written as the fault says. */
static int
wtp_apply_write (struct wtp_change *c)
{
  struct wtp_export *exp = c->exp;
  uint64_t offset = c->rec.offset, count = c->rec.length;
  int err = wtp_hash_after (exp, c->buf, count, offset, c->hashes);
  if (err) {
    errno = err;
    nbdkit_error ("pread: %s: %s: edge sector of %" PRIu64 "+%" PRIu64 ": %m",
                  exp->what, exp->path, offset, count);
    return err;
  }
  return wtp_write_image (exp, c->buf, count, offset, c->fault,
                          c->rec.flags & WTLOG_F_FUA);
}

/* A write to either export: hashes, image, record, in that order, the first
 * three under the range lock so overlapping writes reach the image and the
 * log in the same order. */
static int
wtp_write_recorded (struct wtp_handle *h, const char *buf, uint64_t count,
                    uint64_t offset, bool fua, uint64_t t_start,
                    struct wtp_fault *f)
{
  uint64_t n = wtlog_sectors_touched (offset, count);
  uint64_t stack_hashes[WTP_STACK_HASHES];
  uint64_t *hashes = n <= WTP_STACK_HASHES ? stack_hashes
    : malloc (n * sizeof *hashes);

  if (!hashes)
    return wtp_fail (ENOMEM);
  struct wtp_change c = {
    .exp = h->exp, .buf = buf, .hashes = hashes, .fault = f,
    .rec = {
      .type = h->exp->write_type, .conn = h->conn, .t_start = t_start,
      .offset = offset, .length = count,
      .flags = (fua ? WTLOG_F_FUA : 0) | wtp_data_flag (),
    },
  };
  int r = wtp_change (&c, wtp_apply_write);
  if (hashes != stack_hashes)
    free (hashes);
  return r;
}

/* A request refused before it touches the image: logged as FAILED (no
 * payload), so the log still holds every request; fails with err. */
static int
wtp_refuse (struct wtp_handle *h, uint16_t type, uint16_t rflags,
            uint64_t count, uint64_t offset, uint64_t t_start, int err)
{
  struct wtlog_record rec = {
    .type = type, .flags = rflags | WTLOG_F_FAILED, .conn = h->conn,
    .err = err, .t_start = t_start, .t_end = wtp_log_now (),
    .offset = offset, .length = count,
  };
  if (wtp_log_append (&rec, NULL, NULL) == -1)
    return wtp_fail (errno);
  return wtp_fail (err);
}

int
wtp_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  struct wtp_fault f = { .kind = WTP_FAULT_NONE };
  uint16_t fua = flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (count == 0)
    return 0;
  /* nbdkit passes writes of up to 64 MiB, past the maximum the plugin
   * advertises; and a record that can never be reserved (larger than the
   * ring it must go through, which is smaller on a file system short of
   * room, or than the format holds) would leave its request waiting
   * forever.  Such a write is refused before it reaches the image. */
  uint64_t size = wtlog_record_size (h->exp->write_type, wtp_data_flag (),
                                     offset, count);
  if (count > WTP_MAX_WRITE || !wtp_log_record_fits (size))
    return wtp_refuse (h, h->exp->write_type, fua, count, offset, t_start,
                       EINVAL);
  if (wtp_is_disk (h->exp) && wtp_faults_any ()
      && wtp_faults_decide (offset, count, t_start, &f) == -1)
    return wtp_fail (ENOMEM);
  return wtp_write_recorded (h, buf, count, offset, flags & NBDKIT_FLAG_FUA,
                             t_start, &f);
}

static bool
wtp_unsupported (int err)
{
  return err == EOPNOTSUPP || err == ENOTSUP || err == ENOSYS;
}

static int
wtp_write_zeroes (int fd, uint64_t offset, uint64_t count)
{
  while (count > 0) {
    size_t n = count < WTP_ZERO_CHUNK ? count : WTP_ZERO_CHUNK;
    int err = wtp_pwrite_all (fd, wtp_zeroes, n, offset);
    if (err)
      return err;
    offset += n;
    count -= n;
  }
  return 0;
}

/* Makes [offset, offset+count) read as zeroes: a hole when allowed, else a
 * zeroed range, else written zeroes (unless only fast zeroing will do).
 * 0 or errno. */
static int
wtp_zero_range (int fd, uint64_t offset, uint64_t count, bool may_trim,
                bool fast)
{
  if (count == 0)
    return 0;
  if (may_trim) {
    if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                   (off_t) offset, (off_t) count) == 0)
      return 0;
    if (!wtp_unsupported (errno))
      return errno;
  }
  if (fallocate (fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                 (off_t) offset, (off_t) count) == 0)
    return 0;
  if (!wtp_unsupported (errno))
    return errno;
  if (fast)
    return ENOTSUP;
  return wtp_write_zeroes (fd, offset, count);
}

/* A zero's or a trim's change: the range zeroed in the image (and synced
 * with FUA); with the log as the store the mover zeroes it. */
static int
wtp_apply_zero (struct wtp_change *c)
{
  struct wtp_export *exp = c->exp;
  const struct wtlog_record *rec = &c->rec;
  int err = 0;

  if (c->store)
    return 0;
  err = wtp_zero_range (exp->fd, rec->offset, rec->length,
                        rec->type == WTLOG_TRIM || (rec->flags & WTLOG_F_MAY_TRIM),
                        rec->flags & WTLOG_F_FAST_ZERO);
  if (!err && (rec->flags & WTLOG_F_FUA) && fdatasync (exp->fd) == -1)
    err = errno;
  if (err && err != ENOTSUP) {
    errno = err;
    nbdkit_error ("%s: %s: %s: %" PRIu64 "+%" PRIu64 ": %m",
                  rec->type == WTLOG_TRIM ? "trim" : "zero", exp->what,
                  exp->path, rec->offset, rec->length);
  }
  return err;
}

/* ZERO and TRIM of whole sectors: done and reserved under the range lock. */
static int
wtp_zero_recorded (struct wtp_handle *h, uint16_t type, uint16_t rflags,
                   uint64_t count, uint64_t offset, uint64_t t_start)
{
  struct wtp_fault none = { .kind = WTP_FAULT_NONE };
  struct wtp_change c = {
    .exp = h->exp, .fault = &none,
    .rec = {
      .type = type, .flags = rflags, .conn = h->conn, .t_start = t_start,
      .offset = offset, .length = count,
    },
  };
  return wtp_change (&c, wtp_apply_zero);
}

/* A zero that does not cover whole sectors: the partial sector at each
 * edge is written with zeroes and logged as a WRITE (so it gets its hash
 * like any partial write), the whole sectors between the edges are zeroed
 * and logged as one ZERO.  Memory and record sizes stay small for any
 * legal length (up to 4 GiB - 1): an edge is under one sector, and its
 * zeroes are static.  The pieces go in address order, each under its own
 * range lock, so each record matches what its piece did to the image.
 * FUA goes with the last piece: its image and log syncs cover the earlier
 * pieces too. */
static int
wtp_zero_unaligned (struct wtp_handle *h, uint16_t rflags, uint32_t count,
                    uint64_t offset, uint64_t t_start)
{
  struct wtp_fault none = { .kind = WTP_FAULT_NONE };
  uint64_t end = offset + count;
  uint64_t lo = (offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  uint64_t hi = end / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  bool fua = rflags & WTLOG_F_FUA;

  if (hi <= lo)                 /* no whole sector: under 1 KiB in all */
    return wtp_write_recorded (h, wtp_zeroes, count, offset, fua, t_start,
                               &none);
  bool tail = end > hi;
  if (offset < lo && wtp_write_recorded (h, wtp_zeroes, lo - offset, offset,
                                         false, t_start, &none) == -1)
    return -1;
  uint16_t middle_flags = tail ? rflags & ~WTLOG_F_FUA : rflags;
  if (wtp_zero_recorded (h, WTLOG_ZERO, middle_flags, hi - lo, lo,
                         t_start) == -1)
    return -1;
  if (tail)
    return wtp_write_recorded (h, wtp_zeroes, end - hi, hi, fua, t_start,
                               &none);
  return 0;
}

static uint16_t
wtp_record_flags (uint32_t flags)
{
  return (flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0)
    | (flags & NBDKIT_FLAG_MAY_TRIM ? WTLOG_F_MAY_TRIM : 0)
    | (flags & NBDKIT_FLAG_FAST_ZERO ? WTLOG_F_FAST_ZERO : 0);
}

int
wtp_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  uint16_t rflags = wtp_record_flags (flags);

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (count == 0)
    return 0;
  if ((offset | count) % WT_SECTOR_SIZE == 0)
    return wtp_zero_recorded (h, WTLOG_ZERO, rflags, count, offset, t_start);
  /* Writing the edges is a write: refused as a fast zero must be. */
  if (flags & NBDKIT_FLAG_FAST_ZERO)
    return wtp_refuse (h, WTLOG_ZERO, rflags, count, offset, t_start, ENOTSUP);
  return wtp_zero_unaligned (h, rflags, count, offset, t_start);
}

/* A trim punches the whole sectors inside its range; the record holds that
 * shrunk range (length 0 when no whole sector is inside). */
int
wtp_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  uint64_t lo = (offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  uint64_t hi = (offset + count) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (hi <= lo) {
    lo = offset;
    hi = offset;
  }
  return wtp_zero_recorded (h, WTLOG_TRIM, flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0,
                            hi - lo, lo, t_start);
}

/* FLUSH: the image first, then a FLUSH record, then the log itself.  The
 * channel's flushes are not logged (FLUSH records describe the disk). */
int
wtp_flush (void *handle, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  int err = 0;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  /* With the log as the store the image holds nothing new to sync. */
  if (!wtp_is_store (h->exp) && fdatasync (h->exp->fd) == -1) {
    err = errno;
    nbdkit_error ("fdatasync: %s: %s: %m", h->exp->what, h->exp->path);
  }
  if (wtp_is_disk (h->exp)) {
    struct wtlog_record rec = {
      .type = WTLOG_FLUSH, .flags = err ? WTLOG_F_FAILED : 0, .conn = h->conn,
      .err = err, .t_start = t_start, .t_end = wtp_log_now (),
    };
    if (wtp_log_append (&rec, NULL, NULL) == -1)
      return wtp_fail (errno);
  }
  if (err)
    return wtp_fail (err);
  wtp_faults_sync ();
  if (wtp_log_sync () == -1)
    return wtp_fail (errno);
  return 0;
}

int
wtp_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
             struct nbdkit_extents *extents)
{
  struct wtp_handle *h = handle;
  int fd = h->exp->fd;
  uint64_t end = offset + count;
  bool one = flags & NBDKIT_FLAG_REQ_ONE;

  while (offset < end) {
    off_t data = lseek (fd, (off_t) offset, SEEK_DATA);
    if (data == -1 && errno != ENXIO) {
      nbdkit_error ("lseek: SEEK_DATA: %s: %s: %m", h->exp->what, h->exp->path);
      return -1;
    }
    uint64_t hole_end = data == -1 ? end : (uint64_t) data;
    if (hole_end > offset) {
      if (nbdkit_add_extent (extents, offset, hole_end - offset,
                             NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO) == -1)
        return -1;
      offset = hole_end;
      if (one)
        break;
      continue;
    }
    off_t hole = lseek (fd, (off_t) offset, SEEK_HOLE);
    if (hole == -1) {
      nbdkit_error ("lseek: SEEK_HOLE: %s: %s: %m", h->exp->what, h->exp->path);
      return -1;
    }
    if (nbdkit_add_extent (extents, offset, (uint64_t) hole - offset, 0) == -1)
      return -1;
    offset = (uint64_t) hole;
    if (one)
      break;
  }
  return 0;
}

