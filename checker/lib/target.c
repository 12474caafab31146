/* The image a replay writes (lib/target.h). */
#include "lib/target.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "lib/util.h"
#include "sector-hash.h"

#define WTC_COPY_CHUNK (8u << 20)

static struct wt_image *
wtc_target_new (int fd, const char *path, bool blockdev, uint64_t size)
{
  struct wt_image *t = g_new0 (struct wt_image, 1);
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
wtc_log_needs_payloads (const char *log, const struct wtlog_header *h,
                        const char *who, GError **error)
{
  if (h->flags & WTLOG_H_DATA)
    return true;
  g_set_error (error, WTC_ERROR, 0, "%s has no write payloads (recorded without "
               "data=on): %s needs them", log, who);
  return false;
}

char *
wtc_final_image (const char *log, const char *final)
{
  if (final)
    return g_strdup (final);
  g_autofree char *dir = g_path_get_dirname (log);
  char *beside = g_build_filename (dir, "disk.img", NULL);
  if (g_file_test (beside, G_FILE_TEST_EXISTS))
    return beside;
  g_free (beside);
  return NULL;
}

struct wt_resolve *
wtc_resolve_open (const char *log, const char *final, const char *who,
                  GError **error)
{
  char err[1024];
  g_autofree char *image = wtc_final_image (log, final);
  struct wt_resolve *r = wt_resolve_open (log, image, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return NULL;
  }
  uint64_t seq = wt_resolve_first_final_seq (r);
  if (seq && !image) {
    g_autofree char *dir = g_path_get_dirname (log);
    g_autofree char *beside = g_build_filename (dir, "disk.img", NULL);
    g_set_error (error, WTC_ERROR, 0, "%s: seq %" PRIu64 " is a WRITE flagged "
                 "IN_IMAGE (data=on wrote its bytes into the run's image only): "
                 "%s needs the run's final image; give --final-image FILE (there "
                 "is no %s)", log, seq, who, beside);
    wt_resolve_close (r);
    return NULL;
  }
  return r;
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

struct wt_image *
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

struct wt_image *
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
wtc_target_close (struct wt_image *t)
{
  if (!t)
    return;
  close (t->fd);
  g_free (t->path);
  g_free (t);
}

bool
wtc_target_read (struct wt_image *t, uint64_t offset, void *buf,
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

bool
wtc_target_sync (struct wt_image *t, GError **error)
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
wtc_copy_by_reads (struct wt_image *t, int src_fd, const char *src_name,
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
wtc_copy_range (struct wt_image *t, int src_fd, const char *src_name,
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
wtc_target_copy_from (struct wt_image *t, int src_fd, const char *src_name,
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
wtc_target_copy_base (struct wt_image *t, const char *base, uint64_t min_size,
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

/* Records and writes: common/image-apply.c, with the message as a GError. */

bool
wtc_target_write (struct wt_image *t, uint64_t offset, const void *buf,
                  uint64_t len, GError **error)
{
  char err[512];
  if (wt_image_write (t, offset, buf, len, err, sizeof err) == 0)
    return true;
  g_set_error (error, WTC_ERROR, 0, "%s", err);
  return false;
}

bool
wtc_target_zero (struct wt_image *t, uint64_t offset, uint64_t len,
                 GError **error)
{
  char err[512];
  if (wt_image_zero (t, offset, len, err, sizeof err) == 0)
    return true;
  g_set_error (error, WTC_ERROR, 0, "%s", err);
  return false;
}

bool
wtc_record_changes_disk (const struct wtlog_record *rec)
{
  return wt_record_changes_disk (rec);
}

bool
wtc_target_apply (struct wt_image *t, const struct wtlog_record *rec,
                  GError **error)
{
  char err[1024];          /* room for a resolver message naming two files */
  if (wt_record_in_image (rec) && !t->resolve) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": WRITE flagged IN_IMAGE: "
                 "its bytes are in the run's final image (--final-image), and "
                 "none was given", rec->seq);
    return false;
  }
  /* crash and export start from base.img, which lacks a queue's applied
   * records (their bytes are only in the run's image): refused, not
   * skipped, so no state is silently wrong. */
  if ((rec->flags & WTLOG_F_APPLIED) && !wt_record_in_image (rec)
      && wt_record_changes_disk (rec)) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": %s flagged APPLIED: its "
                 "bytes are only in the run's image (the log of a killed "
                 "stage=on data=off run); wtrack replay can rebuild the disk "
                 "onto that image, nothing can from base.img", rec->seq,
                 wtlog_type_name (rec->type));
    return false;
  }
  if (wt_image_apply (t, rec, err, sizeof err) == 0)
    return true;
  g_set_error (error, WTC_ERROR, 0, "%s", err);
  return false;
}
