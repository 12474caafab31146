/* The manifest: it comes from a guest running a kernel under test, so the
 * parser is tested as a reader of hostile input: round trip of every field,
 * a cut at every byte, a flipped bit at every bit, each field corrupted with
 * the CRC made right again (so only the field check can refuse it), and
 * manifests back to back. Run it once under valgrind to see no leak and no
 * read past the buffer: every parse gets a buffer of exactly its length. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "crc32c.h"
#include "le.h"
#include "manifest.h"
#include "sector-hash.h"
#include "tap.h"

enum { NFILES = 5, NOPS = 9 };

/* The files: odd sizes, paths whose lengths hit the 8-byte padding at every
 * phase, ids out of order, extents with every flag. */
static struct wtmf_extent ext_one[] = {
  { 0, 1u << 20, 4096, WTMF_EXT_UNMAPPABLE },
};
static struct wtmf_extent ext_511[] = {
  { 0, 8192, 4096, WTMF_EXT_UNWRITTEN },
};
static struct wtmf_extent ext_513[] = {
  { 0, 40960, 512, 0 },
  { 512, 81920, 512, WTMF_EXT_UNWRITTEN | WTMF_EXT_UNMAPPABLE },
};
static struct wtmf_extent ext_big[] = {
  { 0, 1ull << 30, 8192, 0 },
  { 8192, (1ull << 30) + 65536, 4096, WTMF_EXT_UNWRITTEN },
  { 12288, 0, 4096, WTMF_EXT_UNMAPPABLE | WTMF_EXT_DELALLOC },
};

static char long_path[301];

static struct wtmf_file files[NFILES] = {
  { .id = 7, .path = "/data/empty", .inode = 12, .size = 0 },
  { .id = 3, .path = "/a", .inode = 0xffffffff00000001ull, .size = 1,
    .nextents = 1, .extents = ext_one },
  { .id = 100, .path = "/data/f8", .inode = 13, .size = 511,
    .nextents = 1, .extents = ext_511 },
  { .id = 0xfffffffe, .path = long_path, .inode = 14, .size = 513,
    .nextents = 2, .extents = ext_513 },
  { .id = 1, .path = "/data/big.bin", .inode = 1ull << 40, .size = 4096 * 3 + 7,
    .nextents = 3, .extents = ext_big },
};

static struct wtmf_op ops[NOPS] = {
  { 1000, 1, WTMF_OP_MMAP_STORE, 0, 1460 },
  { 2000, 1, WTMF_OP_PWRITE, 1460, 1460 },
  { 3000, 3, WTMF_OP_PWRITE, 0, 1 },
  { 4000, 100, WTMF_OP_TRUNCATE, 511, 0 },
  { 5000, 0xfffffffe, WTMF_OP_FALLOCATE, 0, 1024 },
  { 6000, 1, WTMF_OP_PUNCH, 4096, 4096 },
  { 7000, 1, WTMF_OP_MSYNC, 0, 12295 },
  { 8000, 7, WTMF_OP_FSYNC, 0, 0 },
  { UINT64_MAX, 1, WTMF_OP_MUNMAP, UINT64_MAX - 1, UINT64_MAX },
};

/* Where each part landed in the encoded manifest. */
struct layout {
  size_t file_at[NFILES];
  size_t extents_at[NFILES];
  size_t sector_ops_at[NFILES];
  size_t op_at[NOPS];
  size_t trailer_at;
};

static unsigned char *good;
static size_t good_len;
static struct layout lay;

static void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (!p) {
    perror ("malloc");
    exit (2);
  }
  return p;
}

static void
make_files (void)
{
  memset (long_path, 'p', 300);
  memcpy (long_path, "/deep/", 6);
  uint32_t op = 0;
  for (int i = 0; i < NFILES; i++) {
    struct wtmf_file *f = &files[i];
    f->nsectors = wtmf_sectors_of (f->size);
    f->hashes = xmalloc (8 * f->nsectors);
    f->ops = xmalloc (4 * f->nsectors);
    /* Hash real sector content, as the guest does. */
    unsigned char sector[WT_SECTOR_SIZE];
    for (uint64_t s = 0; s < f->nsectors; s++) {
      memset (sector, 0, sizeof sector);
      snprintf ((char *) sector, sizeof sector, "file %u sector %" PRIu64, f->id, s);
      f->hashes[s] = wt_sector_hash (sector);
      f->ops[s] = op++ % (NOPS + 1);    /* 0 (none) up to the last op */
    }
  }
}

static void
free_files (void)
{
  for (int i = 0; i < NFILES; i++) {
    free (files[i].hashes);
    free (files[i].ops);
  }
}

/* Which of files[] and ops[] a manifest holds, in its order. */
struct selection {
  int nfiles, nops;
  int file[NFILES], op[NOPS];
  uint32_t checkpoint;
};

static const struct selection all = {
  NFILES, NOPS, { 0, 1, 2, 3, 4 }, { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, 5,
};

/* Encodes the selection, noting the layout. */
static int
encode (struct wtmf_buf *b, const struct selection *sel, struct layout *l)
{
  wtmf_buf_header (b, (uint32_t) sel->nfiles, (uint32_t) sel->nops, sel->checkpoint);
  for (int i = 0; i < sel->nfiles; i++) {
    const struct wtmf_file *f = &files[sel->file[i]];
    l->file_at[i] = b->len;
    l->extents_at[i] = b->len + WTMF_FILE_FIXED + wt_align8 (strlen (f->path));
    l->sector_ops_at[i] = l->extents_at[i] + WTMF_EXTENT_SIZE * f->nextents
      + 8 * f->nsectors;
    wtmf_buf_file (b, f);
  }
  for (int j = 0; j < sel->nops; j++) {
    l->op_at[j] = b->len;
    wtmf_buf_op (b, &ops[sel->op[j]]);
  }
  l->trailer_at = b->len;
  return wtmf_buf_finish (b);
}

static bool
same_file (const struct wtmf_file *a, const struct wtmf_file *b)
{
  if (a->id != b->id || strcmp (a->path, b->path) != 0 || a->inode != b->inode
      || a->size != b->size || a->nextents != b->nextents
      || a->nsectors != wtmf_sectors_of (b->size))
    return false;
  for (uint32_t e = 0; e < a->nextents; e++)
    if (a->extents[e].logical != b->extents[e].logical
        || a->extents[e].physical != b->extents[e].physical
        || a->extents[e].length != b->extents[e].length
        || a->extents[e].flags != b->extents[e].flags)
      return false;
  return memcmp (a->hashes, b->hashes, 8 * a->nsectors) == 0
    && memcmp (a->ops, b->ops, 4 * a->nsectors) == 0;
}

static bool
same_manifest (const struct wtmf_manifest *m, const struct selection *sel)
{
  if (m->version != WTMF_VERSION || m->sector_size != 512 || m->hash_id != 1
      || m->checkpoint != sel->checkpoint || m->nfiles != (uint32_t) sel->nfiles
      || m->nops != (uint32_t) sel->nops)
    return false;
  for (int i = 0; i < sel->nfiles; i++)
    if (!same_file (&m->files[i], &files[sel->file[i]])) {
      fprintf (stderr, "# file %d differs\n", i);
      return false;
    }
  for (int j = 0; j < sel->nops; j++) {
    const struct wtmf_op *o = &ops[sel->op[j]];
    if (m->ops[j].guest_ns != o->guest_ns || m->ops[j].file_id != o->file_id
        || m->ops[j].kind != o->kind || m->ops[j].offset != o->offset
        || m->ops[j].length != o->length) {
      fprintf (stderr, "# op %d differs\n", j + 1);
      return false;
    }
  }
  return true;
}

/* Parses a private copy of exactly len bytes, so a read past the end is a
 * valgrind error, and frees what it got. Returns wtmf_parse's result. */
static int
parse_copy (const unsigned char *bytes, size_t len, char *err, size_t errlen,
            size_t *used)
{
  unsigned char *copy = xmalloc (len);
  memcpy (copy, bytes, len);
  struct wtmf_manifest m;
  err[0] = '\0';
  int rc = wtmf_parse (copy, len, &m, used, err, errlen);
  if (rc == 0)
    wtmf_free (&m);
  else if (m.files || m.ops) {
    fprintf (stderr, "# a failed parse left memory in the manifest\n");
    rc = -2;
  }
  free (copy);
  return rc;
}

/* err is "manifest byte N: why"; returns N, or -1 when it is not there. */
static long long
error_offset (const char *err)
{
  unsigned long long at;
  int n = 0;
  if (sscanf (err, "manifest byte %llu: %n", &at, &n) != 1 || n == 0)
    return -1;
  return (long long) at;
}

static void
test_helpers (void)
{
  tap_ok (wtmf_sectors_of (0) == 0 && wtmf_sectors_of (1) == 1
          && wtmf_sectors_of (512) == 1 && wtmf_sectors_of (513) == 2
          && wtmf_sectors_of (UINT64_MAX) == (1ull << 55),
          "sectors of 0, 1, 512, 513 and UINT64_MAX bytes (got %" PRIu64 " for the last)",
          wtmf_sectors_of (UINT64_MAX));
  static const char *const names[] = {
    "?", "mmap-store", "pwrite", "truncate", "punch", "msync", "fsync",
    "fallocate", "munmap", "direct-write", "zero", "sync-range", "fdatasync",
    "fadvise", "collapse", "insert", "copy", "syncfs", "drop-caches", "clone", "dedupe",
    "?",
  };
  bool names_ok = strcmp (wtmf_op_kind_name (UINT32_MAX), "?") == 0;
  for (uint32_t k = 0; k <= WTMF_OP_KIND_MAX + 1; k++)
    names_ok &= strcmp (wtmf_op_kind_name (k), names[k]) == 0;
  tap_ok (names_ok, "op kind names");
}

static void
test_round_trip (void)
{
  struct wtmf_manifest m;
  char err[256];
  size_t used = 0;
  int rc = wtmf_parse (good, good_len, &m, &used, err, sizeof err);
  tap_ok (rc == 0 && used == good_len && same_manifest (&m, &all),
          "every field of %d files and %d ops round trips (%zu bytes) %s",
          NFILES, NOPS, good_len, rc ? err : "");
  if (rc == 0) {
    tap_ok (wtmf_find_file (&m, 0xfffffffe) == &m.files[3]
            && wtmf_find_file (&m, 7) == &m.files[0]
            && wtmf_find_file (&m, 2) == NULL, "files are found by id");
    wtmf_free (&m);
    tap_ok (m.files == NULL && m.ops == NULL && m.nfiles == 0, "wtmf_free clears");
  }
  else {
    tap_ok (0, "files are found by id");
    tap_ok (0, "wtmf_free clears");
  }

  struct wtmf_buf b = { 0 };
  struct layout l;
  const struct selection none = { .checkpoint = 0 };
  encode (&b, &none, &l);
  rc = wtmf_parse (b.p, b.len, &m, &used, err, sizeof err);
  tap_ok (rc == 0 && used == WTMF_HEADER_SIZE + WTMF_TRAILER_SIZE
          && same_manifest (&m, &none), "an empty manifest round trips");
  if (rc == 0)
    wtmf_free (&m);
  wtmf_buf_free (&b);

  /* Nothing assumes the buffer is aligned. */
  unsigned char *odd = xmalloc (good_len + 3);
  memcpy (odd + 3, good, good_len);
  rc = wtmf_parse (odd + 3, good_len, &m, &used, err, sizeof err);
  tap_ok (rc == 0 && used == good_len && same_manifest (&m, &all),
          "a manifest at an odd address parses");
  if (rc == 0)
    wtmf_free (&m);
  free (odd);
}

/* Cut at every byte offset: always an error naming a byte no further than
 * the cut, never a crash, a read past the end or a leak. */
static void
test_truncation (void)
{
  size_t missed = 0, beyond = 0;
  for (size_t cut = 0; cut < good_len; cut++) {
    char err[256];
    size_t used;
    int rc = parse_copy (good, cut, err, sizeof err, &used);
    long long at = error_offset (err);
    if (rc != -1 || at < 0) {
      if (!missed++)
        fprintf (stderr, "# cut at %zu: rc %d: %s\n", cut, rc, err);
    }
    else if ((size_t) at > cut) {
      if (!beyond++)
        fprintf (stderr, "# cut at %zu: error at byte %lld: %s\n", cut, at, err);
    }
  }
  tap_ok (missed == 0, "a cut at each of %zu byte offsets is an error naming a byte "
          "(%zu missed)", good_len, missed);
  tap_ok (beyond == 0, "and the byte named is never past the cut (%zu were)", beyond);
}

/* Every bit of every byte: the CRC covers all that the field checks do not,
 * and the trailer's CRC and magic are checked themselves. */
static void
test_bit_flips (void)
{
  unsigned char *copy = xmalloc (good_len);
  memcpy (copy, good, good_len);
  size_t passed = 0;
  for (size_t at = 0; at < good_len; at++)
    for (int bit = 0; bit < 8; bit++) {
      copy[at] ^= (unsigned char) (1u << bit);
      char err[256];
      size_t used;
      int rc = parse_copy (copy, good_len, err, sizeof err, &used);
      copy[at] ^= (unsigned char) (1u << bit);
      if (rc != -1 || error_offset (err) < 0) {
        if (!passed++)
          fprintf (stderr, "# flip at byte %zu bit %d: rc %d: %s\n", at, bit, rc, err);
      }
    }
  free (copy);
  tap_ok (passed == 0, "a flipped bit at each of %zu bits is refused (%zu passed)",
          good_len * 8, passed);
}

/* One field changed and the CRC made right again. */
struct corruption {
  const char *what;
  size_t at;                    /* the field */
  int width;                    /* 1, 4 or 8 bytes */
  uint64_t value;
  long long named_at;           /* the byte the error must name; -1: any */
  const char *says;             /* text the error must hold; NULL: any */
};

static void
check_corruption (const struct corruption *c)
{
  unsigned char *copy = xmalloc (good_len);
  memcpy (copy, good, good_len);
  if (c->width == 1)
    copy[c->at] = (unsigned char) c->value;
  else if (c->width == 4)
    wt_put32 (copy + c->at, (uint32_t) c->value);
  else
    wt_put64 (copy + c->at, c->value);
  wt_put32 (copy + lay.trailer_at, wt_crc32c (copy, lay.trailer_at));
  char err[256];
  size_t used;
  int rc = parse_copy (copy, good_len, err, sizeof err, &used);
  long long at = error_offset (err);
  tap_ok (rc == -1 && at >= 0 && (c->named_at < 0 || at == c->named_at)
          && (!c->says || strstr (err, c->says)),
          "%s: refused: %s", c->what, err);
  free (copy);
}

static void
test_corrupt_fields (void)
{
  size_t big = lay.file_at[4], f513 = lay.file_at[3], empty = lay.file_at[0];
  size_t ext513 = lay.extents_at[3], extbig = lay.extents_at[4];
  size_t sops = lay.sector_ops_at[4] + 4 * 20;
  char op_past[64], no_file[64];
  snprintf (op_past, sizeof op_past, "file 1 sector 20: op %d is past the %d-op table",
            NOPS + 1, NOPS);
  snprintf (no_file, sizeof no_file, "op 3: no file with id 12345");
  const struct corruption cases[] = {
    { "magic", 0, 1, 'X', 0, "bad magic" },
    { "version 2", 8, 4, 2, 8, "unsupported version 2" },
    { "sector size 4096", 12, 4, 4096, 12, "unsupported sector size 4096" },
    { "hash id 0", 16, 4, 0, 16, "unsupported hash id 0" },
    { "file count 2^32-1", 20, 4, UINT32_MAX, 20, "file count 4294967295 cannot fit" },
    { "file count past what the bytes hold", 20, 4, good_len / 32 + 1, 20, "file count" },
    { "file count one more", 20, 4, NFILES + 1, -1, NULL },
    { "file count one less", 20, 4, NFILES - 1, -1, NULL },
    { "file count 0", 20, 4, 0, -1, NULL },
    { "op count 2^32-1", 24, 4, UINT32_MAX, 24, "op count 4294967295 cannot fit" },
    { "op count one more", 24, 4, NOPS + 1, -1, NULL },
    { "op count one less", 24, 4, NOPS - 1, -1, NULL },
    { "path length 0", f513 + 4, 4, 0, (long long) f513 + 4,
      "file 4294967294: path length 0 is not in 1..4096" },
    { "path length 4097", f513 + 4, 4, 4097, (long long) f513 + 4, "path length 4097" },
    { "path length 2^32-1", f513 + 4, 4, UINT32_MAX, (long long) f513 + 4,
      "path length 4294967295" },
    { "path length one more", f513 + 4, 4, 301, -1, NULL },
    { "path with a NUL", f513 + 32 + 9, 1, 0, (long long) f513 + 32, "path holds a NUL" },
    { "extent count 2^32-1", big + 24, 4, UINT32_MAX, (long long) big + 24,
      "file 1: 4294967295 extents cannot fit" },
    { "extent count one more", big + 24, 4, 4, -1, NULL },
    { "extent count one less", big + 24, 4, 2, -1, NULL },
    { "extent flags 8", ext513 + 32 + 24, 4, 8, (long long) ext513 + 32 + 24,
      "file 4294967294 extent 1: unknown flags 0x8" },
    { "extent flags 4: DELALLOC alone", ext513 + 32 + 24, 4, 4, (long long) ext513 + 32 + 24,
      "file 4294967294 extent 1: DELALLOC without UNMAPPABLE" },
    { "extent flags 2^31", extbig + 24, 4, 1u << 31, (long long) extbig + 24,
      "unknown flags 0x80000000" },
    { "extent length 0", extbig + 64 + 16, 8, 0, (long long) extbig + 64,
      "file 1 extent 2: empty or overflowing range" },
    { "extent logical overflow", extbig + 8 * 0, 8, UINT64_MAX - 100, (long long) extbig,
      "empty or overflowing" },
    { "extent physical overflow", extbig + 32 + 8, 8, UINT64_MAX - 4095,
      (long long) extbig + 32, "empty or overflowing" },
    { "file size 2^64-1", empty + 16, 8, UINT64_MAX, (long long) empty + 16,
      "size 18446744073709551615 needs more sector entries" },
    { "file size 2^64-511", empty + 16, 8, UINT64_MAX - 510, (long long) empty + 16,
      "needs more sector entries" },
    { "file size 2^63", big + 16, 8, 1ull << 63, (long long) big + 16,
      "needs more sector entries" },
    { "file size one sector more", big + 16, 8, 4096 * 3 + 7 + 512, -1, NULL },
    { "sector op past the table", sops, 4, NOPS + 1, (long long) sops, op_past },
    { "sector op 2^32-1", sops, 4, UINT32_MAX, (long long) sops, "op 4294967295 is past" },
    { "op kind 0", lay.op_at[0] + 12, 4, 0, (long long) lay.op_at[0] + 12,
      "op 1: unknown kind 0" },
    { "op kind past the last", lay.op_at[8] + 12, 4, WTMF_OP_KIND_MAX + 1,
      (long long) lay.op_at[8] + 12, "op 9: unknown kind 21" },
    { "op kind 2^32-1", lay.op_at[4] + 12, 4, UINT32_MAX, (long long) lay.op_at[4] + 12,
      "op 5: unknown kind 4294967295" },
    { "op file id that does not exist", lay.op_at[2] + 8, 4, 12345,
      (long long) lay.op_at[2] + 8, no_file },
    { "a file id given twice", lay.file_at[2], 4, 3, (long long) lay.file_at[2],
      "file id 3 appears twice" },
    { "the first file id given again last", lay.file_at[4], 4, 7,
      (long long) lay.file_at[4], "file id 7 appears twice" },
    { "op file id below every file's", lay.op_at[0] + 8, 4, 0,
      (long long) lay.op_at[0] + 8, "op 1: no file with id 0" },
    { "op file id above every file's", lay.op_at[8] + 8, 4, UINT32_MAX,
      (long long) lay.op_at[8] + 8, "op 9: no file with id 4294967295" },
    { "trailer magic", lay.trailer_at + 4, 1, 'X', (long long) lay.trailer_at + 4,
      "bad trailer magic" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_corruption (&cases[i]);

  /* The CRC itself, left wrong. */
  unsigned char *copy = xmalloc (good_len);
  memcpy (copy, good, good_len);
  copy[lay.op_at[3] + 30] ^= 0x10;      /* high bytes of a length: no field check */
  char err[256];
  size_t used;
  int rc = parse_copy (copy, good_len, err, sizeof err, &used);
  tap_ok (rc == -1 && error_offset (err) == (long long) lay.trailer_at
          && strstr (err, "checksum mismatch"),
          "a change only the CRC sees is named at the trailer: %s", err);
  free (copy);
}

/* Two files with one id, where no op names the id that went missing: only
 * the duplicate check can refuse it. */
static void
test_duplicate_id (void)
{
  const struct selection sel = { 2, 1, { 1, 0 }, { 2 }, 0 };
  struct wtmf_buf b = { 0 };
  struct layout l;
  encode (&b, &sel, &l);
  char err[256];
  size_t used;
  int rc_before = parse_copy (b.p, b.len, err, sizeof err, &used);
  wt_put32 (b.p + l.file_at[1], files[1].id);
  wt_put32 (b.p + l.trailer_at, wt_crc32c (b.p, l.trailer_at));
  int rc = parse_copy (b.p, b.len, err, sizeof err, &used);
  tap_ok (rc_before == 0 && rc == -1 && error_offset (err) == (long long) l.file_at[1]
          && strstr (err, "file id 3 appears twice (first at byte 40)"),
          "a file id given twice is refused at the second: %s", err);
  wtmf_buf_free (&b);
}

/* Manifests back to back (one per checkpoint in a MANIFEST stream): each
 * parse says how many bytes it used, and the next starts there. */
static void
test_back_to_back (void)
{
  struct wtmf_buf second = { 0 };
  struct layout l;
  /* Two files, and ops on them only: sector ops are 0 in both. */
  const struct selection two = { 2, 2, { 1, 0 }, { 2, 7 }, 2 };
  encode (&second, &two, &l);
  size_t total = good_len + second.len + 5;
  unsigned char *buf = xmalloc (total);
  memcpy (buf, good, good_len);
  memcpy (buf + good_len, second.p, second.len);
  memset (buf + good_len + second.len, 0, 5);

  struct wtmf_manifest m;
  char err[256];
  size_t used1 = 0, used2 = 0, used3 = 0;
  int rc1 = wtmf_parse (buf, total, &m, &used1, err, sizeof err);
  bool first = rc1 == 0 && used1 == good_len && same_manifest (&m, &all);
  if (rc1 == 0)
    wtmf_free (&m);
  int rc2 = rc1 ? -1 : wtmf_parse (buf + used1, total - used1, &m, &used2, err, sizeof err);
  bool second_ok = rc2 == 0 && used2 == second.len && same_manifest (&m, &two);
  if (rc2 == 0)
    wtmf_free (&m);
  tap_ok (first && second_ok, "two manifests back to back parse one after the other "
          "(%zu then %zu bytes)", used1, used2);
  int rc3 = parse_copy (buf + used1 + used2, 5, err, sizeof err, &used3);
  tap_ok (rc3 == -1 && strstr (err, "truncated in the header"),
          "the 5 bytes after them are not a manifest: %s", err);
  free (buf);
  wtmf_buf_free (&second);
}

/* Paths: WTMF_MAX_PATH bytes are a file's path, one more is refused. */
static void
test_path_limit (void)
{
  bool ok[2] = { false, false };
  char err[256] = "";
  for (int extra = 0; extra < 2; extra++) {
    size_t plen = WTMF_MAX_PATH + (size_t) extra;
    char *p = xmalloc (plen + 1);
    memset (p, 'p', plen);
    p[0] = '/';
    p[plen] = '\0';
    uint64_t hash = 1;
    uint32_t op = 0;
    struct wtmf_extent e = { 0, 4096, 512, 0 };
    struct wtmf_file f = { .id = 1, .path = p, .size = 512, .nextents = 1, .extents = &e,
                           .nsectors = 1, .hashes = &hash, .ops = &op };
    struct wtmf_buf b = { 0 };
    wtmf_buf_header (&b, 1, 0, 0);
    wtmf_buf_file (&b, &f);
    struct wtmf_manifest m;
    size_t used;
    int rc = wtmf_buf_finish (&b) == 0 ? wtmf_parse (b.p, b.len, &m, &used, err, sizeof err) : -2;
    if (rc == 0) {
      ok[extra] = extra == 0 && strlen (m.files[0].path) == plen;
      wtmf_free (&m);
    } else {
      ok[extra] = extra == 1 && rc == -1 && strstr (err, "path length 4097 is not in 1..4096");
    }
    wtmf_buf_free (&b);
    free (p);
  }
  tap_ok (ok[0] && ok[1], "a path of %d bytes is read, one of %d refused: %s", WTMF_MAX_PATH,
          WTMF_MAX_PATH + 1, err);
}

/* Look-ups by id on a manifest of MANY_FILES files, as the crash oracle
 * makes one per file of a checkpoint: a scan each (what wtmf_find_file
 * was) takes minutes of CPU here, and a timer of CPU time (not wall time:
 * a loaded machine does not make it fire) ends the test long before.  The
 * index takes a fraction of a second. */
#define MANY_FILES 600000u
#define MANY_FILES_CPU_SECONDS 20

static void
test_many_files (void)
{
  struct wtmf_buf b = { 0 };
  char path[32];
  wtmf_buf_header (&b, MANY_FILES, 0, 0);
  for (uint32_t i = 0; i < MANY_FILES; i++) {
    /* Ids in an order of their own: 7 is prime to MANY_FILES. */
    uint32_t id = (uint32_t) ((uint64_t) i * 7 % MANY_FILES) * 2 + 1;
    snprintf (path, sizeof path, "/m/%" PRIu32, id);
    struct wtmf_file f = { .id = id, .path = path };
    wtmf_buf_file (&b, &f);
  }
  struct wtmf_manifest m;
  char err[256] = "";
  size_t used;
  int rc = wtmf_buf_finish (&b) == 0 ? wtmf_parse (b.p, b.len, &m, &used, err, sizeof err) : -2;
  wtmf_buf_free (&b);
  if (rc != 0) {
    tap_ok (0, "a manifest of %u files parses: %s", MANY_FILES, err);
    return;
  }
  struct itimerval limit = { .it_value = { MANY_FILES_CPU_SECONDS, 0 } }, off = { 0 };
  setitimer (ITIMER_VIRTUAL, &limit, NULL);   /* SIGVTALRM ends the test */
  uint32_t found = 0, wrong = 0, absent = 0;
  for (uint32_t i = 0; i < MANY_FILES; i++) {
    const struct wtmf_file *f = wtmf_find_file (&m, m.files[i].id);
    found += f == &m.files[i];
    /* Even ids are nobody's, nor is one past the last. */
    wrong += wtmf_find_file (&m, m.files[i].id + 1) != NULL;
  }
  absent = wtmf_find_file (&m, 0) == NULL && wtmf_find_file (&m, UINT32_MAX) == NULL;
  setitimer (ITIMER_VIRTUAL, &off, NULL);
  tap_ok (found == MANY_FILES && wrong == 0 && absent,
          "each of %u files is found by its id, no other id finds one (%" PRIu32
          " found, %" PRIu32 " wrong), in under %d s of CPU", MANY_FILES, found, wrong,
          MANY_FILES_CPU_SECONDS);
  wtmf_free (&m);
}

int
main (void)
{
  make_files ();
  struct wtmf_buf b = { 0 };
  if (encode (&b, &all, &lay) != 0) {
    fprintf (stderr, "encode: out of memory\n");
    return 2;
  }
  good = b.p;
  good_len = b.len;

  tap_plan (57);
  test_helpers ();
  test_round_trip ();
  test_truncation ();
  test_bit_flips ();
  test_corrupt_fields ();
  test_duplicate_id ();
  test_back_to_back ();
  test_path_limit ();
  test_many_files ();

  wtmf_buf_free (&b);
  free_files ();
  return tap_done ();
}
