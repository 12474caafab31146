/* The image a replay writes (replay-target.h). */
#include "replay-target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-util.h"
#include "fileio.h"
#include "sector-hash.h"

#define WTC_SECTOR_MASK ((uint64_t) WT_SECTOR_SIZE - 1)

#define WTC_COPY_CHUNK (8u << 20)
#define WTC_ZERO_CHUNK (1u << 20)

static struct wtc_target *
wtc_target_new (int fd, const char *path, bool blockdev, uint64_t size)
{
  struct wtc_target *t = g_new0 (struct wtc_target, 1);
  t->fd = fd;
  t->path = g_strdup (path);
  t->blockdev = blockdev;
  t->size = size;
  return t;
}

static bool
wtc_blockdev_size (int fd, const char *path, uint64_t *size, GError **error)
{
  if (ioctl (fd, BLKGETSIZE64, size) == -1) {
    g_set_error (error, WTC_ERROR, 0, "ioctl BLKGETSIZE64: %s: %s", path,
                 g_strerror (errno));
    return false;
  }
  return true;
}

bool
wtc_same_file (const char *a, const char *b)
{
  struct stat sa, sb;
  if (stat (a, &sa) == -1 || stat (b, &sb) == -1)
    return false;
  if (S_ISBLK (sa.st_mode) && S_ISBLK (sb.st_mode))
    return sa.st_rdev == sb.st_rdev;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

struct wtc_target *
wtc_target_create (const char *path, uint64_t size, uint64_t min_size,
                   GError **error)
{
  struct stat st;
  if (stat (path, &st) == 0 && S_ISBLK (st.st_mode)) {
    int fd = open (path, O_RDWR | O_CLOEXEC);
    uint64_t devsize;
    if (fd < 0) {
      g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
      return NULL;
    }
    if (!wtc_blockdev_size (fd, path, &devsize, error)) {
      close (fd);
      return NULL;
    }
    if (devsize < min_size) {
      g_set_error (error, WTC_ERROR, 0, "%s: the device holds %" PRIu64
                   " bytes, the log's disk %" PRIu64, path, devsize, min_size);
      close (fd);
      return NULL;
    }
    return wtc_target_new (fd, path, true, devsize);
  }
  int fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    return NULL;
  }
  if (ftruncate (fd, (off_t) size) == -1) {
    g_set_error (error, WTC_ERROR, 0, "truncate: %s: %s", path, g_strerror (errno));
    close (fd);
    return NULL;
  }
  return wtc_target_new (fd, path, false, size);
}

struct wtc_target *
wtc_target_open (const char *path, GError **error)
{
  struct stat st;
  int fd = open (path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) == -1) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    if (fd >= 0)
      close (fd);
    return NULL;
  }
  uint64_t size = (uint64_t) st.st_size;
  if (S_ISBLK (st.st_mode) && !wtc_blockdev_size (fd, path, &size, error)) {
    close (fd);
    return NULL;
  }
  return wtc_target_new (fd, path, S_ISBLK (st.st_mode), size);
}

void
wtc_target_close (struct wtc_target *t)
{
  if (!t)
    return;
  close (t->fd);
  g_free (t->path);
  g_free (t);
}

bool
wtc_target_write (struct wtc_target *t, uint64_t offset, const void *buf,
                  uint64_t len, GError **error)
{
  if (t->changed)
    t->changed (t->changed_data, offset, len);
  if (wt_pwrite_full (t->fd, buf, len, offset) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: %s at byte %" PRIu64 ": %s",
                 t->path, offset, g_strerror (errno));
    return false;
  }
  return true;
}

bool
wtc_target_read (struct wtc_target *t, uint64_t offset, void *buf,
                 uint64_t len, GError **error)
{
  ssize_t got = wt_pread_full (t->fd, buf, len, offset);
  if (got < 0) {
    g_set_error (error, WTC_ERROR, 0, "read: %s at byte %" PRIu64 ": %s",
                 t->path, offset, g_strerror (errno));
    return false;
  }
  /* Past the end of a file reads as the zeroes a disk would hold. */
  memset ((char *) buf + got, 0, len - (uint64_t) got);
  return true;
}

static bool
wtc_target_write_zeroes (struct wtc_target *t, uint64_t offset, uint64_t len,
                         GError **error)
{
  static const char zeroes[WTC_ZERO_CHUNK];
  while (len > 0) {
    uint64_t n = MIN (len, (uint64_t) sizeof zeroes);
    if (!wtc_target_write (t, offset, zeroes, n, error))
      return false;
    offset += n;
    len -= n;
  }
  return true;
}

/* BLKZEROOUT takes whole sectors; the unaligned edges are written. */
static bool
wtc_target_zero_blockdev (struct wtc_target *t, uint64_t offset, uint64_t len,
                          GError **error)
{
  uint64_t first = (offset + WTC_SECTOR_MASK) & ~WTC_SECTOR_MASK;
  uint64_t end = offset + len;
  uint64_t last = end & ~WTC_SECTOR_MASK;
  if (first >= last)
    return wtc_target_write_zeroes (t, offset, len, error);
  if (!wtc_target_write_zeroes (t, offset, first - offset, error)
      || !wtc_target_write_zeroes (t, last, end - last, error))
    return false;
  uint64_t range[2] = { first, last - first };
  if (ioctl (t->fd, BLKZEROOUT, range) == 0)
    return true;
  return wtc_target_write_zeroes (t, first, last - first, error);
}

bool
wtc_target_zero (struct wtc_target *t, uint64_t offset, uint64_t len,
                 GError **error)
{
  if (len == 0)
    return true;
  if (t->changed)
    t->changed (t->changed_data, offset, len);
  if (t->blockdev)
    return wtc_target_zero_blockdev (t, offset, len, error);
  if (fallocate (t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 (off_t) offset, (off_t) len) == 0)
    return true;
  if (errno != EOPNOTSUPP && errno != ENOSYS) {
    g_set_error (error, WTC_ERROR, 0, "punch hole: %s at byte %" PRIu64 "+%" PRIu64
                 ": %s", t->path, offset, len, g_strerror (errno));
    return false;
  }
  return wtc_target_write_zeroes (t, offset, len, error);
}

bool
wtc_target_sync (struct wtc_target *t, GError **error)
{
  if (fdatasync (t->fd) == -1) {
    g_set_error (error, WTC_ERROR, 0, "fdatasync: %s: %s", t->path, g_strerror (errno));
    return false;
  }
  return true;
}

/* Base copy. */

static bool
wtc_is_zero (const unsigned char *p, size_t n)
{
  return n == 0 || (p[0] == 0 && memcmp (p, p + 1, n - 1) == 0);
}

/* The portable copy: zero chunks are skipped on a file (they stay holes). */
static bool
wtc_copy_by_reads (struct wtc_target *t, int src_fd, const char *src_name,
                   uint64_t from, uint64_t to, GError **error)
{
  g_autofree unsigned char *buf = g_malloc (WTC_COPY_CHUNK);
  while (from < to) {
    size_t want = MIN (to - from, (uint64_t) WTC_COPY_CHUNK);
    ssize_t got = wt_pread_full (src_fd, buf, want, from);
    if (got != (ssize_t) want) {
      g_set_error (error, WTC_ERROR, 0, "read: %s at byte %" PRIu64 ": %s",
                   src_name, got < 0 ? from : from + (uint64_t) got,
                   got < 0 ? g_strerror (errno) : "unexpected end of file");
      return false;
    }
    bool skip = !t->blockdev && wtc_is_zero (buf, want);
    if (!skip && !wtc_target_write (t, from, buf, want, error))
      return false;
    from += want;
  }
  return true;
}

/* copy_file_range lets the kernel copy (or share) the blocks; where it
 * cannot (devices, other file systems, old kernels) we read and write. */
static bool
wtc_copy_range (struct wtc_target *t, int src_fd, const char *src_name,
                uint64_t from, uint64_t to, GError **error)
{
  while (from < to) {
    loff_t in = (loff_t) from, out = (loff_t) from;
    ssize_t n = copy_file_range (src_fd, &in, t->fd, &out, to - from, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return wtc_copy_by_reads (t, src_fd, src_name, from, to, error);
    from += (uint64_t) n;
  }
  return true;
}

bool
wtc_target_copy_from (struct wtc_target *t, int src_fd, const char *src_name,
                      uint64_t len, GError **error)
{
  uint64_t pos = 0;
  while (pos < len) {
    off_t data = lseek (src_fd, (off_t) pos, SEEK_DATA);
    off_t hole;
    if (data < 0 && errno == ENXIO)
      data = (off_t) len;
    else if (data < 0)          /* no SEEK_DATA here: all of it is data */
      data = (off_t) pos;
    if ((uint64_t) data > len)
      data = (off_t) len;
    hole = (uint64_t) data < len ? lseek (src_fd, data, SEEK_HOLE) : (off_t) len;
    if (hole < 0 || (uint64_t) hole > len)
      hole = (off_t) len;
    if (t->blockdev && !wtc_target_zero (t, pos, (uint64_t) data - pos, error))
      return false;
    if (!wtc_copy_range (t, src_fd, src_name, (uint64_t) data, (uint64_t) hole, error))
      return false;
    pos = (uint64_t) hole;
  }
  return true;
}

bool
wtc_file_size (const char *path, uint64_t *size, GError **error)
{
  struct stat st;
  char why[512];
  int fd = wt_open_input (path, O_RDONLY | O_CLOEXEC, why, sizeof why);
  if (fd < 0 || fstat (fd, &st) == -1) {
    if (fd >= 0)
      snprintf (why, sizeof why, "stat: %s: %s", path, g_strerror (errno));
    g_set_error (error, WTC_ERROR, 0, "%s", why);
    if (fd >= 0)
      close (fd);
    return false;
  }
  *size = (uint64_t) st.st_size;
  bool ok = !S_ISBLK (st.st_mode) || wtc_blockdev_size (fd, path, size, error);
  close (fd);
  return ok;
}

static void
wtc_base_too_small (const char *base, uint64_t size, uint64_t min_size, GError **error)
{
  g_set_error (error, WTC_ERROR, 0, "%s: %" PRIu64 " bytes, smaller than the "
               "log's disk (%" PRIu64 " bytes)", base, size, min_size);
}

bool
wtc_base_size (const char *base, uint64_t min_size, uint64_t *size, GError **error)
{
  if (!wtc_file_size (base, size, error))
    return false;
  if (*size < min_size) {
    wtc_base_too_small (base, *size, min_size, error);
    return false;
  }
  return true;
}

bool
wtc_target_copy_base (struct wtc_target *t, const char *base, uint64_t min_size,
                      GError **error)
{
  struct stat bst;
  char why[512];
  int fd = wt_open_input (base, O_RDONLY | O_CLOEXEC, why, sizeof why);
  if (fd < 0 || fstat (fd, &bst) == -1) {
    if (fd >= 0)
      snprintf (why, sizeof why, "stat: %s: %s", base, g_strerror (errno));
    g_set_error (error, WTC_ERROR, 0, "%s", why);
    if (fd >= 0)
      close (fd);
    return false;
  }
  uint64_t size = (uint64_t) bst.st_size;
  if (S_ISBLK (bst.st_mode) && !wtc_blockdev_size (fd, base, &size, error)) {
    close (fd);
    return false;
  }
  if (size < min_size) {
    wtc_base_too_small (base, size, min_size, error);
    close (fd);
    return false;
  }
  bool ok = wtc_target_copy_from (t, fd, base, MIN (size, t->size), error);
  close (fd);
  return ok;
}

/* Records. */

bool
wtc_record_changes_disk (const struct wtlog_record *rec)
{
  if (rec->flags & WTLOG_F_FAILED)
    return false;
  return rec->type == WTLOG_WRITE || rec->type == WTLOG_ZERO
    || rec->type == WTLOG_TRIM;
}

bool
wtc_target_apply (struct wtc_target *t, const struct wtlog_record *rec,
                  GError **error)
{
  if (!wtc_record_changes_disk (rec))
    return true;
  if (rec->offset > t->size || rec->length > t->size - rec->offset) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": %s %" PRIu64 "+%" PRIu64
                 " lies outside %s (%" PRIu64 " bytes)", rec->seq,
                 wtlog_type_name (rec->type), rec->offset, rec->length, t->path, t->size);
    return false;
  }
  if (rec->type != WTLOG_WRITE)
    return wtc_target_zero (t, rec->offset, rec->length, error);
  if (!rec->data) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": WRITE %" PRIu64 "+%" PRIu64
                 " has no data in a log recorded with data", rec->seq,
                 rec->offset, rec->length);
    return false;
  }
  return wtc_target_write (t, rec->offset, rec->data, rec->length, error);
}
