/* writes.wtlog read back: a buffered sequential reader that checks every
 * record (wtlog.h); wtlog.c writes it. */
#include "wtlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "fileio.h"
#include "le.h"
#include "sector-hash.h"

#define WTLOG_READ_CHUNK (4u << 20)

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

/* The rules of IN_IMAGE and SAVED (doc/formats.md): NULL when rec keeps
 * them, else what it breaks. */
static const char *
wtlog_one_copy_check (const struct wtlog_header *h,
                      const struct wtlog_record *rec)
{
  bool whole = rec->offset % WT_SECTOR_SIZE == 0
    && rec->length % WT_SECTOR_SIZE == 0;
  bool data_log = h->flags & WTLOG_H_DATA;
  if (rec->flags & WTLOG_F_IN_IMAGE) {
    if (rec->type != WTLOG_WRITE)
      return "IN_IMAGE on a record that is not a WRITE";
    if (!data_log)
      return "IN_IMAGE in a log without DATA";
    if (!(rec->flags & WTLOG_F_APPLIED))
      return "IN_IMAGE without APPLIED";
    if (rec->flags & WTLOG_F_DATA)
      return "IN_IMAGE with DATA";
    if (!whole)
      return "IN_IMAGE on a range that is not whole sectors";
  }
  if (rec->type == WTLOG_SAVED) {
    if (rec->flags & ~WTLOG_F_DATA)
      return "SAVED with a flag other than DATA";
    if (data_log && !(rec->flags & WTLOG_F_DATA))
      return "SAVED without DATA in a log with DATA";
    if (!data_log && (rec->flags & WTLOG_F_DATA))
      return "SAVED with DATA in a log without DATA";
    if (!whole)
      return "SAVED on a range that is not whole sectors";
  }
  return NULL;
}

const char *
wtlog_fixed_check (const struct wtlog_header *h, uint64_t last_seq,
                   const unsigned char p[WTLOG_FIXED_SIZE],
                   const struct wtlog_record *rec, char *why, size_t whylen)
{
  if (rec->type < WTLOG_WRITE || rec->type > WTLOG_TYPE_MAX)
    return snprintf (why, whylen, "unknown type %u", rec->type), why;
  if (rec->flags & ~WTLOG_F_ALL)
    return snprintf (why, whylen, "unknown flags 0x%x", rec->flags), why;
  const char *one_copy = wtlog_one_copy_check (h, rec);
  if (one_copy)
    return one_copy;
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
