/* Run directories with known damage, for tests/test-checker-*.sh.
 *
 *   test-check-classes --make DIR SCENARIO   write DIR/disk.img, base.img,
 *       writes.wtlog, channel.bin and truth.txt (the bad sectors the
 *       scenario made: "PATH FILE_SECTOR DISK_SECTOR|- CLASS" lines)
 *   test-check-classes                       TAP: each scenario's files read
 *       back with the common readers (the generator itself is sound)
 *
 * Scenarios: clean, damaged (one run of every class, each precedence case, a
 * partial last sector, an unwritten extent, holes, content shared by
 * neighbouring sectors), nomanifest; and clean runs whose manifest or
 * channel a hostile guest bent: pasteof (a fourth file, /data/f4, four
 * sectors of zeroes whose only extent starts past its end), offdisk (f3's
 * extent off the disk), overlap (a fourth extent of f1 claims its sectors
 * 8-15 again, elsewhere on the disk), hostile (the damaged run with escape
 * sequences, newlines, UTF-8 and a byte that is not UTF-8 in f2's path and
 * in HELLO and RESULT values); zeroed (the clean run, but f3's last sector
 * expects zeros and only a partial ZERO of its second half is logged after
 * its data: that sector is lost, not lied, as the log never said the whole
 * sector held zeros; the guest read back wrong content: readback=mismatch;
 * and a fourth file, /data/f4, whose two sectors lie in two extents apart on
 * the disk, both lost: two runs); coldgrew (the clean run and a cold pass's
 * cold.bin in which /data/f2 grew a zero tail to 1024 bytes, every sector
 * as expected); delalloc (the clean run and a fourth file, /data/f4, 16
 * sectors: 0-7 on the disk, 8-15 in a DELALLOC extent the kernel never
 * wrote, of which 8-11 hold data (lost, no disk sector) and 12-15 zeros
 * (clean)); delalloczero (the same, but 8-11 expect zeros too: clean).
 * The disk is simulated here: a write stores its sectors and logs them; a
 * "vanished" write does neither; a "lied" write logs but does not store. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "manifest.h"
#include "sector-hash.h"
#include "tap.h"
#include "wtlog.h"

#define DISK_SIZE (4u << 20)
#define CHAN_SIZE (1u << 20)
#define SECTOR WT_SECTOR_SIZE
/* The guest clock runs this far ahead of the log's. */
#define GUEST_AHEAD 7000000000ull

struct gen {
  const char *dir;
  const char *scenario;
  unsigned char *disk;
  unsigned char *chan;
  uint64_t chan_pos;
  uint64_t msg_no;
  uint64_t t;                   /* log clock, ns */
  struct wtlog_writer *w;
  FILE *truth;
  struct wtmf_op ops[64];
  uint32_t nops;
};

static void
die (const char *what)
{
  fprintf (stderr, "test-check-classes: %s: %s\n", what, strerror (errno));
  exit (2);
}

/* Content tag of a sector: the whole sector repeats it; never zero. */
static void
fill (unsigned char *p, uint64_t tag, size_t n)
{
  for (size_t i = 0; i < n; i += 8)
    memcpy (p + i, &tag, 8);
}

static uint64_t
tag_hash (uint64_t tag)
{
  unsigned char s[SECTOR];
  fill (s, tag, SECTOR);
  return wt_sector_hash (s);
}

static char *
path_in (const struct gen *g, const char *name)
{
  static char buf[4096];
  snprintf (buf, sizeof buf, "%s/%s", g->dir, name);
  return buf;
}

static void
log_record (struct gen *g, uint16_t type, uint16_t flags, uint64_t offset,
            uint64_t length, const uint64_t *hashes)
{
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = 1, .t_start = g->t,
    .t_end = g->t + 100000, .offset = offset, .length = length,
  };
  if (type == WTLOG_CHANNEL)
    rec.conn = 2;
  if (type == WTLOG_CLOSE && offset == (uint64_t) -1)
    rec.conn = 0, rec.offset = 0;
  g->t += 1000000;
  if (wtlog_writer_append (g->w, &rec, hashes, NULL) == -1)
    die ("append to the log");
}

/* Disk writes of count sectors from disk sector s, each sector tagged
 * tag + i; store and/or log them. */
static void
disk_write (struct gen *g, uint64_t s, uint64_t count, uint64_t tag,
            bool store, bool log)
{
  uint64_t hashes[64];
  for (uint64_t i = 0; i < count; i++) {
    unsigned char sec[SECTOR];
    fill (sec, tag + i, SECTOR);
    hashes[i] = wt_sector_hash (sec);
    if (store)
      memcpy (g->disk + (s + i) * SECTOR, sec, SECTOR);
  }
  if (log)
    log_record (g, WTLOG_WRITE, 0, s * SECTOR, count * SECTOR, hashes);
}

static void
send (struct gen *g, uint16_t type, const void *payload, uint32_t len)
{
  uint64_t at = g->chan_pos;
  uint64_t size = wtch_encode (g->chan + at, type, 0, ++g->msg_no,
                               g->t + GUEST_AHEAD, payload, len);
  uint64_t hashes[(4u << 20) / SECTOR + 1];
  wt_sector_hashes (g->chan + at, size / SECTOR, hashes);
  g->chan_pos += size;
  log_record (g, WTLOG_CHANNEL, 0, at, size, hashes);
}

static void
send_text (struct gen *g, uint16_t type, const char *text)
{
  send (g, type, text, (uint32_t) strlen (text));
}

/* A workload op in the manifest's table, at the current guest time. */
static uint32_t
op (struct gen *g, uint32_t file, uint32_t kind, uint64_t off, uint64_t len)
{
  g->ops[g->nops] = (struct wtmf_op) { g->t + GUEST_AHEAD, file, kind, off, len };
  return ++g->nops;
}

static void
truth (struct gen *g, const char *path, uint64_t fs, uint64_t n, int64_t ds,
       const char *class)
{
  for (uint64_t i = 0; i < n; i++) {
    if (ds < 0)
      fprintf (g->truth, "%s %" PRIu64 " - %s\n", path, fs + i, class);
    else
      fprintf (g->truth, "%s %" PRIu64 " %" PRIu64 " %s\n", path, fs + i,
               (uint64_t) ds + i, class);
  }
}

/* File /data/f1: 64 sectors, the last one partial (size 32468).
 *   ext A  file sectors 0-31  -> disk 2048-2079
 *   hole   file sectors 32-39 (32-35 expected zeros, 36-39 data)
 *   ext B  file sectors 40-47 -> disk 4096-4103, UNWRITTEN (40-43 zeros)
 *   ext C  file sectors 48-63 -> disk 6144-6159, last sector partial
 * File /data/f2: 2 sectors, 700 bytes, disk 7000-7001.
 * File /data/f3: one page, disk 7100-7107; sectors 2 and 3 share their
 * content (as one of linus2006's 1460-byte chunks fills two sectors). */
#define F1_SIZE (64 * SECTOR - 300)
#define F2_SIZE 700
#define F3_SIZE (8 * SECTOR)
#define TAG_F1 0x1100000000ull
#define TAG_F2 0x2200000000ull
#define TAG_F3 0x3300000000ull
#define TAG_F4 0x4400000000ull
#define TAG_OLD 0x7700000000ull
#define TAG_LATER 0x8800000000ull

static struct wtmf_extent f1_ext[] = {
  { 0, 2048 * SECTOR, 32 * SECTOR, 0 },
  { 40 * SECTOR, 4096 * SECTOR, 8 * SECTOR, WTMF_EXT_UNWRITTEN },
  { 48 * SECTOR, 6144 * SECTOR, 16 * SECTOR, 0 },
};
static struct wtmf_extent f2_ext[] = {
  { 0, 7000 * SECTOR, 2 * SECTOR, 0 },
};
static struct wtmf_extent f3_ext[] = {
  { 0, 7100 * SECTOR, 8 * SECTOR, 0 },
};

static uint64_t f1_hash[64], f2_hash[2], f3_hash[8];
static uint32_t f1_op[64], f2_op[2], f3_op[8];
/* The delalloc scenarios' /data/f4: written up to sector 12 (or 8), then
 * FIEMAP still says DELALLOC from sector 8 on. */
#define TAG_F4_DELALLOC 0x4600000000ull
static struct wtmf_extent f4_delalloc_ext[] = {
  { 0, 7400 * SECTOR, 8 * SECTOR, 0 },
  { 8 * SECTOR, 0, 8 * SECTOR, WTMF_EXT_DELALLOC | WTMF_EXT_UNMAPPABLE },
};
static uint64_t f4_delalloc_hash[16];
static uint32_t f4_delalloc_op[16];

static void
expect (uint64_t *hashes, uint32_t *ops, uint64_t fs, uint64_t n,
        uint64_t tag, uint32_t opno)
{
  for (uint64_t i = 0; i < n; i++) {
    hashes[fs + i] = tag_hash (tag + fs + i);
    ops[fs + i] = opno;
  }
}

static void
expect_zero (uint64_t *hashes, uint64_t fs, uint64_t n)
{
  static const unsigned char z[SECTOR];
  for (uint64_t i = 0; i < n; i++)
    hashes[fs + i] = wt_sector_hash (z);
}

/* The last sector of a file: its tag's bytes up to the end of the file,
 * zeroes after (the manifest's expected hash). On the disk the bytes past
 * the end are garbage, which the checker must ignore. */
static uint64_t
partial_hash (uint64_t tag, size_t valid)
{
  unsigned char s[SECTOR] = { 0 };
  fill (s, tag, SECTOR);
  memset (s + valid, 0, SECTOR - valid);
  return wt_sector_hash (s);
}

static void
write_partial (struct gen *g, uint64_t ds, uint64_t tag, size_t valid, bool log)
{
  unsigned char s[SECTOR];
  fill (s, tag, SECTOR);
  memset (s + valid, 0xEE, SECTOR - valid);
  memcpy (g->disk + ds * SECTOR, s, SECTOR);
  uint64_t h = wt_sector_hash (s);
  if (log)
    log_record (g, WTLOG_WRITE, 0, ds * SECTOR, SECTOR, &h);
}

/* /data/f3: sector 3's write vanishes, but its content legitimately
 * reached sector 2, which expects the same bytes: lost, not misplaced.
 * Sector 4's content goes to sector 5, which expects other bytes:
 * misplaced; sector 5 never gets its own: lost. */
static void
workload_f3 (struct gen *g, bool damaged)
{
  uint32_t o = op (g, 3, WTMF_OP_MMAP_STORE, 0, F3_SIZE);
  expect (f3_hash, f3_op, 0, 8, TAG_F3, o);
  f3_hash[3] = f3_hash[2];
  disk_write (g, 7100, 3, TAG_F3, true, true);
  disk_write (g, 7103, 1, TAG_F3 + 2, !damaged, !damaged);
  disk_write (g, damaged ? 7105 : 7104, 1, TAG_F3 + 4, true, true);
  disk_write (g, 7105, 1, TAG_F3 + 5, !damaged, !damaged);
  disk_write (g, 7106, 2, TAG_F3 + 6, true, true);
}

static void
workload (struct gen *g, bool damaged)
{
  uint32_t o;
  /* ext A, sectors 0-7: written right. */
  o = op (g, 1, WTMF_OP_PWRITE, 0, 8 * SECTOR);
  expect (f1_hash, f1_op, 0, 8, TAG_F1, o);
  disk_write (g, 2048, 8, TAG_F1 + 0, true, true);
  /* 8-11: lost, the disk keeps its pre-run content. */
  o = op (g, 1, WTMF_OP_MMAP_STORE, 8 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 8, 4, TAG_F1, o);
  disk_write (g, 2048 + 8, 4, TAG_F1 + 8, !damaged, !damaged);
  /* 12-15: an old write arrives, the expected one vanishes: lost, the disk
   * holds the old write's content. */
  disk_write (g, 2048 + 12, 4, TAG_OLD, true, true);
  o = op (g, 1, WTMF_OP_MMAP_STORE, 12 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 12, 4, TAG_F1, o);
  disk_write (g, 2048 + 12, 4, TAG_F1 + 12, !damaged, !damaged);
  /* 16-19: the expected content arrives, then a later write replaces it. */
  o = op (g, 1, WTMF_OP_PWRITE, 16 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 16, 4, TAG_F1, o);
  disk_write (g, 2048 + 16, 4, TAG_F1 + 16, true, true);
  if (damaged)
    disk_write (g, 2048 + 16, 4, TAG_LATER, true, true);
  /* 20-23: logged, never stored: the disk lied. */
  o = op (g, 1, WTMF_OP_PWRITE, 20 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 20, 4, TAG_F1, o);
  disk_write (g, 2048 + 20, 4, TAG_F1 + 20, !damaged, true);
  /* 24-27: written, but to disk sectors 5000-5003. */
  o = op (g, 1, WTMF_OP_MMAP_STORE, 24 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 24, 4, TAG_F1, o);
  disk_write (g, damaged ? 5000 : 2048 + 24, 4, TAG_F1 + 24, true, true);
  /* 28-31: right place and a wrong one, then overwritten: overwritten wins. */
  o = op (g, 1, WTMF_OP_PWRITE, 28 * SECTOR, 4 * SECTOR);
  expect (f1_hash, f1_op, 28, 4, TAG_F1, o);
  disk_write (g, 2048 + 28, 4, TAG_F1 + 28, true, true);
  if (damaged) {
    disk_write (g, 5010, 4, TAG_F1 + 28, true, true);
    disk_write (g, 2048 + 28, 4, TAG_LATER + 28, true, true);
  }
  /* The hole: 32-35 zeros (fine), 36-39 data in a damaged file. */
  expect_zero (f1_hash, 32, 8);
  if (damaged) {
    o = op (g, 1, WTMF_OP_PWRITE, 36 * SECTOR, 4 * SECTOR);
    expect (f1_hash, f1_op, 36, 4, TAG_F1, o);
  }
  /* The unwritten extent: 40-43 zeros, 44-47 data in a damaged file that
   * never reached the disk: the file reads zeros there. */
  expect_zero (f1_hash, 40, 8);
  if (damaged) {
    o = op (g, 1, WTMF_OP_FALLOCATE, 44 * SECTOR, 4 * SECTOR);
    expect (f1_hash, f1_op, 44, 4, TAG_F1, o);
  }
  /* ext C, 48-63 right; the last sector is partial with garbage past EOF. */
  o = op (g, 1, WTMF_OP_PWRITE, 48 * SECTOR, 16 * SECTOR - 300);
  expect (f1_hash, f1_op, 48, 15, TAG_F1, o);
  disk_write (g, 6144, 15, TAG_F1 + 48, true, true);
  f1_hash[63] = partial_hash (TAG_F1 + 63, SECTOR - 300);
  f1_op[63] = o;
  write_partial (g, 6144 + 15, TAG_F1 + 63, SECTOR - 300, true);
  /* /data/f2: sector 0 right, the partial sector 1 lost. */
  o = op (g, 2, WTMF_OP_PWRITE, 0, F2_SIZE);
  expect (f2_hash, f2_op, 0, 1, TAG_F2, o);
  f2_hash[1] = partial_hash (TAG_F2 + 1, F2_SIZE - SECTOR);
  f2_op[1] = o;
  disk_write (g, 7000, 1, TAG_F2, true, true);
  if (!damaged)
    write_partial (g, 7001, TAG_F2 + 1, F2_SIZE - SECTOR, true);
  workload_f3 (g, damaged);
  op (g, 1, WTMF_OP_FSYNC, 0, 0);
}

static void
write_truth (struct gen *g)
{
  truth (g, "/data/f1", 8, 8, 2048 + 8, "lost");
  truth (g, "/data/f1", 16, 4, 2048 + 16, "overwritten");
  truth (g, "/data/f1", 20, 4, 2048 + 20, "lied");
  truth (g, "/data/f1", 24, 4, 2048 + 24, "misplaced");
  truth (g, "/data/f1", 28, 4, 2048 + 28, "overwritten");
  truth (g, "/data/f1", 36, 4, -1, "unmapped");
  truth (g, "/data/f1", 44, 4, 4096 + 4, "lost");
  truth (g, "/data/f2", 1, 1, 7001, "lost");
  truth (g, "/data/f3", 3, 1, 7103, "lost");
  truth (g, "/data/f3", 4, 1, 7104, "misplaced");
  truth (g, "/data/f3", 5, 1, 7105, "lost");
}

#define HOSTILE_PATH "/data/caf\xc3\xa9\x1b[2J\xff\n!! forged f2"

static bool
scenario_is (const struct gen *g, const char *name)
{
  return strcmp (g->scenario, name) == 0;
}

/* The delalloc scenarios: f4's first page reaches the disk; its second
 * never does, yet the file must hold data in its first half (delalloc) or
 * only zeros (delalloczero). */
static void
workload_f4_delalloc (struct gen *g)
{
  bool data = scenario_is (g, "delalloc");
  uint32_t o = op (g, 4, WTMF_OP_PWRITE, 0, (data ? 12 : 8) * SECTOR);
  expect (f4_delalloc_hash, f4_delalloc_op, 0, data ? 12 : 8, TAG_F4_DELALLOC, o);
  expect_zero (f4_delalloc_hash, data ? 12 : 8, data ? 4 : 8);
  disk_write (g, 7400, 8, TAG_F4_DELALLOC, true, true);
  op (g, 4, WTMF_OP_FSYNC, 0, 0);
  if (data)
    truth (g, "/data/f4", 8, 4, -1, "lost");
}

static void save (const struct gen *g, const char *name, const void *p, size_t n);

/* The coldgrew scenario's cold.bin: the cold pass read every file back as
 * the run left it, but /data/f2 grew a zero tail to 1024 bytes (its
 * sectors still hash as expected: only its size changed). */
static void
save_cold (const struct gen *g, const struct wtmf_file *files, uint32_t nfiles)
{
  static unsigned char chan[CHAN_SIZE];
  static uint32_t no_error[64];
  struct wtmf_file cold[4];
  uint64_t at = 0, no = 0;
  const char *hello = "kernel=6.1.0-cold\n", *result = "status=0\n";
  memcpy (cold, files, nfiles * sizeof *files);
  for (uint32_t i = 0; i < nfiles; i++)
    cold[i].ops = no_error;
  cold[1].size = 2 * SECTOR;
  struct wtmf_buf b = { 0 };
  wtmf_buf_header_cold (&b, nfiles);
  for (uint32_t i = 0; i < nfiles; i++)
    wtmf_buf_file (&b, &cold[i]);
  if (wtmf_buf_finish (&b) == -1)
    die ("build the cold manifest");
  at += wtch_encode (chan + at, WTCH_HELLO, 0, ++no, 0, hello, (uint32_t) strlen (hello));
  at += wtch_encode (chan + at, WTCH_MANIFEST, 0, ++no, 0, b.p, (uint32_t) b.len);
  at += wtch_encode (chan + at, WTCH_RESULT, 0, ++no, 0, result, (uint32_t) strlen (result));
  wtmf_buf_free (&b);
  save (g, "cold.bin", chan, CHAN_SIZE);
}

static void
send_manifest (struct gen *g)
{
  static struct wtmf_extent f1_overlap[4], f3_offdisk[1], f4_ext[] = {
    /* Preallocated past the end of the file (fallocate KEEP_SIZE). */
    { 8 * SECTOR, 7200 * SECTOR, 8 * SECTOR, 0 },
  };
  /* The zeroed scenario's /data/f4: two sectors in two extents, apart on
   * the disk, never written: two runs, not one. */
  static struct wtmf_extent f4_split[] = {
    { 0, 7300 * SECTOR, SECTOR, 0 },
    { SECTOR, 7310 * SECTOR, SECTOR, 0 },
  };
  static uint64_t f4_hash[4];
  static uint32_t f4_op[4];
  struct wtmf_file files[4] = {
    { .id = 1, .path = "/data/f1", .inode = 12, .size = F1_SIZE, .nextents = 3,
      .extents = f1_ext, .nsectors = 64, .hashes = f1_hash, .ops = f1_op },
    { .id = 2, .path = "/data/f2", .inode = 13, .size = F2_SIZE, .nextents = 1,
      .extents = f2_ext, .nsectors = 2, .hashes = f2_hash, .ops = f2_op },
    { .id = 3, .path = "/data/f3", .inode = 14, .size = F3_SIZE, .nextents = 1,
      .extents = f3_ext, .nsectors = 8, .hashes = f3_hash, .ops = f3_op },
    { .id = 4, .path = "/data/f4", .inode = 15, .size = 4 * SECTOR, .nextents = 1,
      .extents = f4_ext, .nsectors = 4, .hashes = f4_hash, .ops = f4_op },
  };
  uint32_t nfiles = 3;
  if (scenario_is (g, "pasteof")) {
    expect_zero (f4_hash, 0, 4);
    nfiles = 4;
  } else if (scenario_is (g, "offdisk")) {
    f3_offdisk[0] = f3_ext[0];
    f3_offdisk[0].physical += DISK_SIZE;
    files[2].extents = f3_offdisk;
  } else if (scenario_is (g, "overlap")) {
    memcpy (f1_overlap, f1_ext, sizeof f1_ext);
    f1_overlap[3] = (struct wtmf_extent) { 8 * SECTOR, 3000 * SECTOR, 8 * SECTOR, 0 };
    files[0].extents = f1_overlap;
    files[0].nextents = 4;
  } else if (scenario_is (g, "hostile")) {
    files[1].path = HOSTILE_PATH;
  } else if (scenario_is (g, "zeroed")) {
    for (uint32_t i = 0; i < 2; i++)
      f4_hash[i] = tag_hash (TAG_F4 + i);
    files[3].size = 2 * SECTOR;
    files[3].nsectors = 2;
    files[3].extents = f4_split;
    files[3].nextents = 2;
    nfiles = 4;
  } else if (strncmp (g->scenario, "delalloc", 8) == 0) {
    files[3] = (struct wtmf_file) {
      .id = 4, .path = "/data/f4", .inode = 15, .size = 16 * SECTOR, .nextents = 2,
      .extents = f4_delalloc_ext, .nsectors = 16, .hashes = f4_delalloc_hash,
      .ops = f4_delalloc_op,
    };
    nfiles = 4;
  }
  struct wtmf_buf b = { 0 };
  wtmf_buf_header (&b, nfiles, g->nops, 0);
  for (uint32_t i = 0; i < nfiles; i++)
    wtmf_buf_file (&b, &files[i]);
  for (uint32_t i = 0; i < g->nops; i++)
    wtmf_buf_op (&b, &g->ops[i]);
  if (wtmf_buf_finish (&b) == -1)
    die ("build the manifest");
  /* Small chunks, so the stream spans several messages. */
  for (size_t at = 0; at < b.len; at += 1000)
    send (g, WTCH_MANIFEST, b.p + at, (uint32_t) (b.len - at < 1000 ? b.len - at : 1000));
  wtmf_buf_free (&b);
  if (scenario_is (g, "coldgrew"))
    save_cold (g, files, nfiles);
}

static void
save (const struct gen *g, const char *name, const void *p, size_t n)
{
  int fd = open (path_in (g, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write (fd, p, n) != (ssize_t) n || close (fd) != 0)
    die (path_in (g, name));
}

/* The zeroed scenario: f3's sector 7 (disk 7107) expects zeros; the log
 * holds its data write and then a ZERO of its second half only, which the
 * disk never stored. */
static void
zero_half_of_f3_last_sector (struct gen *g)
{
  expect_zero (f3_hash, 7, 1);
  log_record (g, WTLOG_ZERO, 0, 7107 * SECTOR + SECTOR / 2, SECTOR / 2, NULL);
  truth (g, "/data/f3", 7, 1, 7107, "lost");
  truth (g, "/data/f4", 0, 1, 7300, "lost");
  truth (g, "/data/f4", 1, 1, 7310, "lost");
}

static void
make_run (const char *dir, const char *scenario)
{
  static const char *const known[] = {
    "clean", "damaged", "nomanifest", "pasteof", "offdisk", "overlap", "hostile",
    "zeroed", "coldgrew", "delalloc", "delalloczero",
  };
  struct gen g = { .dir = dir, .scenario = scenario };
  char err[256];
  bool hostile = strcmp (scenario, "hostile") == 0;
  bool damaged = strcmp (scenario, "damaged") == 0 || hostile;
  bool is_known = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    is_known |= strcmp (scenario, known[i]) == 0;
  if (!is_known) {
    fprintf (stderr, "test-check-classes: unknown scenario: %s\n", scenario);
    exit (2);
  }
  mkdir (dir, 0755);
  g.disk = malloc (DISK_SIZE);
  g.chan = calloc (1, CHAN_SIZE);
  if (!g.disk || !g.chan)
    die ("malloc");
  /* Pre-run content: every sector tagged with its number. */
  for (uint64_t s = 0; s < DISK_SIZE / SECTOR; s++)
    fill (g.disk + s * SECTOR, 0x5500000000ull + s, SECTOR);
  save (&g, "base.img", g.disk, DISK_SIZE);
  struct wtlog_header h;
  wtlog_header_init (&h, DISK_SIZE, CHAN_SIZE, false, "test-check-classes");
  if (!(g.w = wtlog_writer_open (path_in (&g, "writes.wtlog"), &h, err, sizeof err))) {
    fprintf (stderr, "%s\n", err);
    exit (2);
  }
  g.t = 1000000000;
  log_record (&g, WTLOG_OPEN, 0, WTLOG_EXPORT_DISK, DISK_SIZE, NULL);
  send_text (&g, WTCH_HELLO, hostile
             ? "kernel=6.1.0-\x1b[31mred\x1b[0m\nfs=ext4\rnot\nworkload=classes\nseed=1\n"
             : "kernel=6.1.0-test\nfs=ext4\nworkload=classes\nseed=1\npage_size=4096\n"
               "block_size=1024\n");
  send_text (&g, WTCH_MARK, "start");
  if (!(g.truth = fopen (path_in (&g, "truth.txt"), "w")))
    die ("truth.txt");
  workload (&g, damaged);
  if (scenario_is (&g, "zeroed"))
    zero_half_of_f3_last_sector (&g);
  if (strncmp (scenario, "delalloc", 8) == 0)
    workload_f4_delalloc (&g);
  send_text (&g, WTCH_MARK, "synced");
  if (strcmp (scenario, "nomanifest") != 0)
    send_manifest (&g);
  send_text (&g, WTCH_RESULT, hostile
             ? "status=0\nreadback=match\nreadback_bad_sectors=0\nerror=x\r!! forged error\x1b]0;title\x07\n"
               /* the ops workload's counts, bent: names to escape, values
                * that are not counts, pairs without a count */
               "op_list=3\nops_pw\"rite\x1b=2\nops_refused=1\nops_x=12ab\nops_y=\n"
               "refused_reflink=1\npairs_pwrite=mwrite:2,bad,:3,x:y,fzero:1,mw\"r:4\n"
               "chains_wmrm=99999999999999999999999\n"
             : scenario_is (&g, "zeroed")
             ? "status=0\nreadback=mismatch\nreadback_bad_sectors=1\n"
             : "status=0\nreadback=match\nreadback_bad_sectors=0\n");
  log_record (&g, WTLOG_FLUSH, 0, 0, 0, NULL);
  log_record (&g, WTLOG_CLOSE, 0, WTLOG_EXPORT_DISK, DISK_SIZE, NULL);
  log_record (&g, WTLOG_CLOSE, 0, (uint64_t) -1, 0, NULL);
  if (wtlog_writer_close (g.w) == -1)
    die ("close the log");
  save (&g, "disk.img", g.disk, DISK_SIZE);
  save (&g, "channel.bin", g.chan, CHAN_SIZE);
  if (damaged)
    write_truth (&g);
  fclose (g.truth);
  free (g.disk);
  free (g.chan);
}

/* Self-test: the files read back through the common readers. */
static void
self_test (const char *scenario)
{
  char dir[] = "/tmp/test-check-classes.XXXXXX", path[512], err[512];
  if (!mkdtemp (dir))
    die ("mkdtemp");
  make_run (dir, scenario);
  snprintf (path, sizeof path, "%s/writes.wtlog", dir);
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (path, &h, err, sizeof err);
  int rc = -2;
  if (r)
    while ((rc = wtlog_reader_next (r, &rec)) == 0)
      ;
  tap_ok (r && rc == 1 && wtlog_reader_status (r)->closed,
          "%s: the log reads to its closing record", scenario);
  wtlog_reader_close (r);
  snprintf (path, sizeof path, "%s/channel.bin", dir);
  struct wtch_reader *c = wtch_reader_open (path, err, sizeof err);
  struct wtch_message m;
  unsigned char *mf = NULL;
  size_t mflen = 0;
  while (c && (rc = wtch_reader_next (c, &m, err, sizeof err)) == 0)
    if (m.type == WTCH_MANIFEST) {
      mf = realloc (mf, mflen + m.length);
      memcpy (mf + mflen, m.payload, m.length);
      mflen += m.length;
    }
  tap_ok (c && rc == 1, "%s: the channel reads to its end", scenario);
  wtch_reader_close (c);
  struct wtmf_manifest man;
  size_t used;
  bool want = strcmp (scenario, "nomanifest") != 0;
  bool got = mflen && wtmf_parse (mf, mflen, &man, &used, err, sizeof err) == 0;
  tap_ok (got == want && (!got || (used == mflen && man.nfiles == 3)),
          "%s: the manifest %s", scenario, want ? "parses, 3 files" : "is absent");
  if (got)
    wtmf_free (&man);
  free (mf);
  char cmd[600];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "# could not remove %s\n", dir);
}

int
main (int argc, char **argv)
{
  if (argc == 4 && strcmp (argv[1], "--make") == 0) {
    make_run (argv[2], argv[3]);
    return 0;
  }
  if (argc != 1) {
    fprintf (stderr, "usage: test-check-classes [--make DIR clean|damaged|nomanifest|pasteof|offdisk|overlap|hostile|zeroed|coldgrew|delalloc|delalloczero]\n");
    return 2;
  }
  tap_plan (9);
  self_test ("clean");
  self_test ("damaged");
  self_test ("nomanifest");
  return tap_done ();
}
