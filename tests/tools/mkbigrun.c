/* mkbigrun: a large synthetic run directory for scripts/bench-check.
 *
 *   mkbigrun DIR DISK_MIB DATA_MIB FILES BAD RECORDS...
 *
 * DIR/disk.img: a sparse disk of DISK_MIB MiB holding FILES files of
 * DATA_MIB MiB in all, each cut into 8 extents spread over the disk (so
 * the checker's reads seek as on a real filesystem); BAD of the file
 * sectors, spread evenly, hold zeroes instead of their data.
 * DIR/channel.bin: HELLO, the manifest (every sector's hash) in 1 MiB
 * MANIFEST messages, RESULT.
 * DIR/writes-N.wtlog for each N in RECORDS: a closed log of N 4 KiB WRITE
 * records (hashes only) at pseudo-random file pages, each carrying the
 * pages' expected hashes, plus the channel's records; logs of different
 * lengths describe the same final disk, so a check of each must find the
 * same BAD sectors (their classes differ: a longer log writes more of them,
 * which makes them "lied" rather than "lost"). */
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
#define EXTENTS_PER_FILE 8
#define PAGE_SECTORS 8
#define CHUNK (1u << 20)        /* manifest bytes per MANIFEST message */
#define LOG_BUF (4u << 20)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

struct layout {
  uint64_t disk_size;
  uint32_t nfiles;
  uint64_t file_size;
  uint64_t total_sectors;       /* of all files */
  uint64_t bad;
  struct wtmf_file *files;
};

static void
die (const char *what, const char *object)
{
  fprintf (stderr, "mkbigrun: %s: %s: %s\n", what, object, strerror (errno));
  exit (2);
}

static void
usage_error (const char *why)
{
  fprintf (stderr, "mkbigrun: %s\nusage: mkbigrun DIR DISK_MIB DATA_MIB FILES BAD RECORDS...\n", why);
  exit (2);
}

static uint64_t
parse_u64 (const char *s, const char *name)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno || end == s || *end || s[0] == '-') {
    fprintf (stderr, "mkbigrun: %s: not a number: %s\n", name, s);
    exit (2);
  }
  return v;
}

/* The bytes of file sector fs of file fi: distinct everywhere, cheap. */
static void
sector_content (uint32_t fi, uint64_t fs, unsigned char *p)
{
  uint64_t w = ((uint64_t) (fi + 1) << 48 | fs) * 0x9e3779b97f4a7c15ull;
  for (unsigned i = 0; i < SECTOR; i += 8, w += 0x632be59bd9b4e019ull)
    memcpy (p + i, &w, 8);
}

/* File sector s of all files (counted across files) is bad when it falls
 * on the even spread of BAD sectors. */
static bool
is_bad (const struct layout *l, uint64_t global)
{
  if (!l->bad)
    return false;
  uint64_t step = l->total_sectors / l->bad;
  return step && global % step == step / 2 && global / step < l->bad;
}

/* Extent e of file fi lies in slot e * nfiles + fi of the disk. */
static void
make_layout (struct layout *l)
{
  uint64_t slots = (uint64_t) l->nfiles * EXTENTS_PER_FILE;
  uint64_t slot_size = l->disk_size / slots / MIB * MIB;
  uint64_t ext_len = l->file_size / EXTENTS_PER_FILE;
  if (ext_len % SECTOR || ext_len + MIB > slot_size)
    usage_error ("the data does not fit the disk in 1 MiB-aligned extents (less data, or fewer files)");
  l->files = calloc (l->nfiles, sizeof *l->files);
  for (uint32_t fi = 0; fi < l->nfiles; fi++) {
    struct wtmf_file *f = &l->files[fi];
    char path[64];
    snprintf (path, sizeof path, "/data/big%u", fi + 1);
    f->id = fi + 1;
    f->path = strdup (path);
    f->inode = 12 + fi;
    f->size = l->file_size;
    f->nsectors = l->file_size / SECTOR;
    f->nextents = EXTENTS_PER_FILE;
    f->extents = calloc (EXTENTS_PER_FILE, sizeof *f->extents);
    f->hashes = malloc (f->nsectors * sizeof *f->hashes);
    f->ops = malloc (f->nsectors * sizeof *f->ops);
    if (!f->path || !f->extents || !f->hashes || !f->ops)
      die ("malloc", "the manifest");
    for (uint32_t e = 0; e < EXTENTS_PER_FILE; e++)
      f->extents[e] = (struct wtmf_extent) {
        e * ext_len, ((uint64_t) e * l->nfiles + fi) * slot_size + MIB, ext_len, 0 };
  }
}

/* Writes every extent's data (zeroes at bad sectors) and fills the
 * manifest's hashes. */
static void
write_disk (struct layout *l, const char *dir)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/disk.img", dir);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || ftruncate (fd, (off_t) l->disk_size) != 0)
    die ("create", path);
  unsigned char *buf = malloc (MIB);
  if (!buf)
    die ("malloc", "the disk buffer");
  uint64_t global = 0;
  for (uint32_t fi = 0; fi < l->nfiles; fi++) {
    struct wtmf_file *f = &l->files[fi];
    for (uint64_t fs = 0; fs < f->nsectors; fs += MIB / SECTOR) {
      const struct wtmf_extent *e = &f->extents[fs * SECTOR / f->extents[0].length];
      uint64_t n = MIN (MIB / SECTOR, f->nsectors - fs);
      for (uint64_t i = 0; i < n; i++, global++) {
        unsigned char *p = buf + i * SECTOR;
        sector_content (fi, fs + i, p);
        f->hashes[fs + i] = wt_sector_hash (p);
        f->ops[fs + i] = fi + 1;
        if (is_bad (l, global))
          memset (p, 0, SECTOR);
      }
      uint64_t at = e->physical + fs * SECTOR - e->logical;
      if (wt_pwrite_full (fd, buf, n * SECTOR, at) == -1)
        die ("write", path);
    }
  }
  if (close (fd) != 0)
    die ("close", path);
  free (buf);
}

/* The channel: its messages back to back; their offsets and lengths go
 * into every log as CHANNEL records. */
struct channel {
  unsigned char *p;
  uint64_t len, cap;
  uint64_t msgs;
  uint64_t offsets[512], lengths[512];
};

static void
chan_send (struct channel *ch, uint16_t type, const void *payload, uint32_t len)
{
  uint64_t size = wtch_encoded_size (len);
  if (ch->msgs == 512)
    usage_error ("the manifest needs more than 512 messages");
  if (ch->len + size > ch->cap) {
    ch->cap = (ch->len + size) * 2;
    if (!(ch->p = realloc (ch->p, ch->cap)))
      die ("malloc", "the channel");
  }
  wtch_encode (ch->p + ch->len, type, 0, ch->msgs + 1, 1000000000ull + ch->msgs,
               payload, len);
  ch->offsets[ch->msgs] = ch->len;
  ch->lengths[ch->msgs++] = size;
  ch->len += size;
}

static void
write_channel (const struct layout *l, const char *dir, struct channel *ch)
{
  static const char hello[] = "kernel=synthetic\nfs=none\nworkload=mkbigrun\nseed=0\n";
  static const char result[] = "status=0\nreadback=match\nreadback_bad_sectors=0\n";
  struct wtmf_buf b = { 0 };
  wtmf_buf_header (&b, l->nfiles, l->nfiles, 0);
  for (uint32_t fi = 0; fi < l->nfiles; fi++)
    wtmf_buf_file (&b, &l->files[fi]);
  for (uint32_t fi = 0; fi < l->nfiles; fi++) {
    struct wtmf_op op = { 1000000000ull, fi + 1, WTMF_OP_PWRITE, 0, l->file_size };
    wtmf_buf_op (&b, &op);
  }
  if (wtmf_buf_finish (&b) == -1)
    die ("build", "the manifest");
  chan_send (ch, WTCH_HELLO, hello, sizeof hello - 1);
  for (size_t at = 0; at < b.len; at += CHUNK)
    chan_send (ch, WTCH_MANIFEST, b.p + at, (uint32_t) MIN ((size_t) CHUNK, b.len - at));
  chan_send (ch, WTCH_RESULT, result, sizeof result - 1);
  wtmf_buf_free (&b);
  char path[4096];
  snprintf (path, sizeof path, "%s/channel.bin", dir);
  /* One zero block after the last message ends the stream. */
  uint64_t size = ch->len + SECTOR;
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || wt_pwrite_full (fd, ch->p, ch->len, 0) == -1
      || ftruncate (fd, (off_t) size) != 0 || close (fd) != 0)
    die ("write", path);
}

/* A log written through a large buffer: one pwrite(2) per 4 MiB. */
struct logw {
  int fd;
  const char *path;
  unsigned char *buf;
  size_t used;
  uint64_t pos;                 /* where buf goes in the file */
  uint64_t seq, t;
};

static void
log_flush (struct logw *w)
{
  if (wt_pwrite_full (w->fd, w->buf, w->used, w->pos) == -1)
    die ("write", w->path);
  w->pos += w->used;
  w->used = 0;
}

static void
log_append (struct logw *w, uint16_t type, uint32_t conn, uint64_t offset,
            uint64_t length, const uint64_t *hashes)
{
  unsigned char fixed[WTLOG_FIXED_SIZE];
  struct iovec iov[4];
  struct wtlog_record rec = {
    .type = type, .conn = conn, .seq = ++w->seq, .t_start = w->t,
    .t_end = w->t + 20000, .offset = offset, .length = length,
  };
  w->t += 50000;
  int n = wtlog_encode (&rec, hashes, NULL, fixed, iov);
  if (w->used + rec.size > LOG_BUF)
    log_flush (w);
  for (int i = 0; i < n; i++) {
    memcpy (w->buf + w->used, iov[i].iov_base, iov[i].iov_len);
    w->used += iov[i].iov_len;
  }
}

/* xorshift64*: the same pages for the same record count. */
static uint64_t
next_random (uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dull;
}

static void
write_log (const struct layout *l, const struct channel *ch, const char *dir,
           uint64_t records)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/writes-%" PRIu64 ".wtlog", dir, records);
  struct logw w = { .path = path, .pos = WTLOG_HEADER_SIZE, .t = 1000000 };
  unsigned char hdr[WTLOG_HEADER_SIZE];
  struct wtlog_header h;
  wtlog_header_init (&h, l->disk_size, ch->len + SECTOR, false, "mkbigrun");
  wtlog_header_encode (&h, hdr);
  if ((w.fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0
      || wt_pwrite_full (w.fd, hdr, sizeof hdr, 0) == -1)
    die ("create", path);
  if (!(w.buf = malloc (LOG_BUF)))
    die ("malloc", "the log buffer");
  log_append (&w, WTLOG_OPEN, 1, WTLOG_EXPORT_DISK, l->disk_size, NULL);
  log_append (&w, WTLOG_OPEN, 2, WTLOG_EXPORT_CHANNEL, ch->len + SECTOR, NULL);
  uint64_t rnd = 0x853c49e6748fea9bull;
  uint64_t pages = l->file_size / (PAGE_SECTORS * SECTOR);
  for (uint64_t r = 0; r < records; r++) {
    uint64_t x = next_random (&rnd);
    const struct wtmf_file *f = &l->files[x % l->nfiles];
    uint64_t fs = (x >> 16) % pages * PAGE_SECTORS;
    const struct wtmf_extent *e = &f->extents[fs * SECTOR / f->extents[0].length];
    uint64_t at = e->physical + fs * SECTOR - e->logical;
    log_append (&w, WTLOG_WRITE, 1, at, PAGE_SECTORS * SECTOR, &f->hashes[fs]);
  }
  for (uint64_t m = 0; m < ch->msgs; m++) {
    uint64_t nh = ch->lengths[m] / SECTOR;
    uint64_t *hashes = malloc (nh * sizeof *hashes);
    if (!hashes)
      die ("malloc", "channel hashes");
    wt_sector_hashes (ch->p + ch->offsets[m], nh, hashes);
    log_append (&w, WTLOG_CHANNEL, 2, ch->offsets[m], ch->lengths[m], hashes);
    free (hashes);
  }
  log_append (&w, WTLOG_FLUSH, 1, 0, 0, NULL);
  log_append (&w, WTLOG_CLOSE, 2, WTLOG_EXPORT_CHANNEL, ch->len + SECTOR, NULL);
  log_append (&w, WTLOG_CLOSE, 1, WTLOG_EXPORT_DISK, l->disk_size, NULL);
  log_append (&w, WTLOG_CLOSE, 0, 0, 0, NULL);
  log_flush (&w);
  if (close (w.fd) != 0)
    die ("close", path);
  free (w.buf);
}

int
main (int argc, char **argv)
{
  if (argc < 7)
    usage_error ("expected DIR DISK_MIB DATA_MIB FILES BAD and at least one RECORDS");
  const char *dir = argv[1];
  struct layout l = {
    .disk_size = parse_u64 (argv[2], "DISK_MIB") * MIB,
    .nfiles = (uint32_t) parse_u64 (argv[4], "FILES"),
    .bad = parse_u64 (argv[5], "BAD"),
  };
  uint64_t data = parse_u64 (argv[3], "DATA_MIB") * MIB;
  if (l.nfiles == 0 || l.nfiles > 64 || data == 0 || data % ((uint64_t) l.nfiles * EXTENTS_PER_FILE * MIB))
    usage_error ("FILES must be 1-64 and DATA_MIB a multiple of 8 x FILES");
  l.file_size = data / l.nfiles;
  l.total_sectors = data / SECTOR;
  if (l.bad > l.total_sectors)
    usage_error ("BAD is more than the data's sectors");
  make_layout (&l);
  write_disk (&l, dir);
  struct channel ch = { 0 };
  write_channel (&l, dir, &ch);
  for (int i = 6; i < argc; i++)
    write_log (&l, &ch, dir, parse_u64 (argv[i], "RECORDS"));
  free (ch.p);
  return 0;
}
