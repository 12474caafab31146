/* wtlog-ring: a killed plugin's log completed from its ring file.  A real
 * log is written with wtlog_writer; each case keeps part of it as the log
 * file a kill left, builds the ring the plugin would have left beside it
 * (64 KiB, so records wrap around its end; slots outside what the ring
 * holds for the log filled with garbage or an older lap), recovers, and
 * compares the log with the original byte for byte.  Last, the log is
 * written again with some records of 64 KiB and more, which the plugin
 * writes straight into the log file and never into the ring (a 256 KiB
 * ring then, as the plugin's smallest), to complete logs whose records
 * after moved are partly in the ring and partly in the file only. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"
#include "tap.h"
#include "wtlog-ring.h"
#include "wtlog.h"

#define RING_SIZE (64u << 10)
/* The ring of the logs with large records (test_direct). */
#define DIRECT_RING_SIZE (256u << 10)
/* Records from this size on the plugin writes straight into the log file,
 * never into the ring (WTP_LOG_DIRECT_MIN, plugin/log.c). */
#define DIRECT_MIN (64u << 10)
/* The data of a large record: with its hashes, more than DIRECT_MIN. */
#define DIRECT_LENGTH 72000
#define NRECORDS 64
#define DISK_SIZE (64u << 20)
#define CHANNEL_SIZE (1u << 20)

static char dir[] = "/tmp/wtlog-ring-test.XXXXXX";
static char log_path[256], ring_path[256];

/* The original log: its bytes and where each record starts (rec_at[n] is
 * the end of the last). */
static struct wtlog_header header;
static unsigned char *log_bytes;
static size_t log_len;
static uint64_t rec_at[NRECORDS + 1];
/* The ring's size in the case at hand. */
static uint64_t ring_size = RING_SIZE;

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned char
garbage_byte (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned char) (rng | 1);     /* never 0: garbage is not a zero tail */
}

static void
die (const char *what)
{
  fprintf (stderr, "# %s: %s\n", what, strerror (errno));
  exit (2);
}

/* The records that are WRITEs of DIRECT_LENGTH bytes in a log with large
 * records: two of them (30, 31) in a row; all but 30 at an offset of the
 * same remainder mod 512, so of one size. */
static bool
large_record (int i)
{
  return i == 4 || i == 10 || i == 16 || i == 30 || i == 31 || i == 40 || i == 46;
}

/* Record i of the log: an OPEN, then WRITEs with data of various sizes
 * and offsets, among them FLUSHes, ZEROs, TRIMs, CHANNEL writes, SAVED
 * records and IN_IMAGE writes (data=on's one copy of large writes), then
 * the connection's CLOSE and the final CLOSE.  With large, some WRITEs
 * are of DIRECT_LENGTH bytes. */
static void
make_record (int i, bool large, struct wtlog_record *rec)
{
  static const uint64_t lengths[] = { 4096, 700, 12288, 30000, 512, 20000, 1, 9000 };
  memset (rec, 0, sizeof *rec);
  rec->conn = 1;
  rec->t_start = 1000 * (uint64_t) i;
  rec->t_end = rec->t_start + 10 + (uint64_t) i;
  if (i == 0 || i >= NRECORDS - 2) {
    rec->type = i == 0 ? WTLOG_OPEN : WTLOG_CLOSE;
    rec->conn = i == NRECORDS - 1 ? 0 : 1;
    rec->t_end = rec->t_start;
    if (rec->conn) {
      rec->offset = WTLOG_EXPORT_DISK;
      rec->length = DISK_SIZE;
    }
  }
  else if (i % 7 == 0)
    rec->type = WTLOG_FLUSH;
  else if (i % 11 == 0) {
    rec->type = WTLOG_ZERO;
    rec->offset = 4096 * (uint64_t) i;
    rec->length = 8192;
  }
  else if (i % 13 == 0) {
    rec->type = WTLOG_TRIM;
    rec->offset = 1 << 20;
    rec->length = 1 << 16;
  }
  else if (i % 17 == 0) {       /* data=on's one copy: the bytes kept */
    rec->type = WTLOG_SAVED;
    rec->flags = WTLOG_F_DATA;
    rec->offset = 8192 * (uint64_t) i;
    rec->length = 4096;
  }
  else if (i % 19 == 0) {       /* ... and a write that kept none */
    rec->type = WTLOG_WRITE;
    rec->flags = WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED;
    rec->offset = 8192 * (uint64_t) i;
    rec->length = 8192;
  }
  else {
    rec->type = i % 9 == 0 ? WTLOG_CHANNEL : WTLOG_WRITE;
    rec->flags = WTLOG_F_DATA | (i % 5 == 0 ? WTLOG_F_FUA : 0);
    rec->length = large && large_record (i) ? DIRECT_LENGTH : lengths[i % 8];
    rec->offset = 100 * (uint64_t) (i % 3) + 8192 * (uint64_t) i;
  }
}

/* Writes the log with wtlog_writer and keeps its bytes (large: with the
 * large records). */
static void
make_log (bool large)
{
  static unsigned char data[DIRECT_LENGTH];
  static uint64_t hashes[256];
  char err[256];
  wtlog_header_init (&header, DISK_SIZE, CHANNEL_SIZE, true, "test-wtlog-ring");
  struct wtlog_writer *w = wtlog_writer_open (log_path, &header, err, sizeof err);
  if (!w) {
    fprintf (stderr, "# %s\n", err);
    exit (2);
  }
  rec_at[0] = WTLOG_HEADER_SIZE;
  for (int i = 0; i < NRECORDS; i++) {
    struct wtlog_record rec;
    make_record (i, large, &rec);
    for (size_t b = 0; b < sizeof data; b++)
      data[b] = (unsigned char) (b * 31 + (size_t) i * 7);
    for (int h = 0; h < 256; h++)
      hashes[h] = 0x0101010101010101ull * (uint64_t) h + (uint64_t) i;
    if (wtlog_writer_append (w, &rec, hashes, data) == -1)
      die ("append");
    rec_at[i + 1] = rec_at[i] + rec.size;
  }
  if (wtlog_writer_close (w) == -1)
    die ("close");
  log_len = (size_t) rec_at[NRECORDS];
  free (log_bytes);
  if (!(log_bytes = malloc (log_len)))
    die ("malloc");
  int fd = open (log_path, O_RDONLY);
  if (fd < 0 || pread (fd, log_bytes, log_len, 0) != (ssize_t) log_len)
    die ("read the log");
  close (fd);
}

/* The start of the last record that ends at or before pos: its index. */
static int
records_below (uint64_t pos)
{
  int n = 0;
  while (n < NRECORDS && rec_at[n + 1] <= pos)
    n++;
  return n;
}

/* The first record that crosses a multiple of the ring size (the ring's
 * end) and starts at least after record `after`. */
static int
record_across_ring_end (int after)
{
  for (int i = after; i < NRECORDS; i++)
    if (rec_at[i] / ring_size != (rec_at[i + 1] - 1) / ring_size
        && rec_at[i + 1] % ring_size != 0)
      return i;
  return -1;
}

static void
write_file (const char *path, const unsigned char *buf, size_t len)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || (len && write (fd, buf, len) != (ssize_t) len))
    die (path);
  close (fd);
}

/* A file's bytes (NULL, *len 0 when it does not exist). */
static unsigned char *
slurp (const char *path, size_t *len)
{
  struct stat sb;
  *len = 0;
  int fd = open (path, O_RDONLY);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &sb) != 0)
    die (path);
  unsigned char *p = malloc ((size_t) sb.st_size + 1);
  if (!p || pread (fd, p, (size_t) sb.st_size, 0) != sb.st_size)
    die (path);
  close (fd);
  *len = (size_t) sb.st_size;
  return p;
}

enum tail { TAIL_NONE, TAIL_PAD4K, TAIL_ZEROES, TAIL_GARBAGE };
enum fill { FILL_GARBAGE, FILL_OLD_LAP };

/* What a kill left: the log file holds the log's first `keep` bytes, then
 * the tail; the ring's header says `moved`, and its slots hold the log's
 * bytes [moved, copied), the other slots `fill`.  Records of DIRECT_MIN
 * bytes and more (only in the log with large records) are as the plugin
 * leaves them: those that end by copied are whole in the log file (at
 * their place, zeroes before them), and their slots in the ring hold
 * `fill` too. */
struct kill {
  uint64_t keep;
  enum tail tail;
  uint64_t moved;
  uint64_t copied;
  enum fill fill;
};

/* The record that holds log position p, or -1 (the header, or past the
 * log's end). */
static int
record_at (uint64_t p)
{
  if (p < rec_at[0] || p >= rec_at[NRECORDS])
    return -1;
  int lo = 0, hi = NRECORDS - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (rec_at[mid] <= p)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* Whether record i is one the plugin writes straight into the log file. */
static bool
record_is_direct (int i)
{
  return i >= 0 && rec_at[i + 1] - rec_at[i] >= DIRECT_MIN;
}

/* Whether record i is whole in the log file a kill left, though not below
 * keep: it was written straight there. */
static bool
direct_in_file (const struct kill *k, int i)
{
  return record_is_direct (i) && rec_at[i + 1] > k->keep
    && rec_at[i + 1] <= k->copied;
}

static void
write_killed_log (const struct kill *k)
{
  size_t len = (size_t) k->keep;
  if (k->tail == TAIL_PAD4K || k->tail == TAIL_GARBAGE)
    len = (len + 4095) & ~(size_t) 4095;
  else if (k->tail == TAIL_ZEROES)
    len += 1 << 20;
  for (int i = 0; i < NRECORDS; i++)
    if (direct_in_file (k, i) && rec_at[i + 1] > len)
      len = (size_t) rec_at[i + 1];
  unsigned char *buf = calloc (1, len + 1);
  if (!buf)
    die ("calloc");
  memcpy (buf, log_bytes, (size_t) k->keep);
  if (k->tail == TAIL_GARBAGE)
    for (size_t i = (size_t) k->keep; i < len; i++)
      buf[i] = garbage_byte ();
  for (int i = 0; i < NRECORDS; i++)
    if (direct_in_file (k, i))
      memcpy (buf + rec_at[i], log_bytes + rec_at[i], rec_at[i + 1] - rec_at[i]);
  write_file (log_path, buf, len);
  free (buf);
}

/* What the ring last held for log position p (FILL_OLD_LAP): the log's
 * byte there, or where p is in a record written straight into the file,
 * that of the nearest position a lap or more before that went through
 * the ring; garbage before the log's records. */
static unsigned char
ring_held (uint64_t p)
{
  while (record_is_direct (record_at (p)))
    p = p >= ring_size ? p - ring_size : 0;
  return p >= WTLOG_HEADER_SIZE && p < log_len ? log_bytes[p] : garbage_byte ();
}

/* The ring a plugin would leave: slot s holds the byte at the log
 * position p in [moved, copied) with p mod R = s (unless p is in a
 * record written straight into the file); every other slot
 * garbage, or what the ring held before it was overwritten (FILL_OLD_LAP:
 * ring_held). */
static void
write_ring (const struct kill *k, const uint8_t run_id[16])
{
  static unsigned char buf[WTLOG_RING_HEADER_SIZE + DIRECT_RING_SIZE];
  struct wtlog_ring_header h = { .ring_size = ring_size, .moved = k->moved };
  memcpy (h.run_id, run_id, 16);
  wtlog_ring_header_encode (&h, buf);
  unsigned char *ring = buf + WTLOG_RING_HEADER_SIZE;
  for (uint64_t s = 0; s < ring_size; s++) {
    /* The position of the lap that ends at copied which maps to s. */
    uint64_t p = k->copied - ring_size + (s + ring_size - k->copied % ring_size) % ring_size;
    if (p >= k->moved && p < log_len && !record_is_direct (record_at (p)))
      ring[s] = log_bytes[p];
    else if (k->fill == FILL_OLD_LAP)
      ring[s] = ring_held (p);
    else
      ring[s] = garbage_byte ();
  }
  write_file (ring_path, buf, WTLOG_RING_HEADER_SIZE + ring_size);
}

static void
put_ring_bytes (uint64_t log_pos, const unsigned char *bytes, size_t len)
{
  int fd = open (ring_path, O_WRONLY);
  if (fd < 0)
    die (ring_path);
  for (size_t i = 0; i < len; i++)
    if (pwrite (fd, bytes + i, 1,
                WTLOG_RING_HEADER_SIZE + (log_pos + i) % ring_size) != 1)
      die (ring_path);
  close (fd);
}

/* Writes bytes into the log file at log_pos (the file as a kill left it). */
static void
put_log_bytes (uint64_t log_pos, const unsigned char *bytes, size_t len)
{
  int fd = open (log_path, O_WRONLY);
  if (fd < 0 || pwrite (fd, bytes, len, (off_t) log_pos) != (ssize_t) len)
    die (log_path);
  close (fd);
}

static bool
ring_exists (void)
{
  return access (ring_path, F_OK) == 0;
}

/* Reads the log back as it is (no ring): records, last seq, status. */
static void
read_back (struct wtlog_status *st, int *records, bool *seq_ok)
{
  char err[256];
  struct wtlog_record rec;
  memset (st, 0, sizeof *st);
  *records = -1;
  *seq_ok = true;
  struct wtlog_reader *r = wtlog_reader_open_plain (log_path, NULL, err, sizeof err);
  if (!r) {
    printf ("# %s\n", err);
    return;
  }
  *records = 0;
  while (wtlog_reader_next (r, &rec) == 0) {
    if (rec.seq != (uint64_t) *records + 1 || rec.log_offset != rec_at[*records])
      *seq_ok = false;
    ++*records;
  }
  *st = *wtlog_reader_status (r);
  wtlog_reader_close (r);
}

/* Whether the log file is the original's first `records` records, no more
 * bytes, reads back clean with seq 1..records, and the ring is gone. */
static bool
log_is_original (int records, bool closed)
{
  size_t len;
  unsigned char *now = slurp (log_path, &len);
  struct wtlog_status st;
  int n;
  bool seq_ok;
  read_back (&st, &n, &seq_ok);
  bool ok = now && len == rec_at[records] && memcmp (now, log_bytes, len) == 0
    && n == records && seq_ok && !st.torn && st.closed == closed
    && st.zero_tail == 0 && !ring_exists ();
  if (!ok)
    printf ("# log of %zu bytes (want %" PRIu64 "), %d records (want %d), "
            "seq %s, torn %d %s, closed %d, ring %s\n", len, rec_at[records],
            n, records, seq_ok ? "ok" : "wrong", st.torn, st.error, st.closed,
            ring_exists () ? "still there" : "gone");
  free (now);
  return ok;
}

/* Runs one kill: recover, and the log must hold the records wholly below
 * `copied` (the ring's and the file's), and end there. */
static void
check_kill (const char *name, const struct kill *k)
{
  char err[512];
  write_killed_log (k);
  write_ring (k, header.run_id);
  int want = records_below (k->copied > k->keep ? k->copied : k->keep);
  int in_file = records_below (k->keep);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  bool ok = log_is_original (want, want == NRECORDS);
  tap_ok (rc == (want > in_file) && ok,
          "%s: %d records, %d of them put in (rc %d, want %d): %s",
          name, want, want - in_file, rc, want > in_file, err);
}

/* Files byte for byte as they were. */
struct snapshot {
  unsigned char *log, *ring;
  size_t log_len, ring_len;
};

static void
snap (struct snapshot *s)
{
  s->log = slurp (log_path, &s->log_len);
  s->ring = slurp (ring_path, &s->ring_len);
}

static bool
unchanged (struct snapshot *s)
{
  struct snapshot now;
  snap (&now);
  bool same = now.log && now.ring && now.log_len == s->log_len
    && now.ring_len == s->ring_len
    && memcmp (now.log, s->log, s->log_len) == 0
    && memcmp (now.ring, s->ring, s->ring_len) == 0;
  free (now.log);
  free (now.ring);
  free (s->log);
  free (s->ring);
  return same;
}

/* Whether the log file is now byte for byte was (was_len bytes, from
 * slurp, freed here). */
static bool
log_is (unsigned char *was, size_t was_len)
{
  size_t len;
  unsigned char *now = slurp (log_path, &len);
  bool same = was && now && len == was_len && memcmp (now, was, len) == 0;
  free (was);
  free (now);
  return same;
}

/* The ordinary kills: where the log file ends, where moved is, how much
 * the ring holds, and what else is in it. */
static void
test_kills (void)
{
  int across = record_across_ring_end (6);
  if (!tap_ok (across > 0 && across + 4 < NRECORDS - 2,
               "the log has a record across the ring's end (record %d, bytes "
               "%" PRIu64 " to %" PRIu64 ")", across, rec_at[across],
               rec_at[across + 1]))
    return;
  uint64_t start = rec_at[across - 2], end = rec_at[across + 3];
  struct kill k = { start, TAIL_NONE, start, end, FILL_GARBAGE };
  check_kill ("killed at a record boundary, the ring wrapping around its end", &k);

  k.copied = end - 5;           /* the last record only partly in the ring */
  check_kill ("the ring holds the last record only in part", &k);

  k.copied = end;
  k.fill = FILL_OLD_LAP;
  check_kill ("the slots after the copied bytes hold an older lap", &k);

  k = (struct kill) { start, TAIL_ZEROES, start, end, FILL_GARBAGE };
  check_kill ("the log file has 1 MiB of zeroes allocated ahead", &k);

  /* moved mid-record: the record's head is in the log file, its tail in
   * the ring, and the ring's slots for its head hold garbage. */
  uint64_t mid = rec_at[across - 1] + 100;
  k = (struct kill) { mid, TAIL_NONE, mid, end, FILL_GARBAGE };
  check_kill ("moved in the middle of a record (the log file ends there)", &k);

  k.tail = TAIL_PAD4K;
  check_kill ("moved in the middle of a record, the file zero-padded to 4 KiB", &k);

  /* moved is mid-record across the ring's end itself. */
  mid = rec_at[across] + (RING_SIZE - rec_at[across] % RING_SIZE) / 2;
  k = (struct kill) { mid, TAIL_NONE, mid, end, FILL_GARBAGE };
  check_kill ("moved in the record that crosses the ring's end", &k);

  /* The mover copied past moved before it was killed (not yet recorded),
   * and the block it copied last ends in bytes that are not the log's. */
  k = (struct kill) { rec_at[across] + 40, TAIL_GARBAGE, start, end, FILL_GARBAGE };
  check_kill ("the log file holds more than moved, then a copied block's garbage", &k);

  /* A full lap: the ring holds exactly R bytes past moved. */
  k = (struct kill) { start, TAIL_NONE, start, start + RING_SIZE, FILL_GARBAGE };
  check_kill ("the ring holds a full lap past moved", &k);

  /* Everything, the final CLOSE included: the log reads closed. */
  uint64_t last = rec_at[NRECORDS - 3];
  k = (struct kill) { last, TAIL_ZEROES, last, log_len, FILL_GARBAGE };
  check_kill ("the ring holds the rest of the log up to the final CLOSE", &k);
}

/* A record in the ring that is not sound ends the recovery before it. */
static void
test_stops (void)
{
  char err[512];
  int across = record_across_ring_end (6);
  uint64_t start = rec_at[across - 2], end = rec_at[across + 3];
  struct kill k = { start, TAIL_NONE, start, end, FILL_GARBAGE };

  /* A flipped payload byte of the record across the ring's end, in the
   * part that wrapped to the ring's start. */
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  uint64_t at = rec_at[across + 1] - 3;
  unsigned char c = log_bytes[at] ^ 0x40;
  put_ring_bytes (at, &c, 1);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (across, false),
          "a bad CRC in the ring stops the recovery before that record "
          "(%d records): %s", across, err);

  /* Right after the copied bytes, a whole record of an older lap (a
   * small WRITE with data): sound, CRC and all, but its seq is not the
   * next one.  moved is near, so that it lands in slots of no use. */
  const int old = 4;
  size_t blen = rec_at[old + 1] - rec_at[old];
  k = (struct kill) { rec_at[across], TAIL_NONE, rec_at[across], rec_at[across + 1],
                      FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_ring_bytes (k.copied, log_bytes + rec_at[old], blen);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (across + 1, false),
          "an older lap's whole record after the copied bytes is not taken "
          "(seq): %s", err);

  /* The same record, its seq made the next one and its CRC made to match,
   * but naming a range outside the disk: the reader's checks apply. */
  unsigned char bad[4096];
  if (blen > sizeof bad)
    die ("the older lap's record is too large");
  memcpy (bad, log_bytes + rec_at[old], blen);
  uint64_t offset = wt_get64 (bad + 48);
  wt_put64 (bad + 24, (uint64_t) across + 2);
  /* Past the disk's end, as far into its sector as before: the size due
   * stays the same, only the range is wrong. */
  wt_put64 (bad + 48, DISK_SIZE - 512 + offset % 512);
  wt_put32 (bad + 4, wtlog_record_crc (bad, blen));
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_ring_bytes (k.copied, bad, blen);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (across + 1, false),
          "a record with the next seq and a good CRC but a range past the "
          "disk is not taken: %s", err);
  /* With its range put back, the same record is taken: the check above
   * stopped at the range, nothing else. */
  wt_put64 (bad + 48, offset);
  wt_put32 (bad + 4, wtlog_record_crc (bad, blen));
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_ring_bytes (k.copied, bad, blen);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  struct wtlog_status st;
  int n;
  bool seq_ok;
  read_back (&st, &n, &seq_ok);
  tap_ok (rc == 1 && n == across + 2 && st.last_seq == (uint64_t) across + 2
          && !st.torn && !ring_exists (),
          "the same record with its range put back is taken (%d records): %s",
          n, err);

  /* After the final CLOSE, a sound record with the next seq: the log
   * ended at the CLOSE, so it is not taken. */
  uint64_t last = rec_at[NRECORDS - 3];
  k = (struct kill) { last, TAIL_NONE, last, log_len, FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  wt_put64 (bad + 24, NRECORDS + 1);
  wt_put32 (bad + 4, wtlog_record_crc (bad, blen));
  put_ring_bytes (log_len, bad, blen);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (NRECORDS, true),
          "a sound record after the final CLOSE is not taken: %s", err);
}

/* Kills where the ring adds nothing. */
static void
test_nothing_to_add (void)
{
  char err[512];
  uint64_t at = rec_at[20];
  struct kill k = { at, TAIL_ZEROES, at, at, FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 0 && log_is_original (20, false),
          "nothing in the ring past the log: the zero tail is cut, the ring "
          "removed (rc %d) %s", rc, err);

  /* After the last record, bytes that are neither zeroes nor a record the
   * ring completes: the mover never writes such (it copies the ring's
   * bytes, and pads with zeroes), so they are a torn log's evidence, kept
   * as they are.  Whether they lie below moved or above. */
  static const struct { uint64_t keep; enum tail tail; uint64_t moved; const char *what; }
  torn[] = {
    { 200, TAIL_NONE, 200, "a record cut short below moved" },
    { 200, TAIL_NONE, 0, "a record cut short at and above moved" },
    { 0, TAIL_GARBAGE, 0, "garbage after moved" },
  };
  for (int i = 0; i < 3; i++) {
    uint64_t keep = rec_at[20] + torn[i].keep, moved = rec_at[20] + torn[i].moved;
    k = (struct kill) { keep, torn[i].tail, moved, keep, FILL_GARBAGE };
    write_killed_log (&k);
    size_t was_len;
    unsigned char *was = slurp (log_path, &was_len);
    write_ring (&k, header.run_id);
    rc = wtlog_ring_recover (log_path, err, sizeof err);
    bool same = log_is (was, was_len);
    struct wtlog_status st;
    int n;
    bool seq_ok;
    read_back (&st, &n, &seq_ok);
    tap_ok (rc == 0 && same && n == 20 && st.torn && st.bad_offset == rec_at[20] && !ring_exists (),
            "%s, the ring adding nothing: the log is left as it is (torn at "
            "byte %" PRIu64 "), the ring removed: %s", torn[i].what,
            st.bad_offset, st.error);
  }

  /* A closed log: the ring is stale, the log is whole. */
  write_file (log_path, log_bytes, log_len);
  k = (struct kill) { log_len, TAIL_NONE, rec_at[40], rec_at[40] + 1000, FILL_GARBAGE };
  write_ring (&k, header.run_id);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 0 && log_is_original (NRECORDS, true),
          "a closed log: left as it is, the ring removed (rc %d) %s", rc, err);

  /* No ring at all. */
  write_file (log_path, log_bytes, rec_at[30]);
  unlink (ring_path);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 0 && err[0] == '\0' && log_is_original (30, false),
          "no ring: nothing done (rc %d) %s", rc, err);
}

/* Rings that must not be used: the log and the ring stay as they are. */
static void
test_refused (void)
{
  char err[512];
  struct snapshot s;
  uint64_t at = rec_at[20];
  struct kill k = { at, TAIL_NONE, at, rec_at[25], FILL_GARBAGE };

  write_killed_log (&k);
  uint8_t other[16];
  memcpy (other, header.run_id, 16);
  other[5] ^= 1;
  write_ring (&k, other);
  snap (&s);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == -1 && strstr (err, ring_path) && strstr (err, "run_id")
          && strstr (err, "another run") && unchanged (&s),
          "a ring of another run: refused, both files unchanged: %s", err);

  /* The reader's open fails with the same message. */
  snap (&s);
  char rerr[512] = "";
  struct wtlog_reader *r = wtlog_reader_open (log_path, NULL, rerr, sizeof rerr);
  tap_ok (r == NULL && strcmp (rerr, err) == 0 && unchanged (&s),
          "wtlog_reader_open of that log fails with it: %s", rerr);
  wtlog_reader_close (r);

  /* A live plugin holds the ring's lock (here on another open file
   * description of this process, as a plugin in the same process would). */
  write_ring (&k, header.run_id);
  int fd = open (ring_path, O_RDWR);
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) == -1)
    die ("flock");
  snap (&s);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 0 && unchanged (&s),
          "a ring locked by a live plugin: nothing done, both files unchanged (rc %d)",
          rc);
  close (fd);

  /* A ring header that is not one. */
  static const char *const what[] = { "bad magic at byte 0", "ring size 1000 at byte 16",
                                      "moved 100 at byte 40" };
  bool headers_ok = true;
  for (int i = 0; i < 3; i++) {
    write_ring (&k, header.run_id);
    int rfd = open (ring_path, O_WRONLY);
    unsigned char b[8];
    if (i == 0)
      memcpy (b, "WTRING\0\r", 8);
    else
      wt_put64 (b, i == 1 ? 1000 : 100);
    if (rfd < 0 || pwrite (rfd, b, 8, i == 0 ? 0 : i == 1 ? WTLOG_RING_OFF_RING_SIZE
                           : WTLOG_RING_OFF_MOVED) != 8)
      die (ring_path);
    close (rfd);
    snap (&s);
    rc = wtlog_ring_recover (log_path, err, sizeof err);
    bool ok = rc == -1 && strncmp (err, ring_path, strlen (ring_path)) == 0
      && strstr (err, what[i]) && unchanged (&s);
    printf ("# %s\n", err);
    headers_ok = headers_ok && ok;
  }
  tap_ok (headers_ok, "a bad ring header (magic, ring size, moved) is refused, "
          "naming the ring and the field; both files unchanged");
}

/* The log cannot be written: the ring is not used, and the message says
 * why.  Root writes whatever the mode says, so there the log is made
 * immutable (where the file system and the capabilities allow). */
static void
test_log_not_writable (void)
{
  char err[512];
  uint64_t at = rec_at[20];
  struct kill k = { at, TAIL_NONE, at, rec_at[25], FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  int fd = open (log_path, O_RDONLY);
  int was = 0, flags;
  bool locked = geteuid () != 0 ? chmod (log_path, 0444) == 0
    : fd >= 0 && ioctl (fd, FS_IOC_GETFLAGS, &was) == 0
      && (flags = was | FS_IMMUTABLE_FL, ioctl (fd, FS_IOC_SETFLAGS, &flags) == 0);
  if (!locked) {
    tap_ok (1, "a log that cannot be written # SKIP cannot make it so here");
    close (fd);
    return;
  }
  struct snapshot s;
  snap (&s);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  char want[600];
  snprintf (want, sizeof want, "%s: cannot complete it from %s: open: ",
            log_path, ring_path);
  if (geteuid () != 0)
    chmod (log_path, 0644);
  else
    ioctl (fd, FS_IOC_SETFLAGS, &was);
  close (fd);
  tap_ok (rc == -1 && strncmp (err, want, strlen (want)) == 0 && unchanged (&s),
          "a log that cannot be written: refused, both unchanged: %s", err);
}

/* Every tool opens logs with wtlog_reader_open: it completes the log. */
static void
test_reader_open (void)
{
  char err[512] = "untouched";
  int across = record_across_ring_end (6);
  uint64_t start = rec_at[across - 2], end = rec_at[across + 3];
  struct kill k = { start, TAIL_PAD4K, start, end, FILL_OLD_LAP };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (log_path, &h, err, sizeof err);
  int n = 0, rc = -2;
  while (r && (rc = wtlog_reader_next (r, &rec)) == 0)
    n++;
  bool clean = r && !wtlog_reader_status (r)->torn;
  wtlog_reader_close (r);
  int want = records_below (end);
  tap_ok (r && rc == 1 && clean && n == want && strcmp (err, "untouched") == 0
          && memcmp (h.run_id, header.run_id, 16) == 0 && log_is_original (want, false),
          "wtlog_reader_open completes a killed log and reads all %d records (%d)",
          want, n);
}

/* The log written again with large records (large_record), which the
 * plugin writes straight into the log file, never into the ring: after
 * moved, records in the ring and records in the file only, one after
 * another, with the file's holes zeroes. */
static void
test_direct (void)
{
  char err[512];
  make_log (true);
  ring_size = DIRECT_RING_SIZE;
  bool layout = true;
  for (int i = 0; i < NRECORDS; i++)
    layout = layout && record_is_direct (i) == large_record (i);
  /* The stretches of records after moved below are within one lap of the
   * ring; record 40 is of record 16's size, and a lap or more after
   * record 10. */
  uint64_t large = rec_at[17] - rec_at[16];
  layout = layout && rec_at[19] - rec_at[8] <= ring_size
    && rec_at[34] - rec_at[28] <= ring_size && rec_at[50] - rec_at[44] <= ring_size
    && rec_at[43] - rec_at[38] <= ring_size && rec_at[41] - rec_at[40] == large
    && rec_at[40] >= rec_at[11] + ring_size;
  if (!tap_ok (layout, "the log with large records (%zu bytes): records of %" PRIu64
               " bytes written straight into the file at 4, 10, 16, 30, 31, 40, 46, "
               "the rest smaller than %u", log_len, large, DIRECT_MIN))
    return;

  /* 1: every record the plugin acknowledged, whether from the ring or
   * from the file alone, in order, byte for byte. */
  struct kill k = { rec_at[8], TAIL_ZEROES, rec_at[8], rec_at[14], FILL_GARBAGE };
  check_kill ("direct: small records in the ring, a large one in the file only "
              "(its slots garbage), more small ones in the ring", &k);

  k = (struct kill) { rec_at[38], TAIL_ZEROES, rec_at[38], rec_at[43], FILL_OLD_LAP };
  check_kill ("direct: the same, the large record's slots holding an older lap", &k);

  k = (struct kill) { rec_at[28], TAIL_ZEROES, rec_at[28], rec_at[34], FILL_GARBAGE };
  check_kill ("direct: two large records in a row in the file only, between "
              "records in the ring", &k);

  /* The mover was killed while it copied record 45: the file holds its
   * head past moved, zeroes, then record 46 (and ends with it). */
  k = (struct kill) { rec_at[45] + 100, TAIL_NONE, rec_at[44], rec_at[50], FILL_OLD_LAP };
  check_kill ("direct: the file holds part of the record before a large one "
              "past moved (a move killed), the large one whole, then records "
              "in the ring", &k);

  k = (struct kill) { rec_at[14], TAIL_ZEROES, rec_at[14], rec_at[17], FILL_GARBAGE };
  check_kill ("direct: the last record a large one in the file only", &k);

  /* 2: a large record cut short in the file (its write killed), zeroes
   * after it: the log ends before it, though records in the ring (and
   * record 17, whole in the file) follow it. */
  static unsigned char zeroes[DIRECT_LENGTH];
  uint64_t cut = rec_at[16] + large / 2;
  k = (struct kill) { rec_at[8], TAIL_ZEROES, rec_at[8], rec_at[19], FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_log_bytes (cut, zeroes, rec_at[17] - cut);
  int rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (16, false),
          "direct: a large record cut short in the file stops the recovery "
          "before it, after the large record and the ring's records before it "
          "(16 records, the log cut there): %s", err);

  /* The same at moved: nothing to put in, so the log is left as it is,
   * torn at that record, and the ring removed (as any record cut short
   * above moved; this one passes without the file's fallback too). */
  k = (struct kill) { rec_at[16], TAIL_ZEROES, rec_at[16], rec_at[19], FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_log_bytes (cut, zeroes, rec_at[17] - cut);
  size_t was_len;
  unsigned char *was = slurp (log_path, &was_len);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  bool same = log_is (was, was_len);
  struct wtlog_status st;
  int n;
  bool seq_ok;
  read_back (&st, &n, &seq_ok);
  tap_ok (rc == 0 && same && n == 16 && seq_ok && st.torn && st.bad_offset == rec_at[16]
          && !ring_exists (),
          "direct: a large record at moved cut short: the log left as it is, "
          "16 records, torn at byte %" PRIu64 ", the ring removed: %s",
          st.bad_offset, st.error);

  /* 3: where record 16 is due, the file holds record 40 (whole, CRC and
   * all, of the same size): its seq is not the next one, not taken. */
  k = (struct kill) { rec_at[8], TAIL_ZEROES, rec_at[8], rec_at[19], FILL_GARBAGE };
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_log_bytes (rec_at[16], log_bytes + rec_at[40], large);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  tap_ok (rc == 1 && log_is_original (16, false),
          "direct: a large record in the file with a seq from further on is "
          "not taken (16 records): %s", err);

  /* The same record with seq 17 and its CRC made to match is taken, and
   * the ring's records after it: the check above stopped at the seq. */
  unsigned char *other = malloc (large);
  if (!other)
    die ("malloc");
  memcpy (other, log_bytes + rec_at[40], large);
  wt_put64 (other + 24, 17);
  wt_put32 (other + 4, wtlog_record_crc (other, large));
  write_killed_log (&k);
  write_ring (&k, header.run_id);
  put_log_bytes (rec_at[16], other, large);
  rc = wtlog_ring_recover (log_path, err, sizeof err);
  read_back (&st, &n, &seq_ok);
  size_t len;
  unsigned char *now = slurp (log_path, &len);
  tap_ok (rc == 1 && n == 19 && seq_ok && st.last_seq == 19 && !st.torn
          && now && len == rec_at[19] && memcmp (now + rec_at[16], other, large) == 0
          && memcmp (now, log_bytes, rec_at[16]) == 0
          && memcmp (now + rec_at[17], log_bytes + rec_at[17], rec_at[19] - rec_at[17]) == 0
          && !ring_exists (),
          "direct: that record with the next seq and its CRC is taken, and "
          "the ring's records after it (%d records): %s", n, err);
  free (now);
  free (other);
}

int
main (void)
{
  if (!mkdtemp (dir))
    return 2;
  snprintf (log_path, sizeof log_path, "%s/writes.wtlog", dir);
  char *rp = wtlog_ring_path (log_path);
  snprintf (ring_path, sizeof ring_path, "%s", rp ? rp : "");
  tap_ok (rp && strlen (rp) == strlen (log_path) + 5
          && strcmp (rp + strlen (log_path), ".ring") == 0,
          "the ring's path is the log's with .ring: %s", rp);
  free (rp);
  make_log (false);
  tap_ok (log_len > 4 * RING_SIZE, "the log (%zu bytes) is several laps of the "
          "%u-byte ring", log_len, RING_SIZE);

  test_kills ();
  test_stops ();
  test_nothing_to_add ();
  test_refused ();
  test_log_not_writable ();
  test_reader_open ();
  test_direct ();

  unlink (log_path);
  unlink (ring_path);
  rmdir (dir);
  tap_plan (tap_count);
  return tap_done ();
}
