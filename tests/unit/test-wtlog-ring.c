/* wtlog-ring: a killed plugin's log completed from its ring file.  A real
 * log is written with wtlog_writer; each case keeps part of it as the log
 * file a kill left, builds the ring the plugin would have left beside it
 * (64 KiB, so records wrap around its end; slots outside what the ring
 * holds for the log filled with garbage or an older lap), recovers, and
 * compares the log with the original byte for byte. */
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

/* Record i of the log: an OPEN, then WRITEs with data of various sizes
 * and offsets, among them FLUSHes, ZEROs, TRIMs and CHANNEL writes, then
 * the connection's CLOSE and the final CLOSE. */
static void
make_record (int i, struct wtlog_record *rec)
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
  else {
    rec->type = i % 9 == 0 ? WTLOG_CHANNEL : WTLOG_WRITE;
    rec->flags = WTLOG_F_DATA | (i % 5 == 0 ? WTLOG_F_FUA : 0);
    rec->length = lengths[i % 8];
    rec->offset = 100 * (uint64_t) (i % 3) + 8192 * (uint64_t) i;
  }
}

/* Writes the log with wtlog_writer and keeps its bytes. */
static void
make_log (void)
{
  static unsigned char data[32768];
  static uint64_t hashes[64];
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
    make_record (i, &rec);
    for (size_t b = 0; b < sizeof data; b++)
      data[b] = (unsigned char) (b * 31 + (size_t) i * 7);
    for (int h = 0; h < 64; h++)
      hashes[h] = 0x0101010101010101ull * (uint64_t) h + (uint64_t) i;
    if (wtlog_writer_append (w, &rec, hashes, data) == -1)
      die ("append");
    rec_at[i + 1] = rec_at[i] + rec.size;
  }
  if (wtlog_writer_close (w) == -1)
    die ("close");
  log_len = (size_t) rec_at[NRECORDS];
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
    if (rec_at[i] / RING_SIZE != (rec_at[i + 1] - 1) / RING_SIZE
        && rec_at[i + 1] % RING_SIZE != 0)
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
 * bytes [moved, copied), the other slots `fill`. */
struct kill {
  uint64_t keep;
  enum tail tail;
  uint64_t moved;
  uint64_t copied;
  enum fill fill;
};

static void
write_killed_log (const struct kill *k)
{
  size_t len = (size_t) k->keep;
  if (k->tail == TAIL_PAD4K || k->tail == TAIL_GARBAGE)
    len = (len + 4095) & ~(size_t) 4095;
  else if (k->tail == TAIL_ZEROES)
    len += 1 << 20;
  unsigned char *buf = calloc (1, len + 1);
  if (!buf)
    die ("calloc");
  memcpy (buf, log_bytes, (size_t) k->keep);
  if (k->tail == TAIL_GARBAGE)
    for (size_t i = (size_t) k->keep; i < len; i++)
      buf[i] = garbage_byte ();
  write_file (log_path, buf, len);
  free (buf);
}

/* The ring a plugin would leave: slot s holds the byte at the log
 * position p in [moved, copied) with p mod R = s; every other slot
 * garbage, or the log's byte one lap before (FILL_OLD_LAP: what the
 * ring held before it was overwritten). */
static void
write_ring (const struct kill *k, const uint8_t run_id[16])
{
  static unsigned char buf[WTLOG_RING_HEADER_SIZE + RING_SIZE];
  struct wtlog_ring_header h = { .ring_size = RING_SIZE, .moved = k->moved };
  memcpy (h.run_id, run_id, 16);
  wtlog_ring_header_encode (&h, buf);
  unsigned char *ring = buf + WTLOG_RING_HEADER_SIZE;
  for (uint64_t s = 0; s < RING_SIZE; s++) {
    /* The position of the lap that ends at copied which maps to s. */
    uint64_t p = k->copied - RING_SIZE + (s + RING_SIZE - k->copied % RING_SIZE) % RING_SIZE;
    if (p >= k->moved && p < log_len)
      ring[s] = log_bytes[p];
    else if (k->fill == FILL_OLD_LAP && p >= WTLOG_HEADER_SIZE && p < log_len)
      ring[s] = log_bytes[p];
    else
      ring[s] = garbage_byte ();
  }
  write_file (ring_path, buf, sizeof buf);
}

static void
put_ring_bytes (uint64_t log_pos, const unsigned char *bytes, size_t len)
{
  int fd = open (ring_path, O_WRONLY);
  if (fd < 0)
    die (ring_path);
  for (size_t i = 0; i < len; i++)
    if (pwrite (fd, bytes + i, 1,
                WTLOG_RING_HEADER_SIZE + (log_pos + i) % RING_SIZE) != 1)
      die (ring_path);
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
          "%s: %d records, %d of them from the ring (rc %d, want %d): %s",
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
    size_t len;
    unsigned char *now = slurp (log_path, &len);
    struct wtlog_status st;
    int n;
    bool seq_ok;
    read_back (&st, &n, &seq_ok);
    tap_ok (rc == 0 && was && now && len == was_len && memcmp (now, was, len) == 0
            && n == 20 && st.torn && st.bad_offset == rec_at[20] && !ring_exists (),
            "%s, the ring adding nothing: the log is left as it is (torn at "
            "byte %" PRIu64 "), the ring removed: %s", torn[i].what,
            st.bad_offset, st.error);
    free (was);
    free (now);
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
  make_log ();
  tap_ok (log_len > 4 * RING_SIZE, "the log (%zu bytes) is several laps of the "
          "%u-byte ring", log_len, RING_SIZE);

  test_kills ();
  test_stops ();
  test_nothing_to_add ();
  test_refused ();
  test_log_not_writable ();
  test_reader_open ();

  unlink (log_path);
  unlink (ring_path);
  rmdir (dir);
  tap_plan (tap_count);
  return tap_done ();
}
