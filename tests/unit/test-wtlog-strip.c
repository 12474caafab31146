/* wtlog_strip_data: a closed log with payloads comes out with the same
 * records (seq, times, hashes) and none of its bytes; a log not closed, a
 * torn one and a missing one are refused and left as they were. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "wtlog.h"

static char dir[] = "/tmp/wtlog-strip-test.XXXXXX";

enum { NRECS = 8 };

struct sample {
  struct wtlog_record rec;
  uint64_t hashes[3];
  unsigned char data[1200];
};

static struct sample samples[NRECS];

/* OPEN, an unaligned WRITE with data (3 sectors), a ZERO, a FAILED write,
 * a CHANNEL write with data, an IN_IMAGE write (2 sectors, no data), the
 * SAVED record of its bytes, the final CLOSE (conn 0) unless !closed. */
static void
make_samples (void)
{
  struct { uint16_t type, flags; uint32_t conn; uint64_t off, len; } spec[] = {
    { WTLOG_OPEN, 0, 1, 0, 64 << 20 },
    { WTLOG_WRITE, WTLOG_F_DATA | WTLOG_F_FUA, 1, 700, 1200 },
    { WTLOG_ZERO, WTLOG_F_MAY_TRIM, 1, 8192, 4096 },
    { WTLOG_WRITE, WTLOG_F_FAILED, 1, 512, 512 },
    { WTLOG_CHANNEL, WTLOG_F_DATA, 2, 0, 512 },
    { WTLOG_WRITE, WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED, 1, 4096, 1024 },
    { WTLOG_SAVED, WTLOG_F_DATA, 1, 4096, 1024 },
    { WTLOG_CLOSE, 0, 0, 0, 0 },
  };
  for (int i = 0; i < NRECS; i++) {
    struct sample *s = &samples[i];
    memset (s, 0, sizeof *s);
    s->rec.type = spec[i].type;
    s->rec.flags = spec[i].flags;
    s->rec.conn = spec[i].conn;
    s->rec.offset = spec[i].off;
    s->rec.length = spec[i].len;
    s->rec.err = spec[i].flags & WTLOG_F_FAILED ? 5 : 0;
    s->rec.t_start = 100 * (uint64_t) i + 1;
    s->rec.t_end = 100 * (uint64_t) i + 50;
    for (int h = 0; h < 3; h++)
      s->hashes[h] = 0x0101010101010101ull * (uint64_t) (h + 1) + (uint64_t) i;
    for (size_t b = 0; b < sizeof s->data; b++)
      s->data[b] = (unsigned char) (b * 3 + (size_t) i);
  }
}

/* Writes the first n samples as a store log (header DATA and STORE). */
static int
write_log (const char *path, int n)
{
  struct wtlog_header h;
  char err[256];
  wtlog_header_init (&h, 64 << 20, 1 << 20, true, "test-wtlog-strip");
  h.flags |= WTLOG_H_STORE;
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  if (!w)
    return -1;
  for (int i = 0; i < n; i++) {
    struct wtlog_record rec = samples[i].rec;
    if (wtlog_writer_append (w, &rec, samples[i].hashes, samples[i].data) == -1)
      return -1;
  }
  return wtlog_writer_close (w);
}

static char *
read_file (const char *path, size_t *len)
{
  int fd = open (path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat (fd, &sb) != 0)
    return NULL;
  char *buf = malloc ((size_t) sb.st_size + 1);
  if (buf && read (fd, buf, (size_t) sb.st_size) != sb.st_size) {
    free (buf);
    buf = NULL;
  }
  close (fd);
  *len = (size_t) sb.st_size;
  return buf;
}

/* Whether rec is sample i as a hashes-only log holds it. */
static int
stripped_as_expected (const struct wtlog_record *rec, int i)
{
  const struct wtlog_record *want = &samples[i].rec;
  if (rec->seq != (uint64_t) i + 1 || rec->type != want->type
      || rec->flags != (want->flags & ~(WTLOG_F_DATA | WTLOG_F_IN_IMAGE))
      || rec->conn != want->conn
      || rec->err != want->err || rec->t_start != want->t_start
      || rec->t_end != want->t_end || rec->offset != want->offset
      || rec->length != want->length || rec->data != NULL)
    return 0;
  uint64_t n = wtlog_has_hashes (want->type, want->flags)
    ? wtlog_sectors_touched (want->offset, want->length) : 0;
  if (rec->nhashes != n)
    return 0;
  for (uint64_t h = 0; h < n; h++)
    if (rec->hashes[h] != samples[i].hashes[h])
      return 0;
  return 1;
}

static void
test_closed_log (const char *path, const char *tmp)
{
  char err[256] = "";
  int r = write_log (path, NRECS) == 0 ? wtlog_strip_data (path, err, sizeof err) : -2;
  tap_ok (r == 0, "a closed log is stripped (%s)", err);

  struct wtlog_header h;
  struct wtlog_reader *rd = wtlog_reader_open (path, &h, err, sizeof err);
  tap_ok (rd && h.flags == 0 && strcmp (h.creator, "test-wtlog-strip") == 0
          && h.disk_size == 64 << 20, "its header keeps its fields, DATA and STORE cleared");
  struct wtlog_record rec;
  int n = 0, same = 1;
  uint64_t size = WTLOG_HEADER_SIZE;
  while (rd && wtlog_reader_next (rd, &rec) == 0) {
    same = same && n < NRECS && stripped_as_expected (&rec, n);
    size += wtlog_record_size (rec.type, rec.flags, rec.offset, rec.length);
    n++;
  }
  tap_ok (same && n == NRECS, "every record is there, with its seq, times and hashes and no bytes (%d)", n);
  tap_ok (rd && wtlog_reader_status (rd)->closed
          && wtlog_reader_status (rd)->file_size == size,
          "the log is closed and as long as a hashes-only log of these records");
  if (rd)
    wtlog_reader_close (rd);
  tap_ok (access (tmp, F_OK) == -1 && errno == ENOENT, "no .strip file is left");
}

/* A log that strip must refuse leaves the file byte for byte as it was. */
static void
test_refused (const char *path, const char *tmp, const char *what, const char *want_in_err)
{
  size_t before_len, after_len;
  char *before = read_file (path, &before_len);
  char err[256] = "";
  int r = wtlog_strip_data (path, err, sizeof err);
  char *after = read_file (path, &after_len);
  tap_ok (r == -1 && strstr (err, want_in_err) && before && after
          && before_len == after_len && memcmp (before, after, before_len) == 0
          && access (tmp, F_OK) == -1,
          "%s is refused, left as it was, no .strip file (%s)", what, err);
  free (before);
  free (after);
}

int
main (void)
{
  char path[256], tmp[300];
  if (!mkdtemp (dir))
    return 2;
  snprintf (path, sizeof path, "%s/t.wtlog", dir);
  snprintf (tmp, sizeof tmp, "%s.strip", path);
  make_samples ();
  tap_plan (8);

  test_closed_log (path, tmp);

  if (write_log (path, NRECS - 1) == -1)
    return 2;
  test_refused (path, tmp, "a log without its final CLOSE", "not closed");

  /* The closed log cut inside its last record but one. */
  if (write_log (path, NRECS) == -1)
    return 2;
  struct stat sb;
  if (stat (path, &sb) != 0 || truncate (path, sb.st_size - 64 - 10) != 0)
    return 2;
  test_refused (path, tmp, "a torn log", path);

  char err[256] = "";
  char missing[300];
  snprintf (missing, sizeof missing, "%s/none.wtlog", dir);
  tap_ok (wtlog_strip_data (missing, err, sizeof err) == -1 && strstr (err, missing),
          "a missing log is named (%s)", err);

  unlink (path);
  rmdir (dir);
  return tap_done ();
}
