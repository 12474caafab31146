/* Manifest encoding (the guest) and checked decoding (the host). */
#include "manifest.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "le.h"
#include "search.h"
#include "sector-hash.h"

const char *
wtmf_op_kind_name (uint32_t kind)
{
  static const char *const names[] = {
    [WTMF_OP_MMAP_STORE] = "mmap-store", [WTMF_OP_PWRITE] = "pwrite",
    [WTMF_OP_TRUNCATE] = "truncate", [WTMF_OP_PUNCH] = "punch",
    [WTMF_OP_MSYNC] = "msync", [WTMF_OP_FSYNC] = "fsync",
    [WTMF_OP_FALLOCATE] = "fallocate", [WTMF_OP_MUNMAP] = "munmap",
    [WTMF_OP_DIRECT_WRITE] = "direct-write", [WTMF_OP_ZERO] = "zero",
    [WTMF_OP_SYNC_RANGE] = "sync-range", [WTMF_OP_FDATASYNC] = "fdatasync",
    [WTMF_OP_FADVISE] = "fadvise", [WTMF_OP_COLLAPSE] = "collapse",
    [WTMF_OP_INSERT] = "insert", [WTMF_OP_COPY] = "copy",
    [WTMF_OP_SYNCFS] = "syncfs", [WTMF_OP_DROP_CACHES] = "drop-caches",
    [WTMF_OP_CLONE] = "clone", [WTMF_OP_DEDUPE] = "dedupe",
  };
  if (kind < sizeof names / sizeof names[0] && names[kind])
    return names[kind];
  return "?";
}

uint64_t
wtmf_sectors_of (uint64_t size)
{
  /* Not (size + 511) / 512: a hostile size near 2^64 would wrap to a few
   * sectors and pass every later check. */
  return size / WT_SECTOR_SIZE + (size % WT_SECTOR_SIZE != 0);
}

/* Encoding. */

static unsigned char *
wtmf_buf_grow (struct wtmf_buf *b, size_t n)
{
  if (b->failed)
    return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    unsigned char *np = realloc (b->p, cap);
    if (!np) {
      b->failed = 1;
      return NULL;
    }
    b->p = np;
    b->cap = cap;
  }
  unsigned char *at = b->p + b->len;
  memset (at, 0, n);
  b->len += n;
  return at;
}

static void
wtmf_buf_bytes (struct wtmf_buf *b, const void *src, size_t n)
{
  unsigned char *at = wtmf_buf_grow (b, wt_align8 (n));
  if (at && n)
    memcpy (at, src, n);
}

void
wtmf_buf_header (struct wtmf_buf *b, uint32_t nfiles, uint32_t nops,
                 uint32_t checkpoint)
{
  unsigned char *p = wtmf_buf_grow (b, WTMF_HEADER_SIZE);
  if (!p)
    return;
  memcpy (p, WTMF_MAGIC, 8);
  wt_put32 (p + 8, WTMF_VERSION);
  wt_put32 (p + 12, WT_SECTOR_SIZE);
  wt_put32 (p + 16, WT_HASH_XXH3_64);
  wt_put32 (p + 20, nfiles);
  wt_put32 (p + 24, nops);
  wt_put32 (p + 28, checkpoint);
}

void
wtmf_buf_header_cold (struct wtmf_buf *b, uint32_t nfiles)
{
  size_t at = b->len;
  wtmf_buf_header (b, nfiles, 0, 0);
  if (!b->failed)
    wt_put32 (b->p + at + 32, WTMF_FLAG_COLD);
}

void
wtmf_buf_file (struct wtmf_buf *b, const struct wtmf_file *f)
{
  size_t plen = strlen (f->path);
  unsigned char *p = wtmf_buf_grow (b, WTMF_FILE_FIXED);
  if (!p)
    return;
  wt_put32 (p, f->id);
  wt_put32 (p + 4, (uint32_t) plen);
  wt_put64 (p + 8, f->inode);
  wt_put64 (p + 16, f->size);
  wt_put32 (p + 24, f->nextents);
  wt_put32 (p + 28, f->error);
  wtmf_buf_bytes (b, f->path, plen);
  for (uint32_t i = 0; i < f->nextents; i++) {
    const struct wtmf_extent *e = &f->extents[i];
    if (!(p = wtmf_buf_grow (b, WTMF_EXTENT_SIZE)))
      return;
    wt_put64 (p, e->logical);
    wt_put64 (p + 8, e->physical);
    wt_put64 (p + 16, e->length);
    wt_put32 (p + 24, e->flags);
  }
  uint64_t n = wtmf_sectors_of (f->size);
  if ((p = wtmf_buf_grow (b, 8 * n)))
    wt_put64_array (p, f->hashes, n);
  if ((p = wtmf_buf_grow (b, wt_align8 (4 * n))))
    wt_put32_array (p, f->ops, n);
}

void
wtmf_buf_op (struct wtmf_buf *b, const struct wtmf_op *op)
{
  unsigned char *p = wtmf_buf_grow (b, WTMF_OP_SIZE);
  if (!p)
    return;
  wt_put64 (p, op->guest_ns);
  wt_put32 (p + 8, op->file_id);
  wt_put32 (p + 12, op->kind);
  wt_put64 (p + 16, op->offset);
  wt_put64 (p + 24, op->length);
}

int
wtmf_buf_finish (struct wtmf_buf *b)
{
  if (b->failed)
    return -1;
  uint32_t crc = wt_crc32c (b->p, b->len);
  unsigned char *p = wtmf_buf_grow (b, WTMF_TRAILER_SIZE);
  if (!p)
    return -1;
  wt_put32 (p, crc);
  memcpy (p + 4, WTMF_TRAILER_MAGIC, 4);
  return 0;
}

void
wtmf_buf_free (struct wtmf_buf *b)
{
  free (b->p);
  memset (b, 0, sizeof *b);
}

/* Decoding: a cursor that refuses to read past the end. */

struct wtmf_cursor {
  const unsigned char *buf;
  size_t len;
  size_t pos;
  char *err;
  size_t errlen;
};

static int
wtmf_bad (struct wtmf_cursor *c, size_t at, const char *fmt, ...)
{
  char what[200];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  snprintf (c->err, c->errlen, "manifest byte %zu: %s", at, what);
  return -1;
}

/* Returns a pointer to n bytes at the cursor and advances, or NULL with the
 * error set naming what was being read. */
static const unsigned char *
wtmf_take (struct wtmf_cursor *c, uint64_t n, const char *what)
{
  if (n > c->len - c->pos) {
    wtmf_bad (c, c->pos, "truncated in %s (%" PRIu64 " bytes needed, %zu left)",
              what, n, c->len - c->pos);
    return NULL;
  }
  const unsigned char *p = c->buf + c->pos;
  c->pos += n;
  return p;
}

static int
wtmf_parse_extents (struct wtmf_cursor *c, struct wtmf_file *f)
{
  f->extents = calloc (f->nextents ? f->nextents : 1, sizeof *f->extents);
  if (!f->extents)
    return wtmf_bad (c, c->pos, "out of memory for %" PRIu32 " extents", f->nextents);
  for (uint32_t i = 0; i < f->nextents; i++) {
    size_t at = c->pos;
    const unsigned char *p = wtmf_take (c, WTMF_EXTENT_SIZE, "an extent");
    if (!p)
      return -1;
    struct wtmf_extent *e = &f->extents[i];
    e->logical = wt_get64 (p);
    e->physical = wt_get64 (p + 8);
    e->length = wt_get64 (p + 16);
    e->flags = wt_get32 (p + 24);
    if (e->flags & ~WTMF_EXT_ALL)
      return wtmf_bad (c, at + 24, "file %" PRIu32 " extent %" PRIu32
                       ": unknown flags 0x%" PRIx32, f->id, i, e->flags);
    if ((e->flags & WTMF_EXT_DELALLOC) && !(e->flags & WTMF_EXT_UNMAPPABLE))
      return wtmf_bad (c, at + 24, "file %" PRIu32 " extent %" PRIu32
                       ": DELALLOC without UNMAPPABLE", f->id, i);
    if (e->length == 0 || e->logical + e->length < e->logical
        || e->physical + e->length < e->physical)
      return wtmf_bad (c, at, "file %" PRIu32 " extent %" PRIu32
                       ": empty or overflowing range", f->id, i);
  }
  return 0;
}

/* Sector op numbers index the op table, whose size the header gave. */
static int
wtmf_check_sector_ops (struct wtmf_cursor *c, const struct wtmf_file *f,
                       size_t ops_at, uint32_t nops)
{
  for (uint64_t s = 0; s < f->nsectors; s++)
    if (f->ops[s] > nops)
      return wtmf_bad (c, ops_at + 4 * s, "file %" PRIu32 " sector %" PRIu64
                       ": op %" PRIu32 " is past the %" PRIu32 "-op table",
                       f->id, s, f->ops[s], nops);
  return 0;
}

static int
wtmf_parse_file (struct wtmf_cursor *c, struct wtmf_file *f, uint32_t nops,
                 bool cold)
{
  size_t at = c->pos;
  const unsigned char *p = wtmf_take (c, WTMF_FILE_FIXED, "a file entry");
  if (!p)
    return -1;
  f->id = wt_get32 (p);
  uint32_t plen = wt_get32 (p + 4);
  f->inode = wt_get64 (p + 8);
  f->size = wt_get64 (p + 16);
  f->nextents = wt_get32 (p + 24);
  f->error = wt_get32 (p + 28);
  if (f->error && !cold)
    return wtmf_bad (c, at + 28, "file %" PRIu32 ": error %" PRIu32
                     " in a manifest not flagged cold", f->id, f->error);
  if (plen == 0 || plen > WTMF_MAX_PATH)
    return wtmf_bad (c, at + 4, "file %" PRIu32 ": path length %" PRIu32
                     " is not in 1..%d", f->id, plen, WTMF_MAX_PATH);
  if (f->nextents > (c->len - c->pos) / WTMF_EXTENT_SIZE)
    return wtmf_bad (c, at + 24, "file %" PRIu32 ": %" PRIu32
                     " extents cannot fit in what is left", f->id, f->nextents);
  if (!(p = wtmf_take (c, wt_align8 (plen), "a path")))
    return -1;
  if (memchr (p, '\0', plen))
    return wtmf_bad (c, c->pos - wt_align8 (plen), "file %" PRIu32
                     ": path holds a NUL byte", f->id);
  f->path = strndup ((const char *) p, plen);
  if (!f->path)
    return wtmf_bad (c, at, "out of memory");
  if (wtmf_parse_extents (c, f) == -1)
    return -1;
  f->nsectors = wtmf_sectors_of (f->size);
  if (f->nsectors > (c->len - c->pos) / 12)
    return wtmf_bad (c, at + 16, "file %" PRIu32 ": size %" PRIu64
                     " needs more sector entries than are left", f->id, f->size);
  const unsigned char *h = wtmf_take (c, 8 * f->nsectors, "sector hashes");
  size_t ops_at = c->pos;
  const unsigned char *o = h ? wtmf_take (c, wt_align8 (4 * f->nsectors), "sector ops") : NULL;
  if (!o)
    return -1;
  f->hashes = malloc (8 * f->nsectors + 8);
  f->ops = malloc (4 * f->nsectors + 4);
  if (!f->hashes || !f->ops)
    return wtmf_bad (c, at, "out of memory for %" PRIu64 " sectors", f->nsectors);
  wt_get64_array (f->hashes, h, f->nsectors);
  wt_get32_array (f->ops, o, f->nsectors);
  /* Cold: the u32s are errnos, not op numbers. */
  return cold ? 0 : wtmf_check_sector_ops (c, f, ops_at, nops);
}

/* A file's id and the byte its entry starts at. Sorted by id, they find an
 * id given twice (which would make ops and look-ups resolve to whichever
 * file comes first), let each op find its file without a pass over all
 * the files, and become the manifest's index by id (m->by_id). */
struct wtmf_id_at {
  uint32_t id;
  uint32_t index;               /* in m->files */
  size_t at;
};

static int
wtmf_cmp_id_at (const void *a, const void *b)
{
  const struct wtmf_id_at *x = a, *y = b;
  if (x->id != y->id)
    return x->id < y->id ? -1 : 1;
  return (x->at > y->at) - (x->at < y->at);
}

static int
wtmf_check_unique_ids (struct wtmf_cursor *c, struct wtmf_id_at *ids, uint32_t n)
{
  qsort (ids, n, sizeof *ids, wtmf_cmp_id_at);
  for (uint32_t i = 1; i < n; i++)
    if (ids[i].id == ids[i - 1].id)
      return wtmf_bad (c, ids[i].at, "file id %" PRIu32 " appears twice (first at byte %zu)",
                       ids[i].id, ids[i - 1].at);
  return 0;
}

/* m->by_id from the ids sorted by wtmf_check_unique_ids. */
static int
wtmf_index_ids (struct wtmf_cursor *c, struct wtmf_manifest *m,
                const struct wtmf_id_at *sorted)
{
  m->by_id = malloc ((m->nfiles ? m->nfiles : 1) * sizeof *m->by_id);
  if (!m->by_id)
    return wtmf_bad (c, 20, "out of memory for the index of %" PRIu32 " files", m->nfiles);
  for (uint32_t i = 0; i < m->nfiles; i++)
    m->by_id[i] = sorted[i].index;
  return 0;
}

static int
wtmf_parse_ops (struct wtmf_cursor *c, struct wtmf_manifest *m)
{
  m->ops = calloc (m->nops ? m->nops : 1, sizeof *m->ops);
  if (!m->ops)
    return wtmf_bad (c, c->pos, "out of memory for %" PRIu32 " ops", m->nops);
  for (uint32_t i = 0; i < m->nops; i++) {
    size_t at = c->pos;
    const unsigned char *p = wtmf_take (c, WTMF_OP_SIZE, "an op");
    if (!p)
      return -1;
    struct wtmf_op *op = &m->ops[i];
    op->guest_ns = wt_get64 (p);
    op->file_id = wt_get32 (p + 8);
    op->kind = wt_get32 (p + 12);
    op->offset = wt_get64 (p + 16);
    op->length = wt_get64 (p + 24);
    if (op->kind < 1 || op->kind > WTMF_OP_KIND_MAX)
      return wtmf_bad (c, at + 12, "op %" PRIu32 ": unknown kind %" PRIu32,
                       i + 1, op->kind);
    if (!wtmf_find_file (m, op->file_id))
      return wtmf_bad (c, at + 8, "op %" PRIu32 ": no file with id %" PRIu32,
                       i + 1, op->file_id);
  }
  return 0;
}

int
wtmf_parse (const unsigned char *buf, size_t len, struct wtmf_manifest *m,
            size_t *used, char *err, size_t errlen)
{
  struct wtmf_cursor c = { buf, len, 0, err, errlen };
  struct wtmf_id_at *ids = NULL;
  memset (m, 0, sizeof *m);
  const unsigned char *p = wtmf_take (&c, WTMF_HEADER_SIZE, "the header");
  if (!p)
    return -1;
  if (memcmp (p, WTMF_MAGIC, 8) != 0)
    return wtmf_bad (&c, 0, "bad magic");
  m->version = wt_get32 (p + 8);
  m->sector_size = wt_get32 (p + 12);
  m->hash_id = wt_get32 (p + 16);
  m->nfiles = wt_get32 (p + 20);
  m->nops = wt_get32 (p + 24);
  m->checkpoint = wt_get32 (p + 28);
  m->flags = wt_get32 (p + 32);
  if (m->flags & ~WTMF_FLAG_ALL)
    return wtmf_bad (&c, 32, "unknown flags 0x%" PRIx32, m->flags);
  bool cold = m->flags & WTMF_FLAG_COLD;
  if (cold && (m->nops || m->checkpoint))
    return wtmf_bad (&c, 24, "a cold manifest with %" PRIu32 " ops and checkpoint %" PRIu32
                     " (both must be 0)", m->nops, m->checkpoint);
  if (m->version != WTMF_VERSION)
    return wtmf_bad (&c, 8, "unsupported version %" PRIu32, m->version);
  if (m->sector_size != WT_SECTOR_SIZE)
    return wtmf_bad (&c, 12, "unsupported sector size %" PRIu32, m->sector_size);
  if (m->hash_id != WT_HASH_XXH3_64)
    return wtmf_bad (&c, 16, "unsupported hash id %" PRIu32, m->hash_id);
  if (m->nfiles > len / WTMF_FILE_FIXED)
    return wtmf_bad (&c, 20, "file count %" PRIu32 " cannot fit in %zu bytes",
                     m->nfiles, len);
  if (m->nops > len / WTMF_OP_SIZE)
    return wtmf_bad (&c, 24, "op count %" PRIu32 " cannot fit in %zu bytes",
                     m->nops, len);
  m->files = calloc (m->nfiles ? m->nfiles : 1, sizeof *m->files);
  if (!m->files)
    return wtmf_bad (&c, 20, "out of memory");
  ids = malloc ((m->nfiles ? m->nfiles : 1) * sizeof *ids);
  if (!ids) {
    wtmf_bad (&c, 20, "out of memory");
    goto fail;
  }
  for (uint32_t i = 0; i < m->nfiles; i++) {
    ids[i].at = c.pos;
    if (wtmf_parse_file (&c, &m->files[i], m->nops, cold) == -1)
      goto fail;
    ids[i].id = m->files[i].id;
    ids[i].index = i;
  }
  if (wtmf_check_unique_ids (&c, ids, m->nfiles) == -1
      || wtmf_index_ids (&c, m, ids) == -1 || wtmf_parse_ops (&c, m) == -1)
    goto fail;
  size_t crc_at = c.pos;
  if (!(p = wtmf_take (&c, WTMF_TRAILER_SIZE, "the trailer")))
    goto fail;
  if (memcmp (p + 4, WTMF_TRAILER_MAGIC, 4) != 0) {
    wtmf_bad (&c, crc_at + 4, "bad trailer magic (counts in the header do not match the contents?)");
    goto fail;
  }
  uint32_t want = wt_get32 (p), got = wt_crc32c (buf, crc_at);
  if (want != got) {
    wtmf_bad (&c, crc_at, "checksum mismatch (stored 0x%08x, computed 0x%08x)", want, got);
    goto fail;
  }
  *used = c.pos;
  free (ids);
  return 0;
 fail:
  free (ids);
  wtmf_free (m);
  return -1;
}

void
wtmf_free (struct wtmf_manifest *m)
{
  for (uint32_t i = 0; m->files && i < m->nfiles; i++) {
    free (m->files[i].path);
    free (m->files[i].extents);
    free (m->files[i].hashes);
    free (m->files[i].ops);
  }
  free (m->files);
  free (m->ops);
  free (m->by_id);
  memset (m, 0, sizeof *m);
}

/* The id of the i-th file in id order. */
static uint64_t
wtmf_id_at (size_t i, const void *ctx)
{
  const struct wtmf_manifest *m = ctx;
  return m->files[m->by_id[i]].id;
}

const struct wtmf_file *
wtmf_find_file (const struct wtmf_manifest *m, uint32_t id)
{
  uint32_t n = m->by_id ? m->nfiles : 0;
  size_t lo = wt_lower_bound (0, n, id, wtmf_id_at, m);
  if (lo == n)
    return NULL;
  const struct wtmf_file *f = &m->files[m->by_id[lo]];
  return f->id == id ? f : NULL;
}
