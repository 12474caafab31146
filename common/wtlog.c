/* writes.wtlog encoding, decoding and a buffered sequential reader. */
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
#include "wtlog-ring.h"

#define WTLOG_HEADER_CRC_AT (WTLOG_HEADER_SIZE - 4)
#define WTLOG_READ_CHUNK (4u << 20)

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

static int
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
    [WTLOG_OPEN] = "OPEN", [WTLOG_CLOSE] = "CLOSE",
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
  return (type == WTLOG_WRITE || type == WTLOG_CHANNEL)
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

/* A record's hashes, little-endian in the reader's buffer, as host-order
 * values: in place (swapped once on a big-endian host; nothing reads the
 * buffer's bytes of them again). */
static const uint64_t *
wtlog_hashes_host (unsigned char *p, uint64_t n)
{
  uint64_t *h = (uint64_t *) p;
  if (!WT_HOST_LE)
    for (uint64_t i = 0; i < n; i++)
      h[i] = wt_le64 (h[i]);
  return h;
}

/* Reader: a sliding buffer over the file, so memory stays bounded by the
 * largest record, not the log. */

struct wtlog_reader {
  int fd;
  char *path;
  struct wtlog_header header;
  unsigned char *buf;
  size_t cap;
  size_t start;                 /* first unread byte in buf */
  size_t end;                   /* bytes valid in buf */
  uint64_t buf_pos;             /* file offset of buf[0] */
  bool eof;
  bool done;
  struct wtlog_status st;
};

/* Make n bytes available at buf[start]; returns how many are (< n at EOF),
 * or -1 on a read error. */
static ssize_t
wtlog_reader_fill (struct wtlog_reader *r, size_t n)
{
  if (r->end - r->start >= n)
    return (ssize_t) n;
  if (r->start > 0) {
    memmove (r->buf, r->buf + r->start, r->end - r->start);
    r->buf_pos += r->start;
    r->end -= r->start;
    r->start = 0;
  }
  if (n > r->cap) {
    size_t cap = r->cap;
    while (cap < n)
      cap *= 2;
    unsigned char *nb = realloc (r->buf, cap);
    if (!nb)
      return -1;
    r->buf = nb;
    r->cap = cap;
  }
  if (r->end < n && !r->eof) {
    ssize_t got = wt_pread_full (r->fd, r->buf + r->end, r->cap - r->end,
                                 r->buf_pos + r->end);
    if (got < 0)
      return -1;
    r->end += (size_t) got;
    /* Only a want left unmet is the end: a log still growing may hold the
     * rest of a later record when it is asked for. */
    r->eof = r->end < n;
  }
  return (ssize_t) (r->end < n ? r->end : n);
}

struct wtlog_reader *
wtlog_reader_open_plain (const char *path, struct wtlog_header *h, char *err,
                         size_t errlen)
{
  struct wtlog_reader *r = calloc (1, sizeof *r);
  char herr[200];
  if (!r || !(r->path = strdup (path))) {
    wtlog_fail (err, errlen, "malloc: %m");
    goto fail;
  }
  r->fd = wt_open_input (path, O_RDONLY | O_CLOEXEC, err, errlen);
  if (r->fd < 0)
    goto fail;
  off_t size = lseek (r->fd, 0, SEEK_END);
  if (size < 0) {
    wtlog_fail (err, errlen, "seek: %s: %m", path);
    goto fail_fd;
  }
  r->st.file_size = (uint64_t) size;
  /* A small log gets a small buffer: opening many small logs (crash
   * states, the fuzzers) should not cost a 4 MiB allocation each. */
  r->cap = r->st.file_size < WTLOG_READ_CHUNK ? (size_t) r->st.file_size : WTLOG_READ_CHUNK;
  if (r->cap < WTLOG_HEADER_SIZE)
    r->cap = WTLOG_HEADER_SIZE;
  if (!(r->buf = malloc (r->cap))) {
    wtlog_fail (err, errlen, "malloc: %m");
    goto fail_fd;
  }
  posix_fadvise (r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  ssize_t got = wtlog_reader_fill (r, WTLOG_HEADER_SIZE);
  if (got < 0) {
    wtlog_fail (err, errlen, "read: %s: %m", path);
    goto fail_fd;
  }
  if (got < WTLOG_HEADER_SIZE) {
    wtlog_fail (err, errlen, "%s: truncated header: %zd of %d bytes", path,
                got, WTLOG_HEADER_SIZE);
    goto fail_fd;
  }
  if (wtlog_header_decode (r->buf, &r->header, herr, sizeof herr) == -1) {
    wtlog_fail (err, errlen, "%s: %s", path, herr);
    goto fail_fd;
  }
  r->start = WTLOG_HEADER_SIZE;
  if (h)
    *h = r->header;
  return r;

 fail_fd:
  close (r->fd);
 fail:
  if (r) {
    free (r->buf);
    free (r->path);
    free (r);
  }
  return NULL;
}

struct wtlog_reader *
wtlog_reader_open (const char *path, struct wtlog_header *h, char *err,
                   size_t errlen)
{
  /* A plugin killed while its newest records were only in the ring left
   * them there: put them in the log first, so every tool reads the same
   * log.  The recovery's own note (on 1) is not the caller's business. */
  char rerr[1024];
  if (wtlog_ring_recover (path, rerr, sizeof rerr) == -1) {
    snprintf (err, errlen, "%s", rerr);
    return NULL;
  }
  return wtlog_reader_open_plain (path, h, err, errlen);
}

/* Whether every byte from the read position to the end of the file is zero
 * (the space a writer allocated ahead and never used); -1 on a read error.
 * Consumes what it reads: the caller ends reading either way. */
static int
wtlog_reader_rest_is_zero (struct wtlog_reader *r)
{
  for (;;) {
    for (size_t i = r->start; i < r->end; i++)
      if (r->buf[i])
        return 0;
    if (r->eof)
      return 1;
    r->buf_pos += r->end;
    r->start = r->end = 0;
    if (wtlog_reader_fill (r, r->cap) < 0)
      return -1;
  }
}

static int
wtlog_reader_bad (struct wtlog_reader *r, uint64_t at, const char *fmt, ...)
{
  va_list ap;
  char what[200];
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  r->st.torn = true;
  r->st.bad_offset = at;
  snprintf (r->st.error, sizeof r->st.error, "%s: bad record at byte %" PRIu64
            " (after seq %" PRIu64 "): %s", r->path, at, r->st.last_seq, what);
  r->done = true;
  return -1;
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

const char *
wtlog_fixed_check (const struct wtlog_header *h, uint64_t last_seq,
                   const unsigned char p[WTLOG_FIXED_SIZE],
                   const struct wtlog_record *rec, char *why, size_t whylen)
{
  if (rec->type < WTLOG_WRITE || rec->type > WTLOG_CLOSE)
    return snprintf (why, whylen, "unknown type %u", rec->type), why;
  if (rec->flags & ~WTLOG_F_ALL)
    return snprintf (why, whylen, "unknown flags 0x%x", rec->flags), why;
  if (wt_get32 (p + 20) != 0)
    return "reserved field is not zero";
  if (rec->seq != last_seq + 1)
    return snprintf (why, whylen, "seq %" PRIu64 " where %" PRIu64 " was due",
                     rec->seq, last_seq + 1), why;
  if (rec->t_start > rec->t_end)
    return "t_start is after t_end";
  uint64_t limit = rec->type == WTLOG_CHANNEL ? h->channel_size
    : h->disk_size;
  bool ranged = rec->type != WTLOG_OPEN && rec->type != WTLOG_CLOSE
    && rec->type != WTLOG_FLUSH;
  if (ranged && (rec->offset > limit || rec->length > limit - rec->offset))
    return snprintf (why, whylen, "range %" PRIu64 "+%" PRIu64
                     " is outside the %s export (%" PRIu64 " bytes)",
                     rec->offset, rec->length,
                     rec->type == WTLOG_CHANNEL ? "channel" : "disk", limit), why;
  if (!wtlog_record_size_ok (rec->size))
    return snprintf (why, whylen, "size %" PRIu32 " exceeds the maximum "
                     "record size %u", rec->size, WTLOG_MAX_RECORD_SIZE), why;
  uint64_t want = wtlog_record_size (rec->type, rec->flags, rec->offset,
                                     ranged ? rec->length : 0);
  if (rec->size != want)
    return snprintf (why, whylen, "size %" PRIu32 " where %" PRIu64
                     " was due for a %s of %" PRIu64 " bytes", rec->size, want,
                     wtlog_type_name (rec->type), rec->length), why;
  return NULL;
}

/* Whether the file holds size bytes at byte at, asked before the buffer
 * grows to size: a corrupt size then costs no allocation past the file.
 * A log still being written grows: its size is taken again before a
 * record is called cut short. */
static bool
wtlog_reader_holds (struct wtlog_reader *r, uint64_t at, uint64_t size)
{
  struct stat st;
  if (r->st.file_size >= at && r->st.file_size - at >= size)
    return true;
  if (fstat (r->fd, &st) == 0 && (uint64_t) st.st_size > r->st.file_size)
    r->st.file_size = (uint64_t) st.st_size;
  return r->st.file_size >= at && r->st.file_size - at >= size;
}

int
wtlog_reader_next (struct wtlog_reader *r, struct wtlog_record *rec)
{
  char why[160];
  if (r->done)
    return r->st.torn ? -1 : 1;
  uint64_t at = r->buf_pos + r->start;
  ssize_t got = wtlog_reader_fill (r, WTLOG_FIXED_SIZE);
  if (got < 0)
    return wtlog_reader_bad (r, at, "read: %s", strerror (errno));
  if (got == 0) {
    r->done = true;
    return 1;
  }
  const unsigned char *p = r->buf + r->start;
  bool short_fixed = got < WTLOG_FIXED_SIZE;
  if (!short_fixed)
    wtlog_fixed_decode (p, rec);
  if (short_fixed || (rec->size == 0 && rec->crc == 0 && rec->type == 0)) {
    /* Zeroes from here to the end are space allocated ahead by a writer that
     * never closed the log: a clean, unclosed end.  Anything else is torn. */
    int zero = wtlog_reader_rest_is_zero (r);
    if (zero == 1) {
      r->st.zero_tail = r->st.file_size - at;
      r->done = true;
      return 1;
    }
    if (zero < 0)
      return wtlog_reader_bad (r, at, "read: %s", strerror (errno));
    if (short_fixed)
      return wtlog_reader_bad (r, at, "torn: only %zd of the %d-byte fixed part",
                               got, WTLOG_FIXED_SIZE);
    return wtlog_reader_bad (r, at, "torn: zeroes where a record was due");
  }
  const char *bad = wtlog_fixed_check (&r->header, r->st.last_seq, p, rec,
                                      why, sizeof why);
  if (bad)
    return wtlog_reader_bad (r, at, "%s", bad);
  if (!wtlog_reader_holds (r, at, rec->size))
    return wtlog_reader_bad (r, at, "torn: a record of %" PRIu32 " bytes, "
                             "%" PRIu64 " left in the file", rec->size,
                             r->st.file_size - at);
  got = wtlog_reader_fill (r, rec->size);
  if (got < 0)
    return wtlog_reader_bad (r, at, "read: %s", strerror (errno));
  if ((size_t) got < rec->size)
    return wtlog_reader_bad (r, at, "torn: only %zd of %" PRIu32 " bytes",
                             got, rec->size);
  p = r->buf + r->start;
  uint32_t crc = wtlog_record_crc (p, rec->size);
  if (crc != rec->crc)
    return wtlog_reader_bad (r, at, "checksum mismatch (stored 0x%08x, computed 0x%08x)",
                             rec->crc, crc);

  rec->log_offset = at;
  rec->nhashes = wtlog_has_hashes (rec->type, rec->flags)
    ? wtlog_sectors_touched (rec->offset, rec->length) : 0;
  rec->hashes = rec->nhashes
    ? wtlog_hashes_host (r->buf + r->start + WTLOG_FIXED_SIZE, rec->nhashes) : NULL;
  rec->data = wtlog_has_data (rec->type, rec->flags)
    ? p + WTLOG_FIXED_SIZE + 8 * rec->nhashes : NULL;
  r->start += rec->size;
  r->st.last_seq = rec->seq;
  r->st.records++;
  if (rec->type == WTLOG_CLOSE && rec->conn == 0) {
    r->st.closed = true;
    r->done = true;
  }
  return 0;
}

const struct wtlog_status *
wtlog_reader_status (const struct wtlog_reader *r)
{
  return &r->st;
}

void
wtlog_reader_close (struct wtlog_reader *r)
{
  if (!r)
    return;
  close (r->fd);
  free (r->buf);
  free (r->path);
  free (r);
}

/* The strip: stage=on with data=off keeps every write's bytes in the log
 * while the plugin serves (the log is the store) and, once the image holds
 * them, takes them out again, so the run ends with a hashes-only log. */

/* The rename is durable only once the directory that holds the log is. */
static int
wtlog_sync_dir_of (const char *path)
{
  char *copy = strdup (path);
  if (!copy)
    return -1;
  int fd = open (dirname (copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free (copy);
  if (fd == -1)
    return -1;
  int r = fsync (fd);
  int saved = errno;
  close (fd);
  errno = saved;
  return r;
}

/* tmp, complete and durable, takes path's place, durably.  0, or -1 with
 * err set. */
static int
wtlog_replace (const char *tmp, const char *path, char *err, size_t errlen)
{
  if (rename (tmp, path) == -1)
    return wtlog_fail (err, errlen, "rename: %s to %s: %m", tmp, path);
  if (wtlog_sync_dir_of (path) == -1)
    return wtlog_fail (err, errlen, "fsync: the directory of %s: %m", path);
  return 0;
}

/* Copies every record of r into w without its payload.  The writer numbers
 * records 1, 2, ... as the plugin did, so each keeps its seq: checked, as
 * the checker's reports cite records by seq. */
static int
wtlog_strip_records (struct wtlog_reader *r, struct wtlog_writer *w,
                     const char *path, const char *tmp, char *err,
                     size_t errlen)
{
  struct wtlog_record rec;
  int next;
  while ((next = wtlog_reader_next (r, &rec)) == 0) {
    uint64_t seq = rec.seq;
    rec.flags &= ~WTLOG_F_DATA;
    if (wtlog_writer_append (w, &rec, rec.hashes, NULL) == -1)
      return wtlog_fail (err, errlen, "write: %s: %m", tmp);
    if (rec.seq != seq)
      return wtlog_fail (err, errlen, "%s: record at byte %" PRIu64
                         " has seq %" PRIu64 ", expected %" PRIu64,
                         path, rec.log_offset, seq, rec.seq);
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (next == -1)
    return wtlog_fail (err, errlen, "%s", st->error);
  if (!st->closed)
    return wtlog_fail (err, errlen, "%s: not closed (no final CLOSE "
                       "record): the payloads are its only copy", path);
  return 0;
}

int
wtlog_strip_data (const char *path, char *err, size_t errlen)
{
  struct wtlog_header h;
  /* The log as it is: a ring still beside it holds records the log lacks,
   * so the log is not closed and is refused below.  (Looking for the ring
   * would also format the ENOENT of its absence: under ASan, a strerror in
   * the plugin leaves nbdkit hung in exit, doc/design.md.) */
  struct wtlog_reader *r = wtlog_reader_open_plain (path, &h, err, errlen);
  if (!r)
    return -1;
  char *tmp = malloc (strlen (path) + sizeof ".strip");
  if (!tmp) {
    wtlog_reader_close (r);
    return wtlog_fail (err, errlen, "malloc: %m");
  }
  strcpy (stpcpy (tmp, path), ".strip");
  h.flags &= ~(uint32_t) (WTLOG_H_DATA | WTLOG_H_STORE);
  int ret = -1;
  struct wtlog_writer *w = wtlog_writer_open (tmp, &h, err, errlen);
  if (w) {
    int copied = wtlog_strip_records (r, w, path, tmp, err, errlen);
    int closed = wtlog_writer_close (w);
    if (copied == 0 && closed == -1)
      wtlog_fail (err, errlen, "fdatasync: %s: %m", tmp);
    else if (copied == 0)
      ret = wtlog_replace (tmp, path, err, errlen);
    if (ret == -1)
      unlink (tmp);
  }
  wtlog_reader_close (r);
  free (tmp);
  return ret;
}
