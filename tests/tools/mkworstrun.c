/* mkworstrun: a run directory built to be the worst case for wtrack check,
 * within one channel of the size wtrack-run gives the guest.
 *
 *   mkworstrun DIR [CHANNEL_MIB]      (default 64)
 *
 * DIR/channel.bin, CHANNEL_MIB MiB filled to its last block with:
 *  - HELLO, then MARKs, one block each, a quarter of the channel (placing
 *    them used to scan every CHANNEL record per message);
 *  - the manifest, in 1 MiB MANIFEST messages: FILES one-sector files (about
 *    a sixth of the channel), every one damaged, each with its own op (the
 *    reports used to be quadratic in damaged files, and each run's op time
 *    is looked up among the MARKs); then one file of BIG sectors, every one
 *    damaged with content of its own (so each is traced for "misplaced"),
 *    whose extents, as many as fill the rest, all cover the whole file (the
 *    check used to walk every sector of every extent);
 *  - RESULT, then zeroes to the end.
 * DIR/disk.img: sparse, all zeroes (no file's content reached it).
 * DIR/writes.wtlog: a closed log of one CHANNEL record per message, a few
 * WRITEs of the big file's expected content to other sectors (misplaced),
 * and a FLUSH.
 * Prints "files N extents N marks N bad N" on stdout.
 *
 *   mkworstrun --crash DIR [FILES]    (default 600000)
 *
 * The worst case for wtrack crash's checkpoint oracle within a 64 MiB
 * channel: two manifests of FILES files (checkpoint 1 and the final one,
 * ids in opposite orders), so each file of the checkpoint is looked up
 * among FILES later ones (a scan per file once: quadratic).  Every file is
 * empty but /d/f0000000, one sector written (data=on) and flushed before
 * MARK "checkpoint 1" and kept to the end: the states after the MARK
 * compare it.  DIR/base.img is all zeroes; the log has one CHANNEL record
 * per message.  Prints "files N channel_used N". */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "channel.h"
#include "fileio.h"
#include "manifest.h"
#include "sector-hash.h"
#include "wtlog.h"

#define SECTOR WT_SECTOR_SIZE
#define MIB (1ull << 20)
#define CHUNK (1u << 20)        /* manifest bytes per MANIFEST message */
#define BIG_SECTORS 65536u
#define FILE_ENTRY 96u          /* fixed part, 16-byte path, 1 extent, 1 sector */
#define T0 1000000000ull        /* guest and log clocks start here */

static void
die (const char *what, const char *object)
{
  fprintf (stderr, "mkworstrun: %s: %s: %s\n", what, object, strerror (errno));
  exit (2);
}

static void *
xmalloc (size_t n)
{
  void *p = calloc (1, n ? n : 1);
  if (!p)
    die ("malloc", "memory");
  return p;
}

/* Content of its own for each bad sector: never zero, never repeated. */
static void
content_sector (uint64_t tag, unsigned char s[SECTOR])
{
  uint64_t w = (tag + 1) * 0x9e3779b97f4a7c15ull;
  for (unsigned i = 0; i < SECTOR; i += 8, w += 0x632be59bd9b4e019ull)
    memcpy (s + i, &w, 8);
}

static uint64_t
content_hash (uint64_t tag)
{
  unsigned char s[SECTOR];
  content_sector (tag, s);
  return wt_sector_hash (s);
}

struct chan {
  unsigned char *p;
  uint64_t size, len, msgs;
};

static void
chan_send (struct chan *ch, uint16_t type, uint64_t guest_ns, const void *payload,
           uint32_t len)
{
  if (ch->len + wtch_encoded_size (len) > ch->size) {
    fprintf (stderr, "mkworstrun: the channel is too small for its messages\n");
    exit (2);
  }
  ch->len += wtch_encode (ch->p + ch->len, type, 0, ++ch->msgs, guest_ns, payload, len);
}

/* A manifest in MANIFEST messages of CHUNK bytes. */
static void
chan_send_manifest (struct chan *ch, uint64_t guest_ns, const struct wtmf_buf *b)
{
  for (size_t at = 0; at < b->len; at += CHUNK)
    chan_send (ch, WTCH_MANIFEST, guest_ns, b->p + at,
               (uint32_t) (b->len - at < CHUNK ? b->len - at : CHUNK));
}

struct plan {
  uint32_t marks, files, extents;
  uint64_t disk_sectors;
};

/* A quarter of the channel in MARKs, a sixth in small files, the rest in
 * the big file's extents (less what the message headers and padding take). */
static struct plan
make_plan (uint64_t chan_size)
{
  struct plan p;
  p.marks = (uint32_t) (chan_size / 4 / SECTOR);
  p.files = (uint32_t) (chan_size / 6 / FILE_ENTRY);
  uint64_t manifest_room = chan_size - (uint64_t) (p.marks + 2) * SECTOR;
  manifest_room -= manifest_room / CHUNK * SECTOR + SECTOR;   /* headers, padding */
  uint64_t fixed = WTMF_HEADER_SIZE + WTMF_TRAILER_SIZE
    + (uint64_t) p.files * (FILE_ENTRY + WTMF_OP_SIZE)
    + WTMF_FILE_FIXED + 16 + BIG_SECTORS * 12ull + WTMF_OP_SIZE;
  if (fixed >= manifest_room) {
    fprintf (stderr, "mkworstrun: the channel is too small\n");
    exit (2);
  }
  p.extents = (uint32_t) ((manifest_room - fixed) / WTMF_EXTENT_SIZE);
  p.disk_sectors = 2048 + p.files + BIG_SECTORS + 2048;
  return p;
}

static void
build_manifest (const struct plan *p, struct wtmf_buf *b)
{
  uint32_t nops = p->files + 1;
  wtmf_buf_header (b, p->files + 1, nops, 0);
  uint64_t hash;
  uint32_t op;
  struct wtmf_extent e;
  char path[32];
  for (uint32_t i = 0; i < p->files; i++) {
    snprintf (path, sizeof path, "/d/f%07" PRIu32, i);
    hash = content_hash (i);
    op = i + 1;
    e = (struct wtmf_extent) { 0, (2048ull + i) * SECTOR, SECTOR, 0 };
    struct wtmf_file f = {
      .id = i + 1, .path = path, .inode = 100 + i, .size = SECTOR, .nextents = 1,
      .extents = &e, .nsectors = 1, .hashes = &hash, .ops = &op,
    };
    wtmf_buf_file (b, &f);
  }
  uint64_t *hashes = xmalloc (BIG_SECTORS * sizeof *hashes);
  uint32_t *ops = xmalloc (BIG_SECTORS * sizeof *ops);
  for (uint32_t s = 0; s < BIG_SECTORS; s++) {
    hashes[s] = content_hash ((1ull << 40) + s);
    ops[s] = nops;
  }
  struct wtmf_extent *ext = xmalloc ((size_t) p->extents * sizeof *ext);
  uint64_t big_at = (2048ull + p->files) * SECTOR;
  for (uint32_t i = 0; i < p->extents; i++)
    ext[i] = (struct wtmf_extent) { 0, big_at, (uint64_t) BIG_SECTORS * SECTOR, 0 };
  struct wtmf_file big = {
    .id = p->files + 1, .path = "/d/big", .inode = 99, .size = (uint64_t) BIG_SECTORS * SECTOR,
    .nextents = p->extents, .extents = ext, .nsectors = BIG_SECTORS, .hashes = hashes,
    .ops = ops,
  };
  wtmf_buf_file (b, &big);
  /* Op times spread over the MARKs' guest times. */
  for (uint32_t i = 0; i < nops; i++) {
    struct wtmf_op o = {
      T0 + (uint64_t) i * p->marks / nops * 1000000, i + 1, WTMF_OP_PWRITE, 0, SECTOR,
    };
    wtmf_buf_op (b, &o);
  }
  if (wtmf_buf_finish (b) == -1)
    die ("build", "the manifest");
  free (hashes);
  free (ops);
  free (ext);
}

static void
build_channel (const struct plan *p, struct chan *ch)
{
  static const char hello[] = "kernel=synthetic\nfs=none\nworkload=mkworstrun\nseed=0\n";
  static const char result[] = "status=0\nreadback=match\nreadback_bad_sectors=0\n";
  chan_send (ch, WTCH_HELLO, T0, hello, sizeof hello - 1);
  char label[64];
  for (uint32_t i = 0; i < p->marks; i++) {
    int n = snprintf (label, sizeof label, "checkpoint %" PRIu32, i);
    chan_send (ch, WTCH_MARK, T0 + (uint64_t) i * 1000000, label, (uint32_t) n);
  }
  struct wtmf_buf b = { 0 };
  build_manifest (p, &b);
  uint64_t t = T0 + (uint64_t) p->marks * 1000000;
  chan_send_manifest (ch, t, &b);
  chan_send (ch, WTCH_RESULT, t, result, sizeof result - 1);
  wtmf_buf_free (&b);
}

static void
save (const char *dir, const char *name, const void *p, uint64_t n, uint64_t size)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || wt_pwrite_full (fd, p, n, 0) == -1 || ftruncate (fd, (off_t) size) != 0
      || close (fd) != 0)
    die ("write", path);
}

struct logw {
  FILE *f;
  const char *path;
  uint64_t seq, t, disk_size, channel_size;
};

/* One record; data (length bytes) only where the record says WTLOG_F_DATA. */
static void
log_append (struct logw *w, uint16_t type, uint16_t flags, uint32_t conn,
            uint64_t offset, uint64_t length, const uint64_t *hashes, const void *data)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = conn, .seq = ++w->seq, .t_start = w->t,
    .t_end = w->t + 20000, .offset = offset, .length = length,
  };
  w->t += 1000000;
  int n = wtlog_encode (&rec, hashes, data, fixed, iov);
  for (int i = 0; i < n; i++)
    if (fwrite (iov[i].iov_base, 1, iov[i].iov_len, w->f) != iov[i].iov_len)
      die ("write", w->path);
}

/* DIR/writes.wtlog: its header and the OPEN of both exports. */
static void
log_begin (struct logw *w, const char *path, uint64_t disk_size, const struct chan *ch,
           bool data)
{
  *w = (struct logw) { .f = fopen (path, "w"), .path = path, .t = T0,
                       .disk_size = disk_size, .channel_size = ch->size };
  if (!w->f)
    die ("create", path);
  unsigned char hdr[WTLOG_HEADER_SIZE];
  struct wtlog_header h;
  wtlog_header_init (&h, disk_size, ch->size, data, "mkworstrun");
  wtlog_header_encode (&h, hdr);
  if (fwrite (hdr, 1, sizeof hdr, w->f) != sizeof hdr)
    die ("write", path);
  log_append (w, WTLOG_OPEN, 0, 1, WTLOG_EXPORT_DISK, disk_size, NULL, NULL);
  log_append (w, WTLOG_OPEN, 0, 2, WTLOG_EXPORT_CHANNEL, ch->size, NULL, NULL);
}

/* One CHANNEL record per message, in stream order. */
static void
log_channel (struct logw *w, const struct chan *ch)
{
  uint64_t *hashes = xmalloc ((CHUNK / SECTOR + 2) * sizeof *hashes);
  for (uint64_t at = 0; at < ch->len;) {
    struct wtch_message m;
    char err[160];
    if (wtch_decode_header (ch->p + at, &m, err, sizeof err) != 0) {
      fprintf (stderr, "mkworstrun: own channel at byte %" PRIu64 ": %s\n", at, err);
      exit (2);
    }
    uint64_t size = wtch_encoded_size (m.length);
    wt_sector_hashes (ch->p + at, size / SECTOR, hashes);
    log_append (w, WTLOG_CHANNEL, 0, 2, at, size, hashes, NULL);
    at += size;
  }
  free (hashes);
}

static void
log_end (struct logw *w)
{
  log_append (w, WTLOG_CLOSE, 0, 2, WTLOG_EXPORT_CHANNEL, w->channel_size, NULL, NULL);
  log_append (w, WTLOG_CLOSE, 0, 1, WTLOG_EXPORT_DISK, w->disk_size, NULL, NULL);
  log_append (w, WTLOG_CLOSE, 0, 0, 0, 0, NULL, NULL);
  if (fclose (w->f) != 0)
    die ("close", w->path);
}

static void
write_log (const char *dir, const struct plan *p, const struct chan *ch)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/writes.wtlog", dir);
  struct logw w;
  log_begin (&w, path, p->disk_sectors * SECTOR, ch, false);
  log_channel (&w, ch);
  /* The big file's first sectors' content written to the spare sectors
   * past it: misplaced. */
  uint64_t spare = (2048ull + p->files + BIG_SECTORS) * SECTOR;
  for (uint32_t s = 0; s < 64; s++) {
    uint64_t hh = content_hash ((1ull << 40) + s);
    log_append (&w, WTLOG_WRITE, 0, 1, spare + (uint64_t) s * SECTOR, SECTOR, &hh, NULL);
  }
  log_append (&w, WTLOG_FLUSH, 0, 1, 0, 0, NULL, NULL);
  log_end (&w);
}

/* --crash: see the top of the file. */

#define CRASH_DISK_SECTORS 4096u
#define CRASH_FILE_SECTOR 2048u /* where /d/f0000000's one sector lies */

/* FILES files, ids 1..FILES, listed upwards or downwards; only the first
 * (id 1) has content: one sector at CRASH_FILE_SECTOR, written by op 1. */
static void
build_crash_manifest (uint32_t files, uint32_t checkpoint, bool downwards,
                      struct wtmf_buf *b)
{
  wtmf_buf_header (b, files, 1, checkpoint);
  uint64_t hash = content_hash (0);
  uint32_t op = 1;
  struct wtmf_extent e = { 0, (uint64_t) CRASH_FILE_SECTOR * SECTOR, SECTOR, 0 };
  char path[32];
  for (uint32_t k = 0; k < files; k++) {
    uint32_t i = downwards ? files - 1 - k : k;
    snprintf (path, sizeof path, "/d/f%07" PRIu32, i);
    struct wtmf_file f = { .id = i + 1, .path = path, .inode = 100 + i };
    if (i == 0)
      f = (struct wtmf_file) { .id = 1, .path = path, .inode = 100, .size = SECTOR,
                               .nextents = 1, .extents = &e, .nsectors = 1,
                               .hashes = &hash, .ops = &op };
    wtmf_buf_file (b, &f);
  }
  struct wtmf_op o = { T0, 1, WTMF_OP_PWRITE, 0, SECTOR };
  wtmf_buf_op (b, &o);
  if (wtmf_buf_finish (b) == -1)
    die ("build", "the manifest");
}

static void
build_crash_channel (uint32_t files, struct chan *ch)
{
  static const char hello[] = "kernel=synthetic\nfs=none\nworkload=mkworstrun\nseed=0\n";
  static const char mark[] = "checkpoint 1";
  static const char result[] = "status=0\nreadback=match\nreadback_bad_sectors=0\n";
  chan_send (ch, WTCH_HELLO, T0, hello, sizeof hello - 1);
  chan_send (ch, WTCH_MARK, T0 + 1000000, mark, sizeof mark - 1);
  struct wtmf_buf ckpt = { 0 }, final = { 0 };
  build_crash_manifest (files, 1, false, &ckpt);
  /* The final manifest (checkpoint 0) lists the files the other way round. */
  build_crash_manifest (files, 0, true, &final);
  chan_send_manifest (ch, T0 + 2000000, &ckpt);
  chan_send_manifest (ch, T0 + 2000000, &final);
  wtmf_buf_free (&ckpt);
  wtmf_buf_free (&final);
  chan_send (ch, WTCH_RESULT, T0 + 3000000, result, sizeof result - 1);
}

/* The file's sector written with its data and flushed, then the channel
 * (its MARK after that flush), then a write elsewhere and a flush: the
 * state after it is checked against checkpoint 1. */
static void
write_crash_log (const char *dir, const struct chan *ch)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/writes.wtlog", dir);
  unsigned char sector[SECTOR];
  content_sector (0, sector);
  uint64_t hash = wt_sector_hash (sector);
  struct logw w;
  log_begin (&w, path, (uint64_t) CRASH_DISK_SECTORS * SECTOR, ch, true);
  log_append (&w, WTLOG_WRITE, WTLOG_F_DATA, 1, (uint64_t) CRASH_FILE_SECTOR * SECTOR,
              SECTOR, &hash, sector);
  log_append (&w, WTLOG_FLUSH, 0, 1, 0, 0, NULL, NULL);
  log_channel (&w, ch);
  content_sector (1, sector);
  hash = wt_sector_hash (sector);
  log_append (&w, WTLOG_WRITE, WTLOG_F_DATA, 1, (uint64_t) (CRASH_FILE_SECTOR + 1) * SECTOR,
              SECTOR, &hash, sector);
  log_append (&w, WTLOG_FLUSH, 0, 1, 0, 0, NULL, NULL);
  log_end (&w);
}

static int
main_crash (int argc, char **argv)
{
  uint64_t files = argc == 4 ? strtoull (argv[3], NULL, 10) : 600000;
  if (argc < 3 || argc > 4 || files < 1 || files > 10000000) {
    fprintf (stderr, "usage: mkworstrun --crash DIR [FILES] (1 to 10000000)\n");
    return 2;
  }
  struct chan ch = { .size = 64 * MIB };
  ch.p = xmalloc (ch.size);
  build_crash_channel ((uint32_t) files, &ch);
  save (argv[2], "channel.bin", ch.p, ch.size, ch.size);
  save (argv[2], "base.img", NULL, 0, (uint64_t) CRASH_DISK_SECTORS * SECTOR);
  write_crash_log (argv[2], &ch);
  printf ("files %" PRIu64 " channel_used %" PRIu64 "\n", files, ch.len);
  free (ch.p);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 2 && strcmp (argv[1], "--crash") == 0)
    return main_crash (argc, argv);
  if (argc < 2 || argc > 3) {
    fprintf (stderr, "usage: mkworstrun DIR [CHANNEL_MIB] | --crash DIR [FILES]\n");
    return 2;
  }
  uint64_t mib = argc == 3 ? strtoull (argv[2], NULL, 10) : 64;
  if (mib < 8 || mib > 1024) {
    fprintf (stderr, "mkworstrun: CHANNEL_MIB must be 8 to 1024\n");
    return 2;
  }
  struct chan ch = { .size = mib * MIB };
  ch.p = xmalloc (ch.size);
  struct plan p = make_plan (ch.size);
  build_channel (&p, &ch);
  save (argv[1], "channel.bin", ch.p, ch.size, ch.size);
  save (argv[1], "disk.img", NULL, 0, p.disk_sectors * SECTOR);
  write_log (argv[1], &p, &ch);
  printf ("files %" PRIu32 " overlapping_extents %" PRIu32 " marks %" PRIu32 " bad %" PRIu64
          " channel_used %" PRIu64 "\n", p.files + 1, p.extents, p.marks,
          (uint64_t) p.files + BIG_SECTORS, ch.len);
  free (ch.p);
  return 0;
}
