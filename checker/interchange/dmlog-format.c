/* The dm-log-writes format (interchange/dmlog-format.h). */
#include "interchange/dmlog-format.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "le.h"
#include "lib/util.h"

/* The largest sector size accepted (QEMU's limit is below 16 MiB). */
#define WTC_DMLOG_MAX_SECTOR (1u << 20)

/* Reads len bytes at byte at: false with errno, ENODATA where the log
 * ends first. */
static bool
wtc_pread_all (int fd, void *buf, size_t len, uint64_t at)
{
  ssize_t got = wt_pread_full (fd, buf, len, at);
  if (got >= 0 && (size_t) got < len)
    errno = ENODATA;
  return got == (ssize_t) len;
}

/* Reader. */

struct wtc_dmlog_reader {
  int fd;
  char *path;
  uint64_t file_size;
  uint32_t sector_size;
  uint64_t count;
  uint64_t index;
  uint64_t pos;
  unsigned char *sector;        /* the entry sector */
  unsigned char *data;
  size_t data_cap;
};

static bool
wtc_dmlog_super_decode (struct wtc_dmlog_reader *r, const unsigned char *p,
                        GError **error)
{
  uint64_t magic = wt_get64 (p), version = wt_get64 (p + 8);
  r->count = wt_get64 (p + 16);
  r->sector_size = wt_get32 (p + 24);
  if (magic != WTC_DMLOG_MAGIC) {
    g_set_error (error, WTC_ERROR, 0, "%s: not a dm-log-writes log: magic "
                 "0x%" PRIx64 " at byte 0 (0x%llx expected)", r->path, magic,
                 WTC_DMLOG_MAGIC);
    return false;
  }
  if (version != WTC_DMLOG_VERSION) {
    g_set_error (error, WTC_ERROR, 0, "%s: unsupported version %" PRIu64
                 " at byte 8", r->path, version);
    return false;
  }
  uint32_t ss = r->sector_size;
  if (ss < 512 || ss > WTC_DMLOG_MAX_SECTOR || (ss & (ss - 1))) {
    g_set_error (error, WTC_ERROR, 0, "%s: bad sector size %" PRIu32
                 " at byte 24 (a power of two from 512 is expected)", r->path, ss);
    return false;
  }
  return true;
}

struct wtc_dmlog_reader *
wtc_dmlog_reader_open (const char *path, GError **error)
{
  unsigned char super[WTC_DMLOG_SUPER_SIZE];
  struct stat st;
  struct wtc_dmlog_reader *r = g_new0 (struct wtc_dmlog_reader, 1);
  r->path = g_strdup (path);
  char why[512];
  r->fd = wt_open_input (path, O_RDONLY | O_CLOEXEC, why, sizeof why);
  if (r->fd < 0) {
    g_set_error (error, WTC_ERROR, 0, "%s", why);
    goto fail;
  }
  if (fstat (r->fd, &st) == -1) {
    g_set_error (error, WTC_ERROR, 0, "stat: %s: %s", path, g_strerror (errno));
    goto fail;
  }
  r->file_size = (uint64_t) st.st_size;
  if (!wtc_pread_all (r->fd, super, sizeof super, 0)) {
    g_set_error (error, WTC_ERROR, 0, "read: %s: super block: %s", path,
                 errno == ENODATA ? "file too short" : g_strerror (errno));
    goto fail;
  }
  if (!wtc_dmlog_super_decode (r, super, error))
    goto fail;
  r->sector = g_malloc (r->sector_size);
  r->pos = r->sector_size;
  posix_fadvise (r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return r;

 fail:
  wtc_dmlog_reader_close (r);
  return NULL;
}

uint32_t
wtc_dmlog_reader_sector_size (const struct wtc_dmlog_reader *r)
{
  return r->sector_size;
}

uint64_t
wtc_dmlog_reader_count (const struct wtc_dmlog_reader *r)
{
  return r->count;
}

void
wtc_dmlog_reader_rewind (struct wtc_dmlog_reader *r)
{
  r->index = 0;
  r->pos = r->sector_size;
}

static bool
wtc_all_zero (const unsigned char *p, size_t n)
{
  return n == 0 || (p[0] == 0 && memcmp (p, p + 1, n - 1) == 0);
}

/* Why the entry sector is not a sound entry, or NULL. */
static const char *
wtc_dmlog_entry_check (const struct wtc_dmlog_reader *r, const struct wtc_dmlog_entry *e,
                       char *why, size_t len)
{
  uint32_t ss = r->sector_size;
  if (e->flags & ~WTC_DMLOG_FLAGS_ALL)
    return snprintf (why, len, "unknown flags 0x%" PRIx64, e->flags), why;
  if (e->flags == 0 && e->nr_sectors == 0)
    return "zeroes where an entry was due";
  /* Checked for every entry, a MARK too: its sectors would wrap the data's
   * length. A byte offset must also fit an off_t. */
  if (e->nr_sectors > (uint64_t) INT64_MAX / ss
      || e->sector > (uint64_t) INT64_MAX / ss - e->nr_sectors)
    return snprintf (why, len, "range %" PRIu64 "+%" PRIu64 " sectors ends past "
                     "byte 2^63", e->sector, e->nr_sectors), why;
  if (e->flags & WTC_DMLOG_MARK) {
    if (e->data_len > ss - WTC_DMLOG_ENTRY_SIZE)
      return snprintf (why, len, "MARK of %" PRIu64 " bytes does not fit its sector",
                       e->data_len), why;
    return NULL;
  }
  if (e->data_len)
    return snprintf (why, len, "inline data (%" PRIu64 " bytes) without MARK is "
                     "not supported", e->data_len), why;
  if (!wtc_all_zero (r->sector + WTC_DMLOG_ENTRY_SIZE, ss - WTC_DMLOG_ENTRY_SIZE))
    return "the entry sector is not zero-padded";
  return NULL;
}

static int
wtc_dmlog_bad (struct wtc_dmlog_reader *r, uint64_t at, const char *what,
               GError **error)
{
  g_set_error (error, WTC_ERROR, 0, "%s: bad entry %" PRIu64 " at byte %" PRIu64
               ": %s", r->path, r->index, at, what);
  return -1;
}

int
wtc_dmlog_reader_next (struct wtc_dmlog_reader *r, struct wtc_dmlog_entry *e,
                       bool skip_data, GError **error)
{
  char why[160];
  uint64_t at = r->pos, ss = r->sector_size;
  if (r->index >= r->count)
    return 1;
  if (r->file_size < ss || at > r->file_size - ss)
    return wtc_dmlog_bad (r, at, "cut short: the log ends inside its sector", error);
  if (!wtc_pread_all (r->fd, r->sector, ss, at))
    return wtc_dmlog_bad (r, at, g_strerror (errno), error);
  *e = (struct wtc_dmlog_entry) {
    .index = r->index, .log_offset = at,
    .sector = wt_get64 (r->sector), .nr_sectors = wt_get64 (r->sector + 8),
    .flags = wt_get64 (r->sector + 16), .data_len = wt_get64 (r->sector + 24),
  };
  const char *bad = wtc_dmlog_entry_check (r, e, why, sizeof why);
  if (bad)
    return wtc_dmlog_bad (r, at, bad, error);
  if (e->flags & WTC_DMLOG_MARK)
    e->mark = r->sector + WTC_DMLOG_ENTRY_SIZE;
  at += ss;
  if (!(e->flags & WTC_DMLOG_DISCARD))
    e->data_bytes = e->nr_sectors * ss;
  if (e->data_bytes > r->file_size || at > r->file_size - e->data_bytes)
    return wtc_dmlog_bad (r, r->pos, "cut short: its data runs past the end of the log",
                          error);
  if (e->data_bytes && !skip_data && e->data_bytes <= WTC_DMLOG_DATA_IN_MEMORY) {
    if (e->data_bytes > r->data_cap) {
      g_free (r->data);
      r->data = g_try_malloc (e->data_bytes);
      r->data_cap = r->data ? e->data_bytes : 0;
      if (!r->data)
        return wtc_dmlog_bad (r, r->pos, "no memory for its data", error);
    }
    if (!wtc_pread_all (r->fd, r->data, e->data_bytes, at))
      return wtc_dmlog_bad (r, r->pos, g_strerror (errno), error);
    e->data = r->data;
  }
  r->pos = at + e->data_bytes;
  r->index++;
  return 0;
}

bool
wtc_dmlog_reader_data (struct wtc_dmlog_reader *r, const struct wtc_dmlog_entry *e,
                       uint64_t at, void *buf, size_t len, GError **error)
{
  uint64_t from = e->log_offset + r->sector_size + at;
  if (at > e->data_bytes || len > e->data_bytes - at) {
    g_set_error (error, WTC_ERROR, 0, "%s: entry %" PRIu64 " at byte %" PRIu64
                 ": bytes %" PRIu64 "+%zu are past its data", r->path, e->index,
                 e->log_offset, at, len);
    return false;
  }
  if (!wtc_pread_all (r->fd, buf, len, from)) {
    g_set_error (error, WTC_ERROR, 0, "read: %s at byte %" PRIu64 " (entry %" PRIu64
                 "): %s", r->path, from, e->index,
                 errno == ENODATA ? "the log ends there" : g_strerror (errno));
    return false;
  }
  return true;
}

bool
wtc_dmlog_reader_more (struct wtc_dmlog_reader *r)
{
  struct wtc_dmlog_entry e;
  uint64_t count = r->count, index = r->index, pos = r->pos;
  r->count = UINT64_MAX;
  bool more = wtc_dmlog_reader_next (r, &e, true, NULL) == 0;
  r->count = count;
  r->index = index;
  r->pos = pos;
  return more;
}

void
wtc_dmlog_reader_close (struct wtc_dmlog_reader *r)
{
  if (!r)
    return;
  if (r->fd >= 0)
    close (r->fd);
  g_free (r->path);
  g_free (r->sector);
  g_free (r->data);
  g_free (r);
}

/* Writer. */

struct wtc_dmlog_writer {
  int fd;
  char *path;
  uint32_t sector_size;
  uint64_t count;
  uint64_t pos;
  unsigned char *sector;
};

struct wtc_dmlog_writer *
wtc_dmlog_writer_open (const char *path, uint32_t sector_size, GError **error)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    return NULL;
  }
  struct wtc_dmlog_writer *w = g_new0 (struct wtc_dmlog_writer, 1);
  w->fd = fd;
  w->path = g_strdup (path);
  w->sector_size = sector_size;
  w->pos = sector_size;
  w->sector = g_malloc0 (sector_size);
  return w;
}

static bool
wtc_dmlog_write_sector (struct wtc_dmlog_writer *w, uint64_t at, GError **error)
{
  if (wt_pwrite_full (w->fd, w->sector, w->sector_size, at) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: %s at byte %" PRIu64 ": %s",
                 w->path, at, g_strerror (errno));
    return false;
  }
  return true;
}

static void
wtc_dmlog_entry_encode (struct wtc_dmlog_writer *w, uint64_t flags, uint64_t sector,
                        uint64_t nr_sectors, uint64_t data_len)
{
  memset (w->sector, 0, w->sector_size);
  wt_put64 (w->sector, sector);
  wt_put64 (w->sector + 8, nr_sectors);
  wt_put64 (w->sector + 16, flags);
  wt_put64 (w->sector + 24, data_len);
}

bool
wtc_dmlog_write_entry (struct wtc_dmlog_writer *w, uint64_t flags, uint64_t sector,
                       uint64_t nr_sectors, const void *data, GError **error)
{
  wtc_dmlog_entry_encode (w, flags, sector, nr_sectors, 0);
  if (!wtc_dmlog_write_sector (w, w->pos, error))
    return false;
  w->pos += w->sector_size;
  w->count++;
  if (flags & WTC_DMLOG_DISCARD)
    return true;
  uint64_t bytes = nr_sectors * w->sector_size;
  if (data && wt_pwrite_full (w->fd, data, bytes, w->pos) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: %s at byte %" PRIu64 ": %s",
                 w->path, w->pos, g_strerror (errno));
    return false;
  }
  w->pos += bytes;
  return true;
}

size_t
wtc_dmlog_mark_room (const struct wtc_dmlog_writer *w)
{
  return w->sector_size - WTC_DMLOG_ENTRY_SIZE;
}

bool
wtc_dmlog_write_mark (struct wtc_dmlog_writer *w, const char *text, GError **error)
{
  size_t len = MIN (strlen (text), wtc_dmlog_mark_room (w));
  wtc_dmlog_entry_encode (w, WTC_DMLOG_MARK, 0, 0, len);
  memcpy (w->sector + WTC_DMLOG_ENTRY_SIZE, text, len);
  if (!wtc_dmlog_write_sector (w, w->pos, error))
    return false;
  w->pos += w->sector_size;
  w->count++;
  return true;
}

uint64_t
wtc_dmlog_writer_count (const struct wtc_dmlog_writer *w)
{
  return w->count;
}

void
wtc_dmlog_writer_abort (struct wtc_dmlog_writer *w)
{
  if (!w)
    return;
  close (w->fd);
  g_free (w->path);
  g_free (w->sector);
  g_free (w);
}

bool
wtc_dmlog_writer_close (struct wtc_dmlog_writer *w, GError **error)
{
  memset (w->sector, 0, w->sector_size);
  wt_put64 (w->sector, WTC_DMLOG_MAGIC);
  wt_put64 (w->sector + 8, WTC_DMLOG_VERSION);
  wt_put64 (w->sector + 16, w->count);
  wt_put32 (w->sector + 24, w->sector_size);
  bool ok = wtc_dmlog_write_sector (w, 0, error);
  /* Data of zeroes was skipped: the size makes those holes read as zeroes. */
  if (ok && ftruncate (w->fd, (off_t) w->pos) == -1) {
    g_set_error (error, WTC_ERROR, 0, "truncate: %s: %s", w->path, g_strerror (errno));
    ok = false;
  }
  if (ok && close (w->fd) == -1) {
    g_set_error (error, WTC_ERROR, 0, "close: %s: %s", w->path, g_strerror (errno));
    ok = false;
  }
  else if (!ok)
    close (w->fd);
  g_free (w->path);
  g_free (w->sector);
  g_free (w);
  return ok;
}
