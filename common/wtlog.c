/* writes.wtlog: its header and records encoded and the sequential writer;
 * wtlog-read.c reads it, wtlog-strip.c rewrites it without payloads. */
#include "wtlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "fileio.h"
#include "le.h"
#include "sector-hash.h"

#define WTLOG_HEADER_CRC_AT (WTLOG_HEADER_SIZE - 4)

static const unsigned char wtlog_zero_pad[8];

static uint64_t
wtlog_clock_ns (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void
wtlog_random_id (uint8_t id[16])
{
  int fd = open ("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && read (fd, id, 16) == 16) {
    close (fd);
    return;
  }
  if (fd >= 0)
    close (fd);
  /* No urandom: the clocks still make the id unique enough to tell runs apart. */
  uint64_t a = wtlog_clock_ns (CLOCK_REALTIME), b = wtlog_clock_ns (CLOCK_MONOTONIC) ^ (uint64_t) getpid ();
  memcpy (id, &a, 8);
  memcpy (id + 8, &b, 8);
}

void
wtlog_header_init (struct wtlog_header *h, uint64_t disk_size,
                   uint64_t channel_size, bool data, const char *creator)
{
  memset (h, 0, sizeof *h);
  h->version = WTLOG_VERSION;
  h->header_size = WTLOG_HEADER_SIZE;
  h->sector_size = WT_SECTOR_SIZE;
  h->hash_id = WT_HASH_XXH3_64;
  h->flags = data ? WTLOG_H_DATA : 0;
  h->disk_size = disk_size;
  h->channel_size = channel_size;
  h->start_realtime_ns = wtlog_clock_ns (CLOCK_REALTIME);
  h->start_monotonic_ns = wtlog_clock_ns (CLOCK_MONOTONIC);
  wtlog_random_id (h->run_id);
  snprintf (h->creator, sizeof h->creator, "%s", creator ? creator : "");
}

void
wtlog_header_encode (const struct wtlog_header *h,
                     unsigned char buf[WTLOG_HEADER_SIZE])
{
  memset (buf, 0, WTLOG_HEADER_SIZE);
  memcpy (buf, WTLOG_MAGIC, WTLOG_MAGIC_LEN);
  wt_put32 (buf + 8, h->version);
  wt_put32 (buf + 12, h->header_size);
  wt_put32 (buf + 16, h->sector_size);
  wt_put32 (buf + 20, h->hash_id);
  wt_put32 (buf + 24, h->flags);
  wt_put64 (buf + 32, h->disk_size);
  wt_put64 (buf + 40, h->channel_size);
  wt_put64 (buf + 48, h->start_realtime_ns);
  wt_put64 (buf + 56, h->start_monotonic_ns);
  memcpy (buf + 64, h->run_id, 16);
  memcpy (buf + 80, h->creator, strnlen (h->creator, WTLOG_CREATOR_LEN));
  wt_put32 (buf + WTLOG_HEADER_CRC_AT, wt_crc32c (buf, WTLOG_HEADER_CRC_AT));
}

int
wtlog_fail (char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (err, errlen, fmt, ap);
  va_end (ap);
  return -1;
}

int
wtlog_header_decode (const unsigned char buf[WTLOG_HEADER_SIZE],
                     struct wtlog_header *h, char *err, size_t errlen)
{
  memset (h, 0, sizeof *h);
  if (memcmp (buf, WTLOG_MAGIC, WTLOG_MAGIC_LEN) != 0)
    return wtlog_fail (err, errlen, "not a wtlog: bad magic at byte 0");
  uint32_t want = wt_get32 (buf + WTLOG_HEADER_CRC_AT);
  uint32_t got = wt_crc32c (buf, WTLOG_HEADER_CRC_AT);
  if (want != got)
    return wtlog_fail (err, errlen,
                       "header checksum mismatch at byte %d (stored 0x%08x, computed 0x%08x)",
                       WTLOG_HEADER_CRC_AT, want, got);
  h->version = wt_get32 (buf + 8);
  h->header_size = wt_get32 (buf + 12);
  h->sector_size = wt_get32 (buf + 16);
  h->hash_id = wt_get32 (buf + 20);
  h->flags = wt_get32 (buf + 24);
  h->disk_size = wt_get64 (buf + 32);
  h->channel_size = wt_get64 (buf + 40);
  h->start_realtime_ns = wt_get64 (buf + 48);
  h->start_monotonic_ns = wt_get64 (buf + 56);
  memcpy (h->run_id, buf + 64, 16);
  memcpy (h->creator, buf + 80, WTLOG_CREATOR_LEN);
  h->creator[WTLOG_CREATOR_LEN] = '\0';
  if (h->version != WTLOG_VERSION)
    return wtlog_fail (err, errlen, "unsupported version %" PRIu32 " at byte 8", h->version);
  if (h->header_size != WTLOG_HEADER_SIZE)
    return wtlog_fail (err, errlen, "bad header size %" PRIu32 " at byte 12", h->header_size);
  if (h->sector_size != WT_SECTOR_SIZE)
    return wtlog_fail (err, errlen, "unsupported sector size %" PRIu32 " at byte 16", h->sector_size);
  if (h->hash_id != WT_HASH_XXH3_64)
    return wtlog_fail (err, errlen, "unsupported hash id %" PRIu32 " at byte 20", h->hash_id);
  if (h->flags & ~(uint32_t) (WTLOG_H_DATA | WTLOG_H_NOTIME | WTLOG_H_STORE))
    return wtlog_fail (err, errlen, "unknown header flags 0x%" PRIx32 " at byte 24", h->flags);
  return 0;
}

const char *
wtlog_type_name (uint16_t type)
{
  static const char *const names[] = {
    [WTLOG_WRITE] = "WRITE", [WTLOG_ZERO] = "ZERO", [WTLOG_TRIM] = "TRIM",
    [WTLOG_FLUSH] = "FLUSH", [WTLOG_CHANNEL] = "CHANNEL",
    [WTLOG_OPEN] = "OPEN", [WTLOG_CLOSE] = "CLOSE", [WTLOG_SAVED] = "SAVED",
  };
  if (type < sizeof names / sizeof names[0] && names[type])
    return names[type];
  return "?";
}

uint64_t
wtlog_sectors_touched (uint64_t offset, uint64_t length)
{
  if (length == 0)
    return 0;
  return (offset + length - 1) / WT_SECTOR_SIZE - offset / WT_SECTOR_SIZE + 1;
}

bool
wtlog_has_hashes (uint16_t type, uint16_t flags)
{
  return (type == WTLOG_WRITE || type == WTLOG_CHANNEL || type == WTLOG_SAVED)
    && !(flags & WTLOG_F_FAILED);
}

bool
wtlog_has_data (uint16_t type, uint16_t flags)
{
  return wtlog_has_hashes (type, flags) && (flags & WTLOG_F_DATA);
}

uint64_t
wtlog_record_size (uint16_t type, uint16_t flags, uint64_t offset,
                   uint64_t length)
{
  /* A range that wraps, or a size past 2^64, is UINT64_MAX: never a size
   * that a record's 32-bit field could claim. */
  if (length > UINT64_MAX - offset)
    return UINT64_MAX;
  uint64_t size = WTLOG_FIXED_SIZE;
  if (wtlog_has_hashes (type, flags))
    size += 8 * wtlog_sectors_touched (offset, length);   /* < 2^59 */
  if (wtlog_has_data (type, flags)) {
    if (length > UINT64_MAX - 8 - size)
      return UINT64_MAX;
    size += length;
  }
  return wt_align8 (size);
}

bool
wtlog_record_size_ok (uint64_t size)
{
  return size <= WTLOG_MAX_RECORD_SIZE;
}

static void
wtlog_fixed_encode (const struct wtlog_record *rec,
                    unsigned char fixed[WTLOG_FIXED_SIZE])
{
  wt_put32 (fixed + 0, rec->size);
  wt_put32 (fixed + 4, rec->crc);
  wt_put16 (fixed + 8, rec->type);
  wt_put16 (fixed + 10, rec->flags);
  wt_put32 (fixed + 12, rec->conn);
  wt_put32 (fixed + 16, rec->err);
  wt_put32 (fixed + 20, 0);
  wt_put64 (fixed + 24, rec->seq);
  wt_put64 (fixed + 32, rec->t_start);
  wt_put64 (fixed + 40, rec->t_end);
  wt_put64 (fixed + 48, rec->offset);
  wt_put64 (fixed + 56, rec->length);
}

/* The hashes as the log stores them: little-endian.  On a little-endian
 * host that is the caller's array itself; a big-endian host copies it,
 * swapped, into a buffer of the calling thread, which the iovec points at
 * until that thread's next encode. */
static const void *
wtlog_hashes_le (const uint64_t *hashes, uint64_t n)
{
  if (WT_HOST_LE)
    return hashes;
  static __thread unsigned char *buf;
  static __thread uint64_t cap;
  if (n > cap) {
    unsigned char *nb = realloc (buf, 8 * n);
    if (!nb)
      return NULL;
    buf = nb;
    cap = n;
  }
  wt_put64_array (buf, hashes, n);
  return buf;
}

int
wtlog_encode (struct wtlog_record *rec, const uint64_t *hashes,
              const void *data, unsigned char fixed[WTLOG_FIXED_SIZE],
              struct iovec iov[4])
{
  /* A size that does not fit is refused here, where every writer passes,
   * so no writer can produce a record its readers call torn. */
  uint64_t size = wtlog_record_size (rec->type, rec->flags, rec->offset,
                                     rec->length);
  if (!wtlog_record_size_ok (size)) {
    errno = EFBIG;
    return -1;
  }
  uint64_t nh = wtlog_has_hashes (rec->type, rec->flags)
    ? wtlog_sectors_touched (rec->offset, rec->length) : 0;
  uint64_t nd = wtlog_has_data (rec->type, rec->flags) ? rec->length : 0;
  uint64_t unpadded = WTLOG_FIXED_SIZE + 8 * nh + nd;
  const void *hashes_le = nh ? wtlog_hashes_le (hashes, nh) : NULL;
  int n = 0;

  if (nh && !hashes_le) {
    errno = ENOMEM;
    return -1;
  }

  rec->size = (uint32_t) size;
  rec->crc = 0;
  wtlog_fixed_encode (rec, fixed);
  iov[n++] = (struct iovec) { fixed, WTLOG_FIXED_SIZE };
  if (nh)
    iov[n++] = (struct iovec) { (void *) hashes_le, 8 * nh };
  if (nd)
    iov[n++] = (struct iovec) { (void *) data, nd };
  if (size > unpadded)
    iov[n++] = (struct iovec) { (void *) wtlog_zero_pad, size - unpadded };

  uint32_t crc = 0;
  for (int i = 0; i < n; i++)
    crc = wt_crc32c_update (crc, iov[i].iov_base, iov[i].iov_len);
  rec->crc = crc;
  wt_put32 (fixed + 4, crc);
  return n;
}

void
wtlog_fixed_decode (const unsigned char p[WTLOG_FIXED_SIZE],
                    struct wtlog_record *rec)
{
  rec->size = wt_get32 (p + 0);
  rec->crc = wt_get32 (p + 4);
  rec->type = wt_get16 (p + 8);
  rec->flags = wt_get16 (p + 10);
  rec->conn = wt_get32 (p + 12);
  rec->err = wt_get32 (p + 16);
  rec->seq = wt_get64 (p + 24);
  rec->t_start = wt_get64 (p + 32);
  rec->t_end = wt_get64 (p + 40);
  rec->offset = wt_get64 (p + 48);
  rec->length = wt_get64 (p + 56);
}

uint32_t
wtlog_record_crc (const unsigned char *p, size_t size)
{
  uint32_t crc = wt_crc32c_update (0, p, 4);
  crc = wt_crc32c_update (crc, wtlog_zero_pad, 4);
  return wt_crc32c_update (crc, p + 8, size - 8);
}

/* Sequential writer. */

struct wtlog_writer {
  int fd;
  uint64_t pos;
  uint64_t seq;
};

struct wtlog_writer *
wtlog_writer_open (const char *path, const struct wtlog_header *h,
                   char *err, size_t errlen)
{
  unsigned char buf[WTLOG_HEADER_SIZE];
  struct wtlog_writer *w = calloc (1, sizeof *w);
  if (!w) {
    wtlog_fail (err, errlen, "malloc: %m");
    return NULL;
  }
  w->fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd < 0) {
    wtlog_fail (err, errlen, "open: %s: %m", path);
    free (w);
    return NULL;
  }
  wtlog_header_encode (h, buf);
  if (wt_pwrite_full (w->fd, buf, sizeof buf, 0) == -1) {
    wtlog_fail (err, errlen, "write: %s: %m", path);
    close (w->fd);
    free (w);
    return NULL;
  }
  w->pos = WTLOG_HEADER_SIZE;
  return w;
}

int
wtlog_writer_append (struct wtlog_writer *w, struct wtlog_record *rec,
                     const uint64_t *hashes, const void *data)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  rec->seq = w->seq + 1;
  int n = wtlog_encode (rec, hashes, data, fixed, iov);
  if (n == -1)
    return -1;
  w->seq++;
  if (wt_pwritev_full (w->fd, iov, n, &w->pos) == -1)
    return -1;
  return 0;
}

int
wtlog_writer_close (struct wtlog_writer *w)
{
  int r = 0;
  if (fdatasync (w->fd) == -1)
    r = -1;
  if (close (w->fd) == -1 && r == 0)
    r = -1;
  free (w);
  return r;
}
