/* The resolver of IN_IMAGE records' bytes (common/image-resolve.c), on logs
 * written by the real writer (wtlog_writer_*): each run below keeps the
 * disk as its records leave it, writes that as the run's final image, and
 * every IN_IMAGE record's bytes are then read back through the resolver
 * and compared with what the record wrote.  Then the errors: a final image
 * changed after the run, none at all, bytes overwritten before a SAVED
 * record kept them, a SAVED record holding other bytes. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image-resolve.h"
#include "sector-hash.h"
#include "tap.h"
#include "wtlog.h"

#define DISK (64u << 10)
#define MAX_IN_IMAGE 400

static char dir[] = "/tmp/image-resolve-test.XXXXXX";

/* A run being written: its log, the disk as the records leave it, and
 * what each IN_IMAGE record wrote. */
struct run {
  char log[256], final[256];
  struct wtlog_writer *w;
  unsigned char disk[DISK];
  int nin;
  struct {
    uint64_t seq, offset, length;
    unsigned char *bytes;
    uint64_t *hashes;
  } in[MAX_IN_IMAGE];
};

static void
fill (unsigned char *p, uint64_t len, int seed)
{
  for (uint64_t i = 0; i < len; i++)
    p[i] = (unsigned char) (seed * 31 + (int) (i * 7) + (int) (i >> 9));
}

static void
run_open (struct run *r, const char *name)
{
  struct wtlog_header h;
  char err[256];
  memset (r, 0, sizeof *r);
  snprintf (r->log, sizeof r->log, "%s/%s.wtlog", dir, name);
  snprintf (r->final, sizeof r->final, "%s/%s.img", dir, name);
  wtlog_header_init (&h, DISK, 0, true, "test-image-resolve");
  r->w = wtlog_writer_open (r->log, &h, err, sizeof err);
  if (!r->w) {
    fprintf (stderr, "%s\n", err);
    exit (2);
  }
}

static uint64_t
append (struct run *r, uint16_t type, uint16_t flags, uint64_t offset,
        uint64_t length, const void *data)
{
  uint64_t n = wtlog_sectors_touched (offset, length);
  uint64_t *hashes = calloc (n + 1, 8);
  uint64_t first = offset / WT_SECTOR_SIZE;
  for (uint64_t i = 0; i < n; i++)
    hashes[i] = wt_sector_hash (r->disk + (first + i) * WT_SECTOR_SIZE);
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = 1, .offset = offset, .length = length,
  };
  if (wtlog_writer_append (r->w, &rec, hashes, data) == -1)
    exit (2);
  free (hashes);
  return rec.seq;
}

/* A large write the request put in the image: no bytes in the log. */
static uint64_t
in_image (struct run *r, uint64_t offset, uint64_t length, int seed)
{
  fill (r->disk + offset, length, seed);
  uint64_t seq = append (r, WTLOG_WRITE, WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED,
                         offset, length, NULL);
  int i = r->nin++;
  r->in[i].seq = seq;
  r->in[i].offset = offset;
  r->in[i].length = length;
  r->in[i].bytes = malloc (length);
  memcpy (r->in[i].bytes, r->disk + offset, length);
  r->in[i].hashes = malloc (8 * (length / WT_SECTOR_SIZE) + 8);
  wt_sector_hashes (r->in[i].bytes, length / WT_SECTOR_SIZE, r->in[i].hashes);
  return seq;
}

/* The disk's bytes of the range as they are now (bad: other bytes). */
static uint64_t
saved (struct run *r, uint64_t offset, uint64_t length, bool bad)
{
  unsigned char *copy = malloc (length);
  memcpy (copy, r->disk + offset, length);
  if (bad)
    copy[length / 2] ^= 0x40;
  uint64_t seq = append (r, WTLOG_SAVED, WTLOG_F_DATA, offset, length, copy);
  free (copy);
  return seq;
}

static uint64_t
write_data (struct run *r, uint64_t offset, uint64_t length, int seed)
{
  fill (r->disk + offset, length, seed);
  return append (r, WTLOG_WRITE, WTLOG_F_DATA, offset, length, r->disk + offset);
}

static uint64_t
zero (struct run *r, uint64_t offset, uint64_t length)
{
  memset (r->disk + offset, 0, length);
  return append (r, WTLOG_ZERO, 0, offset, length, NULL);
}

/* The final CLOSE, and the disk as the final image. */
static void
run_close (struct run *r)
{
  append (r, WTLOG_CLOSE, 0, 0, 0, NULL);
  if (wtlog_writer_close (r->w) == -1)
    exit (2);
  int fd = open (r->final, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write (fd, r->disk, DISK) != DISK || close (fd) != 0)
    exit (2);
}

static void
run_free (struct run *r)
{
  for (int i = 0; i < r->nin; i++) {
    free (r->in[i].bytes);
    free (r->in[i].hashes);
  }
}

/* Whether every IN_IMAGE record of r reads back as it wrote, whole and in
 * two halves. */
static bool
all_read_back (const struct run *run, struct wt_resolve *res, char *err, size_t errlen)
{
  for (int i = 0; i < run->nin; i++) {
    uint64_t len = run->in[i].length, half = len / 2 / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
    unsigned char *buf = calloc (1, len);
    bool ok = wt_resolve_read (res, run->in[i].seq, 0, len, buf, run->in[i].hashes,
                               err, errlen) == 0
      && memcmp (buf, run->in[i].bytes, len) == 0;
    memset (buf, 0, len);
    ok = ok && wt_resolve_read (res, run->in[i].seq, half, len - half, buf + half,
                                run->in[i].hashes, err, errlen) == 0
      && wt_resolve_read (res, run->in[i].seq, 0, half, buf, NULL, err, errlen) == 0
      && memcmp (buf, run->in[i].bytes, len) == 0;
    free (buf);
    if (!ok) {
      printf ("# seq %" PRIu64 ": %s\n", run->in[i].seq, err);
      return false;
    }
  }
  return true;
}

/* Every way the bytes move, each on its own part of the disk. */
static void
make_good_run (struct run *r)
{
  run_open (r, "good");
  /* Overwritten in part by a small write, its sector saved first. */
  in_image (r, 0, 4096, 1);
  saved (r, 1024, 512, false);
  write_data (r, 1100, 100, 2);
  /* Zeroed, saved first. */
  in_image (r, 8192, 2048, 3);
  saved (r, 8192, 2048, false);
  zero (r, 8192, 2048);
  /* Half of it overwritten by a later IN_IMAGE write, saved first. */
  in_image (r, 16384, 2048, 4);
  saved (r, 17408, 1024, false);
  in_image (r, 17408, 2048, 5);
  /* Partial overlaps: two SAVED records over parts of it, a write, and a
   * later IN_IMAGE write over its start; its end stays in the image. */
  in_image (r, 24576, 4096, 6);
  saved (r, 26624, 1024, false);
  write_data (r, 26624, 1024, 7);
  saved (r, 24576, 2048, false);
  in_image (r, 22528, 4096, 8);
  /* Two SAVED records of the same bytes: the first after it holds them
   * (the second holds what a later write made of them). */
  in_image (r, 32768, 1024, 9);
  saved (r, 32768, 1024, false);
  write_data (r, 32768, 1024, 10);
  saved (r, 32768, 1024, false);
  write_data (r, 32768, 1024, 11);
  /* Written again by the same range's IN_IMAGE write, saved first. */
  in_image (r, 40960, 1024, 12);
  saved (r, 40960, 1024, false);
  in_image (r, 40960, 1024, 13);
  run_close (r);
}

static void
test_good (const struct run *run)
{
  char err[512] = "";
  struct wt_resolve *res = wt_resolve_open (run->log, run->final, err, sizeof err);
  tap_ok (res && wt_resolve_records (res) == (uint64_t) run->nin
          && wt_resolve_first_seq (res) == run->in[0].seq
          && wt_resolve_first_final_seq (res) == run->in[0].seq,
          "%d IN_IMAGE records resolved, the first seq %" PRIu64 " (%s)", run->nin,
          run->in[0].seq, err);
  tap_ok (res && all_read_back (run, res, err, sizeof err),
          "each reads back as it wrote: a small write, a zero, a later IN_IMAGE "
          "write over it, partial overlaps, two SAVED of the same bytes");
  unsigned char buf[1024];
  int rc = res ? wt_resolve_read (res, run->in[0].seq + 1, 0, 512, buf, NULL, err,
                                  sizeof err) : 0;
  tap_ok (rc == -1 && strstr (err, "is no IN_IMAGE record"),
          "a seq that is no IN_IMAGE record is refused: %s", err);
  rc = res ? wt_resolve_read (res, run->in[0].seq, 512, 4096, buf, NULL, err,
                              sizeof err) : 0;
  tap_ok (rc == -1 && strstr (err, "not whole sectors of its 4096 bytes"),
          "bytes past the record's range are refused: %s", err);
  wt_resolve_close (res);
}

/* The final image changed after the run: the bytes it holds of an IN_IMAGE
 * record (seq 9, at 17408) differ in one byte of sector 35. */
static void
test_final_changed (const struct run *run)
{
  char err[512] = "";
  int fd = open (run->final, O_RDWR);
  unsigned char b = 0;
  if (fd < 0 || pread (fd, &b, 1, 18000) != 1)
    exit (2);
  b ^= 1;
  if (pwrite (fd, &b, 1, 18000) != 1)
    exit (2);
  struct wt_resolve *res = wt_resolve_open (run->log, run->final, err, sizeof err);
  const int w = 3;              /* in_image (r, 17408, 2048, 5) */
  unsigned char *buf = malloc (run->in[w].length);
  int rc = res ? wt_resolve_read (res, run->in[w].seq, 0, run->in[w].length, buf,
                                  run->in[w].hashes, err, sizeof err) : 0;
  char want[64];
  snprintf (want, sizeof want, "seq %" PRIu64 " ", run->in[w].seq);
  tap_ok (rc == -1 && strstr (err, run->final) && strstr (err, "sector 35 ")
          && strstr (err, want) && strstr (err, "IN_IMAGE")
          && strstr (err, "not the run's final image, or "
                                           "changed after the run"),
          "a final image changed after the run is refused: %s", err);
  b ^= 1;
  if (pwrite (fd, &b, 1, 18000) != 1 || close (fd) != 0)
    exit (2);
  free (buf);
  wt_resolve_close (res);
}

/* No final image: the bytes SAVED records hold are read, the others are an
 * error naming the option. */
static void
test_no_final (const struct run *run)
{
  char err[512] = "";
  struct wt_resolve *res = wt_resolve_open (run->log, NULL, err, sizeof err);
  unsigned char buf[4096];
  const int all_saved = 1;      /* in_image (r, 8192, 2048, 3) */
  bool saved_ok = res && !wt_resolve_has_final (res)
    && wt_resolve_read (res, run->in[all_saved].seq, 0, 2048, buf,
                        run->in[all_saved].hashes, err, sizeof err) == 0
    && memcmp (buf, run->in[all_saved].bytes, 2048) == 0;
  int rc = res ? wt_resolve_read (res, run->in[0].seq, 0, 4096, buf, NULL, err,
                                  sizeof err) : 0;
  tap_ok (saved_ok && rc == -1 && strstr (err, "--final-image"),
          "without a final image, the bytes SAVED records hold are read, the "
          "others refused: %s", err);
  wt_resolve_close (res);
  res = wt_resolve_open (run->log, "/nonexistent/disk.img", err, sizeof err);
  tap_ok (!res && strstr (err, "/nonexistent/disk.img"),
          "a final image that cannot be opened is named: %s", err);
  wt_resolve_close (res);
}

/* A write over an IN_IMAGE record's bytes with no SAVED record first: the
 * bytes are lost, and reading them names the write. */
static void
test_lost (void)
{
  struct run *r = calloc (1, sizeof *r);
  char err[512] = "";
  run_open (r, "lost");
  uint64_t seq = in_image (r, 0, 2048, 1);
  uint64_t by = write_data (r, 512, 100, 2);
  run_close (r);
  struct wt_resolve *res = wt_resolve_open (r->log, r->final, err, sizeof err);
  unsigned char buf[2048];
  bool first_ok = res && wt_resolve_read (res, seq, 0, 512, buf, r->in[0].hashes,
                                          err, sizeof err) == 0;
  int rc = res ? wt_resolve_read (res, seq, 0, 2048, buf, NULL, err, sizeof err) : 0;
  char want[64];
  snprintf (want, sizeof want, "overwritten by seq %" PRIu64, by);
  tap_ok (first_ok && rc == -1 && strstr (err, want) && strstr (err, "512+100"),
          "bytes overwritten before a SAVED record kept them are refused: %s", err);
  wt_resolve_close (res);
  run_free (r);
  free (r);
}

/* A SAVED record whose bytes are not those the IN_IMAGE record wrote. */
static void
test_bad_saved (void)
{
  struct run *r = calloc (1, sizeof *r);
  char err[512] = "";
  run_open (r, "badsaved");
  uint64_t seq = in_image (r, 4096, 2048, 1);
  saved (r, 5120, 1024, true);
  zero (r, 5120, 1024);
  run_close (r);
  struct wt_resolve *res = wt_resolve_open (r->log, r->final, err, sizeof err);
  unsigned char buf[2048];
  int rc = res ? wt_resolve_read (res, seq, 0, 2048, buf, r->in[0].hashes, err,
                                  sizeof err) : 0;
  tap_ok (rc == -1 && strstr (err, "the SAVED record's bytes") && strstr (err, "sector 11 ")
          && strstr (err, r->log), "a SAVED record holding other bytes is refused: %s", err);
  wt_resolve_close (res);
  run_free (r);
  free (r);
}

/* Random runs kept by the rule the plugin keeps (a SAVED record of the
 * bytes an IN_IMAGE record still owns before any change overwrites them),
 * found here by a byte-by-byte model of the owners, with extra SAVED
 * records of random ranges: every IN_IMAGE record reads back. */
static int owner_of[DISK];      /* index into run.in, or -1 */

static void
random_change (struct run *r, unsigned *seed)
{
  uint64_t sectors = DISK / WT_SECTOR_SIZE;
  uint64_t first = (uint64_t) rand_r (seed) % sectors;
  uint64_t n = 1 + (uint64_t) rand_r (seed) % (sectors - first < 16 ? sectors - first : 16);
  uint64_t off = first * WT_SECTOR_SIZE, len = n * WT_SECTOR_SIZE;
  int kind = rand_r (seed) % 4;
  if (kind == 2) {              /* an unaligned small write inside */
    off += (uint64_t) rand_r (seed) % WT_SECTOR_SIZE;
    len = 1 + (uint64_t) rand_r (seed) % (first * WT_SECTOR_SIZE + len - off);
  }
  /* The sectors it overwrites that an IN_IMAGE record still owns are
   * saved first, as the plugin does (whole sectors, one record each run). */
  uint64_t s = off / WT_SECTOR_SIZE, end_s = (off + len - 1) / WT_SECTOR_SIZE + 1;
  while (s < end_s) {
    while (s < end_s && owner_of[s * WT_SECTOR_SIZE] < 0)
      s++;
    uint64_t e = s;
    while (e < end_s && owner_of[e * WT_SECTOR_SIZE] >= 0)
      e++;
    if (e > s)
      saved (r, s * WT_SECTOR_SIZE, (e - s) * WT_SECTOR_SIZE, false);
    s = e;
  }
  int seedv = rand_r (seed);
  if (kind == 0 && r->nin < MAX_IN_IMAGE) {
    in_image (r, off, len, seedv);
    for (uint64_t b = off; b < off + len; b++)
      owner_of[b] = r->nin - 1;
    return;
  }
  if (kind == 1)
    zero (r, off, len);
  else
    write_data (r, off, len, seedv);
  for (uint64_t b = off; b < off + len; b++)
    owner_of[b] = -1;
  if (rand_r (seed) % 3 == 0)   /* a SAVED record nothing needed */
    saved (r, first * WT_SECTOR_SIZE, n * WT_SECTOR_SIZE, false);
}

static void
test_random (void)
{
  struct run *r = calloc (1, sizeof *r);
  char err[512] = "";
  unsigned seed = 34;
  bool ok = true;
  int records = 0;
  for (int round = 0; round < 4 && ok; round++) {
    run_open (r, "random");
    for (int b = 0; b < (int) DISK; b++)
      owner_of[b] = -1;
    for (int i = 0; i < 600; i++)
      random_change (r, &seed);
    run_close (r);
    struct wt_resolve *res = wt_resolve_open (r->log, r->final, err, sizeof err);
    ok = res && wt_resolve_records (res) == (uint64_t) r->nin
      && all_read_back (r, res, err, sizeof err);
    records += r->nin;
    wt_resolve_close (res);
    run_free (r);
  }
  tap_ok (ok, "4 random runs of 600 changes: all %d IN_IMAGE records read back (%s)",
          records, err);
  free (r);
}

/* A log torn inside the SAVED record of an IN_IMAGE record's bytes: the
 * readers apply nothing from the tear on, and the pass does not use it
 * either: the bytes are the final image's, which a later write changed. */
static void
test_torn (void)
{
  struct run *r = calloc (1, sizeof *r);
  char err[512] = "";
  run_open (r, "torn");
  uint64_t seq = in_image (r, 4096, 2048, 1);
  saved (r, 4096, 2048, false);
  write_data (r, 4096, 512, 2);
  run_close (r);
  /* Cut 100 bytes into the SAVED record (seq + 1). */
  uint64_t cut = WTLOG_HEADER_SIZE + wtlog_record_size (WTLOG_WRITE, WTLOG_F_IN_IMAGE, 4096, 2048) + 100;
  if (truncate (r->log, (off_t) cut) != 0)
    exit (2);
  struct wt_resolve *res = wt_resolve_open (r->log, r->final, err, sizeof err);
  unsigned char buf[2048];
  int rc = res ? wt_resolve_read (res, seq, 0, 2048, buf, r->in[0].hashes, err,
                                  sizeof err) : 0;
  bool tail_ok = res && wt_resolve_read (res, seq, 512, 1536, buf, r->in[0].hashes,
                                         err + 256, 256) == 0
    && memcmp (buf, r->in[0].bytes + 512, 1536) == 0;
  tap_ok (rc == -1 && strstr (err, r->final) && strstr (err, "sector 8 ") && tail_ok,
          "a log torn inside a SAVED record: its bytes are not used: %s", err);
  wt_resolve_close (res);
  run_free (r);
  free (r);
}

/* A log without DATA has no IN_IMAGE records: nothing to resolve. */
static void
test_no_data_log (void)
{
  struct wtlog_header h;
  char err[256], path[300];
  snprintf (path, sizeof path, "%s/nodata.wtlog", dir);
  wtlog_header_init (&h, DISK, 0, false, "test-image-resolve");
  struct wtlog_writer *w = wtlog_writer_open (path, &h, err, sizeof err);
  uint64_t hash = 1;
  struct wtlog_record rec = { .type = WTLOG_WRITE, .conn = 1, .offset = 0, .length = 512 };
  if (!w || wtlog_writer_append (w, &rec, &hash, NULL) == -1 || wtlog_writer_close (w) == -1)
    exit (2);
  struct wt_resolve *res = wt_resolve_open (path, NULL, err, sizeof err);
  tap_ok (res && wt_resolve_records (res) == 0 && wt_resolve_first_final_seq (res) == 0,
          "a log without DATA resolves nothing");
  wt_resolve_close (res);
  unlink (path);
}

int
main (void)
{
  if (!mkdtemp (dir))
    return 2;
  tap_plan (12);
  struct run *good = calloc (1, sizeof *good);
  make_good_run (good);
  test_good (good);
  test_final_changed (good);
  test_no_final (good);
  test_lost ();
  test_bad_saved ();
  test_no_data_log ();
  test_random ();
  test_torn ();
  run_free (good);
  free (good);
  char cmd[300];
  snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
  if (system (cmd) != 0)
    return 2;
  return tap_done ();
}
