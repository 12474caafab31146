/* wtlog: round trip of every field, a torn tail at every byte offset of the
 * last record, and a flipped bit anywhere in the records is reported. */
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
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


/* A log of one hashes-only WRITE at offset 0 whose size field says
 * claimed_size, with payload_bytes of zero hashes actually in the file
 * (sparse: only the fixed part is written).  The CRC covers the whole
 * record as claimed, so only the size itself can make a reader refuse it.
 * The WRITE's length matches the claimed size, so the size is "due". */
static void
craft_big_write (uint32_t claimed_size, uint64_t payload_bytes)
{
  static const unsigned char zeroes[1 << 16];
  struct wtlog_header h;
  unsigned char hbuf[WTLOG_HEADER_SIZE], fixed[WTLOG_FIXED_SIZE] = { 0 };
  uint64_t nsectors = (claimed_size - WTLOG_FIXED_SIZE) / 8;

  wtlog_header_init (&h, UINT64_C (1) << 40, 0, false, "test-wtlog");
  wtlog_header_encode (&h, hbuf);
  wt_put32 (fixed + 0, claimed_size);
  wt_put16 (fixed + 8, WTLOG_WRITE);
  wt_put32 (fixed + 12, 1);
  wt_put64 (fixed + 24, 1);
  wt_put64 (fixed + 56, nsectors * WT_SECTOR_SIZE);
  uint32_t crc = wt_crc32c_update (0, fixed, WTLOG_FIXED_SIZE);
  for (uint64_t left = claimed_size - WTLOG_FIXED_SIZE; left > 0; ) {
    size_t n = left < sizeof zeroes ? left : sizeof zeroes;
    crc = wt_crc32c_update (crc, zeroes, n);
    left -= n;
  }
  wt_put32 (fixed + 4, crc);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write (fd, hbuf, sizeof hbuf) != (ssize_t) sizeof hbuf
      || write (fd, fixed, sizeof fixed) != (ssize_t) sizeof fixed
      || ftruncate (fd, (off_t) (WTLOG_HEADER_SIZE + WTLOG_FIXED_SIZE
                                 + payload_bytes)) != 0)
    exit (2);
  close (fd);
  free (log_bytes);     /* write_log () starts again from the samples */
  log_bytes = NULL;
}

/* Reads the crafted log: the first wtlog_reader_next () result, the status
 * after reading to the end, and the bytes the allocator holds (heap and
 * mmapped blocks) while the reader is still open, its buffer included. */
static int
read_crafted (struct wtlog_status *st, uint64_t *nhashes, size_t *allocated)
{
  char err[256];
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (path, NULL, err, sizeof err);
  if (!r) {
    fprintf (stderr, "# %s\n", err);
    return -2;
  }
  int first = wtlog_reader_next (r, &rec);
  *nhashes = first == 0 ? rec.nhashes : 0;
  while (wtlog_reader_next (r, &rec) == 0)
    ;
  *st = *wtlog_reader_status (r);
  struct mallinfo2 mi = mallinfo2 ();
  *allocated = mi.arena + mi.hblkhd;
  wtlog_reader_close (r);
  return first;
}

/* The bound on a record's size: the writer refuses what the reader would,
 * and the reader checks a claimed size before it allocates for it. */
static void
test_limits (void)
{
  struct wtlog_status st;
  uint64_t nhashes;
  size_t allocated;
  const uint64_t max = WTLOG_MAX_RECORD_SIZE;

  /* The reader: exactly the maximum is a sound record... */
  craft_big_write ((uint32_t) max, max - WTLOG_FIXED_SIZE);
  int rc = read_crafted (&st, &nhashes, &allocated);
  tap_ok (rc == 0 && nhashes == (max - WTLOG_FIXED_SIZE) / 8 && !st.torn
          && st.records == 1, "a record of the maximum size (%" PRIu64
          " bytes) is read: rc=%d torn=%d %s", max, rc, st.torn, st.error);

  /* ... 8 bytes more is refused at its offset, though all of it is there. */
  craft_big_write ((uint32_t) (max + 8), max + 8 - WTLOG_FIXED_SIZE);
  rc = read_crafted (&st, &nhashes, &allocated);
  tap_ok (rc == -1 && st.torn && st.bad_offset == WTLOG_HEADER_SIZE
          && strstr (st.error, "maximum record size"),
          "a record of the maximum + 8 bytes is refused at byte %" PRIu64
          ": %s", st.bad_offset, st.error);

  /* A size far past the end of the file: refused before the buffer grows
   * past its first 4 MiB. */
  craft_big_write ((uint32_t) max, 4096);
  rc = read_crafted (&st, &nhashes, &allocated);
  tap_ok (rc == -1 && st.torn && st.bad_offset == WTLOG_HEADER_SIZE
          && strstr (st.error, "left in the file") && allocated < (16u << 20),
          "a size past the end of the file is refused at byte %" PRIu64
          " with %zu bytes allocated: %s", st.bad_offset, allocated, st.error);

  /* The encoder (last: before the bound it read 4 GiB past the buffer): a
   * record of exactly the maximum is laid out, one 8 bytes larger is
   * refused, and so is an unaligned 4 GiB - 1 WRITE with data, whose size
   * wrapped the 32-bit field. */
  uint64_t *hashes = calloc ((max - WTLOG_FIXED_SIZE) / 8 + 1, 8);
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  struct wtlog_record at_max = {
    .type = WTLOG_WRITE, .offset = 0,
    .length = (max - WTLOG_FIXED_SIZE) / 8 * WT_SECTOR_SIZE,
  };
  struct wtlog_record over = at_max;
  over.length += WT_SECTOR_SIZE;
  struct wtlog_record wrapped = {
    .type = WTLOG_WRITE, .flags = WTLOG_F_DATA, .offset = 700,
    .length = UINT32_MAX,
  };
  int n_max = wtlog_encode (&at_max, hashes, NULL, fixed, iov);
  errno = 0;
  int n_over = wtlog_encode (&over, hashes, NULL, fixed, iov);
  int over_errno = errno;
  errno = 0;
  int n_wrapped = wtlog_encode (&wrapped, hashes, hashes, fixed, iov);
  tap_ok (n_max == 2 && at_max.size == max && n_over == -1
          && over_errno == EFBIG && n_wrapped == -1 && errno == EFBIG,
          "the encoder lays out a record of %" PRIu64 " bytes, refuses %"
          PRIu64 " and a 4 GiB - 1 WRITE with data (EFBIG)", max, max + 8);
  free (hashes);
}

/* A log still being written: the reader opens it with the second record
 * cut short, reads the first, and finds the second once it is whole (the
 * end of what the file held at open is no end of the log). */
static void
test_growing (void)
{
  write_log ();
  size_t cut = WTLOG_HEADER_SIZE + samples[0].rec.size + 10;
  int fd = open (path, O_WRONLY);
  if (fd < 0 || ftruncate (fd, (off_t) cut) != 0)
    exit (2);
  char err[256];
  struct wtlog_reader *r = wtlog_reader_open (path, NULL, err, sizeof err);
  struct wtlog_record rec;
  int n = 0, rc = -2;
  bool same = r && wtlog_reader_next (r, &rec) == 0 && same_record (&rec, &samples[n++]);
  if (pwrite (fd, log_bytes + cut, log_len - cut, (off_t) cut) != (ssize_t) (log_len - cut))
    exit (2);
  close (fd);
  while (r && (rc = wtlog_reader_next (r, &rec)) == 0)
    same = same && n < nsamples && same_record (&rec, &samples[n++]);
  tap_ok (same && rc == 1 && n == nsamples, "a log that grows while read: all %d records "
          "read (%d, last rc %d)", nsamples, n, rc);
  if (r)
    wtlog_reader_close (r);
}

/* wtlog_fixed_check on records encoded here: seq must be the one due, a
 * record may not run past its export, nor end before it starts. */
static const char *
fixed_check (uint64_t last_seq, uint64_t seq, uint64_t offset, uint64_t length,
             uint64_t t_start, uint64_t t_end, char *why, size_t whylen)
{
  struct wtlog_header h;
  wtlog_header_init (&h, 1 << 20, 1 << 16, false, "test-wtlog");
  uint64_t hashes[4] = { 0 };
  struct wtlog_record rec = {
    .type = WTLOG_WRITE, .seq = seq, .offset = offset, .length = length,
    .t_start = t_start, .t_end = t_end,
  };
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  if (wtlog_encode (&rec, hashes, NULL, fixed, iov) < 0)
    return "encode failed";
  return wtlog_fixed_check (&h, last_seq, fixed, &rec, why, whylen);
}

static void
test_fixed_check (void)
{
  char why[256];
  const char *e;
  const uint64_t end = 1 << 20;
  e = fixed_check (3, 4, end - 1024, 1024, 5, 5, why, sizeof why);
  tap_ok (e == NULL, "a record ending at the end of the disk, seq due, is sound: %s",
          e ? e : "sound");
  e = fixed_check (3, 5, 0, 512, 5, 5, why, sizeof why);
  tap_ok (e && strstr (e, "seq 5 where 4 was due"), "a seq gap (3 then 5) is refused: %s",
          e ? e : "accepted");
  e = fixed_check (3, 3, 0, 512, 5, 5, why, sizeof why);
  tap_ok (e && strstr (e, "seq 3 where 4 was due"), "a repeated seq is refused: %s",
          e ? e : "accepted");
  e = fixed_check (3, 4, end - 1024, 1536, 5, 5, why, sizeof why);
  tap_ok (e && strstr (e, "is outside the disk export"),
          "a record running 512 bytes past the disk is refused: %s", e ? e : "accepted");
  e = fixed_check (3, 4, 0, 512, 6, 5, why, sizeof why);
  tap_ok (e && strstr (e, "t_start is after t_end"),
          "a record ending before it starts is refused: %s", e ? e : "accepted");
}

/* The rules of IN_IMAGE and SAVED, each broken once, checked against a
 * log with or without DATA. */
static const char *
one_copy_check (bool data_log, uint16_t type, uint16_t flags, uint64_t offset,
                uint64_t length, char *why, size_t whylen)
{
  struct wtlog_header h;
  wtlog_header_init (&h, 1 << 20, 1 << 16, data_log, "test-wtlog");
  static uint64_t hashes[8];
  static unsigned char data[4096];
  struct wtlog_record rec = {
    .type = type, .flags = flags, .seq = 1, .offset = offset, .length = length,
  };
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  if (wtlog_encode (&rec, hashes, data, fixed, iov) < 0)
    return "encode failed";
  return wtlog_fixed_check (&h, 0, fixed, &rec, why, whylen);
}

static void
test_one_copy_check (void)
{
  const uint16_t in_image = WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED;
  const struct {
    bool data_log;
    uint16_t type, flags;
    uint64_t offset, length;
    const char *refused;        /* NULL: sound */
  } cases[] = {
    { true, WTLOG_WRITE, in_image, 1024, 2048, NULL },
    { true, WTLOG_WRITE, in_image | WTLOG_F_FUA, 0, 4096, NULL },
    { true, WTLOG_SAVED, WTLOG_F_DATA, 512, 1024, NULL },
    { false, WTLOG_SAVED, 0, 512, 1024, NULL },
    { true, WTLOG_ZERO, in_image, 0, 512, "IN_IMAGE on a record that is not a WRITE" },
    { true, WTLOG_SAVED, WTLOG_F_DATA | WTLOG_F_IN_IMAGE, 0, 512, "IN_IMAGE on a record that is not a WRITE" },
    { false, WTLOG_WRITE, in_image, 0, 512, "IN_IMAGE in a log without DATA" },
    { true, WTLOG_WRITE, WTLOG_F_IN_IMAGE, 0, 512, "IN_IMAGE without APPLIED" },
    { true, WTLOG_WRITE, in_image | WTLOG_F_DATA, 0, 512, "IN_IMAGE with DATA" },
    { true, WTLOG_WRITE, in_image, 100, 512, "not whole sectors" },
    { true, WTLOG_WRITE, in_image, 512, 700, "not whole sectors" },
    { true, WTLOG_SAVED, 0, 0, 512, "SAVED without DATA in a log with DATA" },
    { false, WTLOG_SAVED, WTLOG_F_DATA, 0, 512, "SAVED with DATA in a log without DATA" },
    { true, WTLOG_SAVED, WTLOG_F_DATA | WTLOG_F_FUA, 0, 512, "SAVED with a flag other than DATA" },
    { true, WTLOG_SAVED, WTLOG_F_DATA | WTLOG_F_FAILED, 0, 512, "SAVED with a flag other than DATA" },
    { true, WTLOG_SAVED, WTLOG_F_DATA, 1000, 512, "SAVED on a range that is not whole sectors" },
    { true, WTLOG_SAVED + 1, 0, 0, 0, "unknown type 9" },
    { true, WTLOG_WRITE, 128 | WTLOG_F_DATA, 0, 512, "unknown flags 0x88" },
  };
  int good = 0, n = (int) (sizeof cases / sizeof cases[0]);
  for (int i = 0; i < n; i++) {
    char why[256];
    const char *e = one_copy_check (cases[i].data_log, cases[i].type, cases[i].flags,
                                    cases[i].offset, cases[i].length, why, sizeof why);
    bool ok = cases[i].refused ? e && strstr (e, cases[i].refused) : !e;
    if (!ok)
      printf ("# case %d (type %u flags 0x%x %" PRIu64 "+%" PRIu64 "): %s\n", i,
                cases[i].type, cases[i].flags, cases[i].offset, cases[i].length,
                e ? e : "sound");
    good += ok;
  }
  tap_ok (good == n, "IN_IMAGE and SAVED: %d of %d records sound or refused as due",
          good, n);
}

/* A log written by the writer with a SAVED record, then an IN_IMAGE record
 * on a range that is not whole sectors: the reader reads the first and
 * refuses the second with its byte offset and why. */
static void
test_one_copy_reader (void)
{
  struct wtlog_header h;
  char err[256];
  wtlog_header_init (&h, 1 << 20, 0, true, "test-wtlog");
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  uint64_t hashes[4] = { 1, 2, 3, 4 };
  unsigned char data[1024] = { 7 };
  struct wtlog_record saved = {
    .type = WTLOG_SAVED, .flags = WTLOG_F_DATA, .conn = 1, .offset = 512, .length = 1024,
  };
  struct wtlog_record bad = {
    .type = WTLOG_WRITE, .flags = WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED, .conn = 1,
    .offset = 256, .length = 1024,
  };
  if (!w || wtlog_writer_append (w, &saved, hashes, data) == -1
      || wtlog_writer_append (w, &bad, hashes, NULL) == -1 || wtlog_writer_close (w) == -1)
    exit (2);
  struct wtlog_reader *r = wtlog_reader_open (path, NULL, err, sizeof err);
  struct wtlog_record rec;
  bool first = r && wtlog_reader_next (r, &rec) == 0 && rec.type == WTLOG_SAVED
    && rec.nhashes == 2 && rec.hashes[1] == 2 && rec.data && rec.data[0] == 7;
  int rc = r ? wtlog_reader_next (r, &rec) : 0;
  const struct wtlog_status *st = r ? wtlog_reader_status (r) : NULL;
  uint64_t at = WTLOG_HEADER_SIZE + saved.size;
  char want[64];
  snprintf (want, sizeof want, "bad record at byte %" PRIu64 " (after seq 1)", at);
  tap_ok (first && rc == -1 && st->torn && st->bad_offset == at
          && strstr (st->error, want) && strstr (st->error, "not whole sectors"),
          "a SAVED record reads back with its hashes and bytes; an unaligned "
          "IN_IMAGE one is refused: %s", st ? st->error : err);
  if (r)
    wtlog_reader_close (r);
}

int
main (void)
{
  if (!mkdtemp (dir))
    return 2;
  snprintf (path, sizeof path, "%s/t.wtlog", dir);
  make_samples ();
  write_log ();
  tap_plan (24);

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
  test_limits ();
  test_growing ();
  test_fixed_check ();
  test_one_copy_check ();
  test_one_copy_reader ();
  unlink (path);
  rmdir (dir);
  return tap_done ();

}
