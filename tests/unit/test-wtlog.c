/* wtlog: round trip of every field, a torn tail at every byte offset of the
 * last record, and a flipped bit anywhere in the records is reported. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"
#include "sector-hash.h"
#include "tap.h"
#include "wtlog.h"

static char dir[] = "/tmp/wtlog-test.XXXXXX";
static char path[256];

struct sample {
  struct wtlog_record rec;
  unsigned char data[3000];
  uint64_t hashes[8];
};

static struct sample samples[6];
static const int nsamples = 6;

static void
make_samples (void)
{
  /* An unaligned write with data, an aligned one without, a zero, a trim,
   * a flush, a failed write, covering every field with distinct values. */
  struct { uint16_t type, flags; uint64_t off, len; } spec[] = {
    { WTLOG_WRITE, WTLOG_F_DATA | WTLOG_F_FUA, 700, 1500 },
    { WTLOG_WRITE, 0, 4096, 2048 },
    { WTLOG_ZERO, WTLOG_F_MAY_TRIM | WTLOG_F_FAST_ZERO, 8192, 4096 },
    { WTLOG_TRIM, 0, 1 << 20, 1 << 16 },
    { WTLOG_FLUSH, 0, 0, 0 },
    { WTLOG_WRITE, WTLOG_F_FAILED, 512, 512 },
  };
  for (int i = 0; i < nsamples; i++) {
    struct sample *s = &samples[i];
    memset (s, 0, sizeof *s);
    s->rec.type = spec[i].type;
    s->rec.flags = spec[i].flags;
    s->rec.offset = spec[i].off;
    s->rec.length = spec[i].len;
    s->rec.conn = 10 + (uint32_t) i;
    s->rec.err = spec[i].flags & WTLOG_F_FAILED ? 5 : 0;
    s->rec.t_start = 1000 * (uint64_t) i + 1;
    s->rec.t_end = 1000 * (uint64_t) i + 500;
    for (size_t b = 0; b < sizeof s->data; b++)
      s->data[b] = (unsigned char) (b * 7 + (size_t) i);
    for (int h = 0; h < 8; h++)
      s->hashes[h] = 0x1111111111111111ull * (uint64_t) (h + 1) + (uint64_t) i;
  }
}

static unsigned char *log_bytes;
static size_t log_len;

/* Writes the sample log once through the writer, keeps its bytes, and puts
 * them back (without the writer's fdatasync) for every mutation after. */
static void
write_log (void)
{
  if (log_bytes) {
    /* Rewrite in place: truncating on every mutation is slow on some
     * filesystems. */
    int fd = open (path, O_WRONLY);
    struct stat sb;
    if (fd < 0 || fstat (fd, &sb) != 0
        || pwrite (fd, log_bytes, log_len, 0) != (ssize_t) log_len
        || ((size_t) sb.st_size > log_len && ftruncate (fd, (off_t) log_len) != 0))
      exit (2);
    close (fd);
    return;
  }
  struct wtlog_header h;
  char err[256];
  wtlog_header_init (&h, 64 << 20, 1 << 20, true, "test-wtlog");
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  if (!w) {
    fprintf (stderr, "%s\n", err);
    exit (2);
  }
  for (int i = 0; i < nsamples; i++)
    if (wtlog_writer_append (w, &samples[i].rec, samples[i].hashes,
                             samples[i].data) == -1)
      exit (2);
  if (wtlog_writer_close (w) == -1)
    exit (2);
  int fd = open (path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat (fd, &sb) != 0 || !(log_bytes = malloc ((size_t) sb.st_size)))
    exit (2);
  log_len = (size_t) sb.st_size;
  if (read (fd, log_bytes, log_len) != (ssize_t) log_len)
    exit (2);
  close (fd);
}

static int
same_record (const struct wtlog_record *a, const struct sample *s)
{
  const struct wtlog_record *b = &s->rec;
  if (a->type != b->type || a->flags != b->flags || a->conn != b->conn
      || a->err != b->err || a->seq != b->seq || a->t_start != b->t_start
      || a->t_end != b->t_end || a->offset != b->offset
      || a->length != b->length || a->size != b->size || a->crc != b->crc)
    return 0;
  if (a->nhashes != (wtlog_has_hashes (b->type, b->flags)
                     ? wtlog_sectors_touched (b->offset, b->length) : 0))
    return 0;
  if (a->nhashes && memcmp (a->hashes, s->hashes, 8 * a->nhashes) != 0)
    return 0;
  if (wtlog_has_data (b->type, b->flags))
    return a->data && memcmp (a->data, s->data, b->length) == 0;
  return a->data == NULL;
}

/* Reads the log; returns the number of good records, sets *status. */
static int
read_all (int *last_rc, struct wtlog_status *st, int *all_same)
{
  struct wtlog_header h;
  char err[256];
  struct wtlog_reader *r = wtlog_reader_open (path, &h, err, sizeof err);
  int n = 0, rc;
  struct wtlog_record rec;
  *all_same = 1;
  if (!r) {
    *last_rc = -2;
    return 0;
  }
  while ((rc = wtlog_reader_next (r, &rec)) == 0) {
    if (n >= nsamples || !same_record (&rec, &samples[n]))
      *all_same = 0;
    n++;
  }
  *last_rc = rc;
  *st = *wtlog_reader_status (r);
  wtlog_reader_close (r);
  return n;
}

static off_t
file_size (void)
{
  struct stat sb;
  stat (path, &sb);
  return sb.st_size;
}

int
main (void)
{
  if (!mkdtemp (dir))
    return 2;
  snprintf (path, sizeof path, "%s/t.wtlog", dir);
  make_samples ();
  write_log ();
  tap_plan (12);

  struct wtlog_header h;
  char err[256];
  struct wtlog_reader *r = wtlog_reader_open (path, &h, err, sizeof err);
  tap_ok (r != NULL && h.disk_size == 64 << 20 && h.channel_size == 1 << 20
          && h.flags == WTLOG_H_DATA && strcmp (h.creator, "test-wtlog") == 0
          && h.sector_size == 512 && h.hash_id == 1 && h.start_monotonic_ns > 0,
          "header round trip");
  wtlog_reader_close (r);

  int rc, same;
  struct wtlog_status st;
  int n = read_all (&rc, &st, &same);
  tap_ok (n == nsamples && same, "every field of %d records round trips", n);
  tap_ok (rc == 1 && !st.torn && !st.closed && st.last_seq == (uint64_t) nsamples,
          "clean end without CLOSE is not torn");

  /* A torn tail at every byte offset of the last record. */
  off_t full = file_size ();
  off_t last_at = full - samples[nsamples - 1].rec.size;
  int torn_ok = 1;
  for (off_t cut = last_at + 1; cut < full; cut++) {
    write_log ();
    if (truncate (path, cut) != 0)
      return 2;
    n = read_all (&rc, &st, &same);
    if (n != nsamples - 1 || !same || rc != -1 || !st.torn
        || st.bad_offset != (uint64_t) last_at
        || st.last_seq != (uint64_t) nsamples - 1) {

      fprintf (stderr, "# cut at %jd: n=%d rc=%d torn=%d bad=%" PRIu64 "\n",
               (intmax_t) cut, n, rc, st.torn, st.bad_offset);
      torn_ok = 0;
      break;
    }
  }
  tap_ok (torn_ok, "a tail cut at each of %d bytes is named at byte %jd",
          (int) (full - last_at - 1), (intmax_t) last_at);

  /* Cut exactly at the boundary: a clean (unclosed) end. */
  write_log ();
  truncate (path, last_at);
  n = read_all (&rc, &st, &same);
  tap_ok (n == nsamples - 1 && rc == 1 && !st.torn, "a cut at a record boundary reads clean");

  /* Zeroes after the last record (space the plugin allocated ahead and a
   * kill left behind): a clean, unclosed end, however long they are. */
  int tail_ok = 1;
  const off_t tails[] = { 8, 63, 64, 65, 4096, 3 << 20 };
  for (size_t i = 0; i < sizeof tails / sizeof tails[0]; i++) {
    write_log ();
    truncate (path, full + tails[i]);
    n = read_all (&rc, &st, &same);
    if (n != nsamples || !same || rc != 1 || st.torn
        || st.zero_tail != (uint64_t) tails[i]) {
      fprintf (stderr, "# zero tail of %jd: n=%d rc=%d torn=%d zero_tail=%" PRIu64 "\n",
               (intmax_t) tails[i], n, rc, st.torn, st.zero_tail);
      tail_ok = 0;
    }
  }
  tap_ok (tail_ok, "a zero tail of 8 bytes to 3 MiB ends the log cleanly, unclosed");

  /* Zeroes where a record was due, with a record after them: a hole, torn. */
  write_log ();
  {
    char zeroes[4096] = { 0 };
    int hole = open (path, O_RDWR);
    pwrite (hole, zeroes, samples[nsamples - 2].rec.size,
            last_at - samples[nsamples - 2].rec.size);
    close (hole);
  }
  n = read_all (&rc, &st, &same);
  tap_ok (n == nsamples - 2 && rc == -1 && st.torn && st.zero_tail == 0
          && st.bad_offset == (uint64_t) (last_at - samples[nsamples - 2].rec.size)
          && strstr (st.error, "zeroes where a record was due"),
          "a zeroed record before a good one is a torn log: %s", st.error);

  /* A record cut short and then zeroes: torn at that record. */
  write_log ();
  truncate (path, last_at + 16);
  truncate (path, full + 4096);
  n = read_all (&rc, &st, &same);
  tap_ok (n == nsamples - 1 && rc == -1 && st.torn && st.bad_offset == (uint64_t) last_at,
          "a cut record followed by zeroes is torn at byte %jd", (intmax_t) last_at);

  /* A flipped bit anywhere after the header is reported at its record. */
  int flip_ok = 1;
  for (off_t at = WTLOG_HEADER_SIZE; at < full && flip_ok; at++) {
    for (int bit = 0; bit < 8; bit += 3) {
      write_log ();
      int fd = open (path, O_RDWR);
      unsigned char c;
      pread (fd, &c, 1, at);
      c ^= (unsigned char) (1 << bit);
      pwrite (fd, &c, 1, at);
      close (fd);
      n = read_all (&rc, &st, &same);
      if (rc != -1 || !st.torn || st.bad_offset > (uint64_t) at
          || n >= nsamples) {
        fprintf (stderr, "# flip at %jd bit %d not caught (n=%d rc=%d)\n",
                 (intmax_t) at, bit, n, rc);
        flip_ok = 0;
        break;
      }
    }
  }
  tap_ok (flip_ok, "a flipped bit at every record byte is caught");

  /* A flipped bit in the header refuses the log. */
  write_log ();
  int fd = open (path, O_RDWR);
  unsigned char c;
  pread (fd, &c, 1, 33);
  c ^= 4;
  pwrite (fd, &c, 1, 33);
  close (fd);
  r = wtlog_reader_open (path, &h, err, sizeof err);
  tap_ok (r == NULL && strstr (err, "checksum"), "corrupt header refused: %s", err);

  tap_ok (wtlog_sectors_touched (511, 2) == 2 && wtlog_sectors_touched (512, 512) == 1
          && wtlog_sectors_touched (0, 0) == 0, "sectors touched");
  tap_ok (wtlog_record_size (WTLOG_WRITE, WTLOG_F_DATA, 700, 1500) == wt_align8 (64 + 8 * 4 + 1500),
          "record size with data");
  unlink (path);
  rmdir (dir);
  return tap_done ();

}
