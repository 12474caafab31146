/* The queue (stage=on with data=off, doc/design-plugin.md): the ring is a
 * bounded queue of the disk's writes.  The mover takes its records in log
 * order, applies each one's change (a WRITE's bytes, a ZERO's or TRIM's
 * zeroes) onto the image, and writes the record into the log file without
 * its payload, flagged APPLIED; the log file thus ends as a stage=off run's
 * (hashes only), and the image is current up to the mover while nbdkit
 * serves.  What the exit still has to write is at most the ring.  Ring
 * positions (reservations, the watermark, moved) are the ring's own; the
 * log file's records end at file_end.  The ring's header says version 2,
 * so a reader completes a killed plugin's log from it the queue's way
 * (common/wtlog-ring.c). */
#include "log.h"
#include "log-state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "image-apply.h"
#include "le.h"
#include "wtlog.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

/* The mover's batch of payload-free records, written into the log with one
 * pwrite: larger than the largest such record (the hashes of a 64 MiB
 * write, 1 MiB). */
#define WTP_QUEUE_BATCH (4u << 20)

int
wtp_log_set_queue (int image_fd, const char *image_path, uint64_t image_size,
                   bool blockdev, bool data)
{
  if (!data && !(wtp_log.qbuf = malloc (WTP_QUEUE_BATCH))) {
    nbdkit_error ("malloc: the queue's batch: %m");
    return -1;
  }
  wtp_log.queue = !data;
  wtp_log.apply_image = true;
  wtp_log.image_fd = image_fd;
  wtp_log.image_path = image_path;
  wtp_log.image_size = image_size;
  wtp_log.image_blockdev = blockdev;
  wtp_log.file_end = WTLOG_HEADER_SIZE;
  return 0;
}

bool
wtp_log_is_queue (void)
{
  return wtp_log.queue;
}

bool
wtp_log_applies_image (void)
{
  return wtp_log.apply_image;
}

/* The record's change onto the image, unless it has none or was applied
 * already (a large write, written by its request).  0 or an errno. */
static int
wtp_queue_apply (const unsigned char *p, const struct wtlog_record *rec)
{
  if (!wt_record_changes_disk (rec) || (rec->flags & WTLOG_F_APPLIED))
    return 0;
  struct wt_image img = {
    .fd = wtp_log.image_fd, .path = (char *) wtp_log.image_path,
    .size = wtp_log.image_size, .blockdev = wtp_log.image_blockdev,
  };
  char why[512];
  int r;
  errno = 0;
  if (rec->type != WTLOG_WRITE)
    r = wt_image_zero (&img, rec->offset, rec->length, why, sizeof why);
  else if (!(rec->flags & WTLOG_F_DATA)) {
    snprintf (why, sizeof why, "seq %" PRIu64 ": WRITE without its bytes",
              rec->seq);
    r = -1;
  }
  else
    r = wt_image_write (&img, rec->offset, p + WTLOG_FIXED_SIZE
                        + 8 * wtlog_sectors_touched (rec->offset, rec->length),
                        rec->length, why, sizeof why);
  if (r == 0)
    return 0;
  int err = errno ? errno : EIO;
  nbdkit_error ("queue: the image: %s", why);
  return err;
}

int
wtp_log_apply_ring (uint64_t from, uint64_t to)
{
  int err = 0;
  for (uint64_t at = from; !err && at < to; ) {
    const unsigned char *p = wtp_log.ring + at % wtp_log.ring_size;
    struct wtlog_record rec;
    wtlog_fixed_decode (p, &rec);
    err = wtp_queue_apply (p, &rec);
    at += rec.size;
  }
  return err;
}

/* length bytes from the log file at from onto the image at to, inside the
 * kernel (copy_file_range: no page of a mapping faulted in, which cost
 * seconds a GiB on these VMs), else through a buffer.  0 or an errno. */
static int
wtp_log_copy_to_image (uint64_t from, uint64_t to, uint64_t length)
{
  loff_t in = (loff_t) from, out = (loff_t) to;
  while (length > 0) {
    ssize_t n = copy_file_range (wtp_log.fd, &in, wtp_log.image_fd, &out,
                                 length, 0);
    if (n > 0) {
      length -= (uint64_t) n;
      continue;
    }
    if (n == 0)
      return EIO;               /* the log ended: cannot be, it was written */
    if (errno == EINTR)
      continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS
        && errno != EOPNOTSUPP)
      return errno;
    size_t chunk = length < WTP_QUEUE_BATCH ? (size_t) length : WTP_QUEUE_BATCH;
    unsigned char *buf = malloc (chunk);
    if (!buf)
      return ENOMEM;
    int err = 0;
    while (!err && length > 0) {
      size_t k = length < chunk ? (size_t) length : chunk;
      if (wt_pread_full (wtp_log.fd, buf, k, (uint64_t) in) != (ssize_t) k
          || wt_pwrite_full (wtp_log.image_fd, buf, k, (uint64_t) out) == -1)
        err = errno ? errno : EIO;
      in += (loff_t) k;
      out += (loff_t) k;
      length -= k;
    }
    free (buf);
    return err;
  }
  return 0;
}

int
wtp_log_apply_file (uint64_t at)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct wtlog_record rec;
  if (wt_pread_full (wtp_log.fd, fixed, sizeof fixed, at) != (ssize_t) sizeof fixed)
    return errno ? errno : EIO;
  wtlog_fixed_decode (fixed, &rec);
  if (!wt_record_changes_disk (&rec) || rec.type != WTLOG_WRITE
      || !(rec.flags & WTLOG_F_DATA))
    return 0;                   /* only large writes are in the file */
  if (rec.offset > wtp_log.image_size
      || rec.length > wtp_log.image_size - rec.offset)
    return EINVAL;
  uint64_t data = at + WTLOG_FIXED_SIZE
    + 8 * wtlog_sectors_touched (rec.offset, rec.length);
  int err = wtp_log_copy_to_image (data, rec.offset, rec.length);
  if (err) {
    errno = err;
    nbdkit_error ("queue: the image: seq %" PRIu64 ": %m", rec.seq);
  }
  return err;
}

/* The record at p without its payload, flagged APPLIED when it changes the
 * disk, into out: its size. */
static uint32_t
wtp_queue_strip (const unsigned char *p, const struct wtlog_record *rec,
                 unsigned char *out)
{
  uint16_t flags = rec->flags & ~WTLOG_F_DATA;
  if (wt_record_changes_disk (rec))
    flags |= WTLOG_F_APPLIED;
  uint32_t size = (uint32_t) wtlog_record_size (rec->type, flags, rec->offset,
                                                rec->length);
  /* Without DATA: the fixed part and the hashes, already a multiple of 8. */
  memcpy (out, p, size);
  wt_put32 (out + 0, size);
  wt_put32 (out + 4, 0);
  wt_put16 (out + 10, flags);
  wt_put32 (out + 4, wtlog_record_crc (out, size));
  return size;
}

/* The batch into the log file at file_end.  0 or an errno. */
static int
wtp_queue_flush (size_t *len)
{
  if (*len == 0)
    return 0;
  if (wt_pwrite_full (wtp_log.fd, wtp_log.qbuf, *len, wtp_log.file_end) == -1)
    return errno;
  wtp_log.file_end += *len;
  *len = 0;
  return 0;
}

/* Everything the watermark has passed: each record applied onto the image,
 * then (in batches) into the log without its payload, then the ring's
 * header says so and the ring's space is free.  The image is written
 * before the log, and the log before the header: a SIGKILL at any point
 * leaves each record in the ring or (applied) in the log. */
int
wtp_log_move_queue (void)
{
  pthread_mutex_lock (&wtp_log.move_lock);
  pthread_mutex_lock (&wtp_log.lock);
  uint64_t target = wtp_log.written;
  pthread_mutex_unlock (&wtp_log.lock);
  int err = 0;
  size_t len = 0;
  for (uint64_t at = wtp_log.moved; !err && at < target; ) {
    const unsigned char *p = wtp_log.ring + at % wtp_log.ring_size;
    struct wtlog_record rec;
    wtlog_fixed_decode (p, &rec);
    err = wtp_queue_apply (p, &rec);
    if (!err && len + rec.size > WTP_QUEUE_BATCH)
      err = wtp_queue_flush (&len);
    if (!err)
      len += wtp_queue_strip (p, &rec, wtp_log.qbuf + len);
    at += rec.size;
  }
  if (!err)
    err = wtp_queue_flush (&len);
  int r = wtp_log_moved (err ? wtp_log.moved : target, err);
  err = errno;
  pthread_mutex_unlock (&wtp_log.move_lock);
  errno = err;
  return r;
}

int
wtp_log_drain_to (uint64_t pos)
{
  /* Most calls find nothing to wait for: no mutex then. */
  if (__atomic_load_n (&wtp_log.freed, __ATOMIC_ACQUIRE) >= pos)
    return 0;
  pthread_mutex_lock (&wtp_log.lock);
  for (;;) {
    if (wtp_log.broken) {
      pthread_mutex_unlock (&wtp_log.lock);
      errno = EIO;
      return -1;
    }
    if (__atomic_load_n (&wtp_log.freed, __ATOMIC_ACQUIRE) >= pos)
      break;
    if (wtp_log.written >= pos) {
      pthread_mutex_unlock (&wtp_log.lock);
      if (wtp_log_move () == -1)
        return -1;
      pthread_mutex_lock (&wtp_log.lock);
      continue;
    }
    wtp_log.room_waiters++;
    pthread_cond_wait (&wtp_log.room, &wtp_log.lock);
    wtp_log.room_waiters--;
  }
  pthread_mutex_unlock (&wtp_log.lock);
  return 0;
}

int
wtp_log_sync_image (void)
{
  if (!wtp_log.apply_image || fdatasync (wtp_log.image_fd) == 0)
    return 0;
  int err = errno;
  nbdkit_error ("fdatasync: disk: %s: %m", wtp_log.image_path);
  pthread_mutex_lock (&wtp_log.lock);
  wtp_log_break ();
  pthread_mutex_unlock (&wtp_log.lock);
  errno = err;
  return -1;
}

int
wtp_log_queue_finish (const char *path)
{
  unsigned char buf[WTLOG_HEADER_SIZE];
  struct wtlog_header h;
  char why[256];
  int fd = open (path, O_RDWR | O_CLOEXEC);
  int ok = fd >= 0
    && wt_pread_full (fd, buf, sizeof buf, 0) == (ssize_t) sizeof buf
    && wtlog_header_decode (buf, &h, why, sizeof why) == 0;
  if (ok) {
    h.flags &= ~(uint32_t) (WTLOG_H_DATA | WTLOG_H_STORE);
    wtlog_header_encode (&h, buf);
    ok = wt_pwrite_full (fd, buf, sizeof buf, 0) == (ssize_t) sizeof buf
      && fdatasync (fd) == 0;
  }
  if (!ok)
    nbdkit_error ("log: %s: its header's DATA and STORE stay: %m", path);
  if (fd >= 0)
    close (fd);
  return ok ? 0 : -1;
}
