/* Where the bytes of IN_IMAGE records are (image-resolve.h). */
#include "image-resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "image-apply.h"
#include "sector-hash.h"

/* Where a piece of an IN_IMAGE record's range has its bytes. */
enum wt_piece_kind {
  WT_PIECE_SAVED,               /* in a SAVED record's payload: src = log byte */
  WT_PIECE_FINAL,               /* in the final image, at the same offset */
  WT_PIECE_LOST,                /* overwritten by seq src, never saved */
};

struct wt_piece {
  uint64_t rec;                 /* index into recs */
  uint64_t offset, length;      /* on the disk */
  uint64_t src;
  enum wt_piece_kind kind;
};

struct wt_in_image {
  uint64_t seq, offset, length;
  uint64_t first_piece, npieces; /* in pieces, sorted by offset, gapless */
};

/* A range of the disk whose current bytes are recs[rec]'s: a node of a
 * treap keyed by start (owned ranges never overlap), so every change of
 * the map costs O(log n) expected, whatever the disk's size. */
struct wt_owned {
  uint64_t start, end;
  uint64_t rec;
  uint64_t prio;
  struct wt_owned *left, *right;
};

struct wt_resolve {
  char *log_path;
  char *final_path;
  int log_fd;
  int final_fd;                 /* -1: none */
  struct wt_in_image *recs;
  uint64_t nrecs, recs_cap;
  struct wt_piece *pieces;
  uint64_t npieces, pieces_cap;
  struct wt_owned *owners;      /* the treap's root */
  uint64_t prio_state;          /* xorshift state of the priorities */
  uint64_t first_final_seq;
};

bool
wt_record_in_image (const struct wtlog_record *rec)
{
  return rec->type == WTLOG_WRITE && (rec->flags & WTLOG_F_IN_IMAGE)
    && !(rec->flags & WTLOG_F_FAILED);
}

/* Growing arrays: 0, or -1 when out of memory. */
static int
grow (void **p, uint64_t *cap, uint64_t want, size_t elem)
{
  if (want <= *cap)
    return 0;
  uint64_t n = *cap ? *cap * 2 : 64;
  while (n < want)
    n *= 2;
  void *np = realloc (*p, n * elem);
  if (!np)
    return -1;
  *p = np;
  *cap = n;
  return 0;
}

static int
add_piece (struct wt_resolve *r, uint64_t rec, uint64_t offset, uint64_t length,
           enum wt_piece_kind kind, uint64_t src)
{
  if (grow ((void **) &r->pieces, &r->pieces_cap, r->npieces + 1,
            sizeof *r->pieces) == -1)
    return -1;
  r->pieces[r->npieces++] = (struct wt_piece) { rec, offset, length, src, kind };
  return 0;
}

/* The treap: split into the ranges starting before key and the rest;
 * merge two treaps whose ranges all start in order. */
static void
treap_split (struct wt_owned *t, uint64_t key, struct wt_owned **lo,
             struct wt_owned **hi)
{
  if (!t) {
    *lo = *hi = NULL;
  }
  else if (t->start < key) {
    treap_split (t->right, key, &t->right, hi);
    *lo = t;
  }
  else {
    treap_split (t->left, key, lo, &t->left);
    *hi = t;
  }
}

static struct wt_owned *
treap_merge (struct wt_owned *a, struct wt_owned *b)
{
  if (!a || !b)
    return a ? a : b;
  if (a->prio > b->prio) {
    a->right = treap_merge (a->right, b);
    return a;
  }
  b->left = treap_merge (a, b->left);
  return b;
}

static void
treap_free (struct wt_owned *t)
{
  if (!t)
    return;
  treap_free (t->left);
  treap_free (t->right);
  free (t);
}

/* Takes the range that starts last out of t (NULL when t is empty). */
static struct wt_owned *
treap_pop_last (struct wt_owned **t)
{
  if (!*t)
    return NULL;
  if ((*t)->right)
    return treap_pop_last (&(*t)->right);
  struct wt_owned *last = *t;
  *t = last->left;
  last->left = NULL;
  return last;
}

static struct wt_owned *
owned_new (struct wt_resolve *r, uint64_t start, uint64_t end, uint64_t rec)
{
  struct wt_owned *o = calloc (1, sizeof *o);
  if (!o)
    return NULL;
  r->prio_state ^= r->prio_state << 13;
  r->prio_state ^= r->prio_state >> 7;
  r->prio_state ^= r->prio_state << 17;
  *o = (struct wt_owned) { start, end, rec, r->prio_state, NULL, NULL };
  return o;
}

/* Puts o (not overlapping any owned range) into the map. */
static void
own_node (struct wt_resolve *r, struct wt_owned *o)
{
  struct wt_owned *lo, *hi;
  treap_split (r->owners, o->start, &lo, &hi);
  r->owners = treap_merge (treap_merge (lo, o), hi);
}

static int
own (struct wt_resolve *r, uint64_t start, uint64_t end, uint64_t rec)
{
  struct wt_owned *o = owned_new (r, start, end, rec);
  if (!o)
    return -1;
  own_node (r, o);
  return 0;
}

/* What ending the ownership of [start, end) does to one owned range o that
 * overlaps it: the overlap becomes a piece of o's record (see disown), the
 * parts of o outside the range stay owned (in *keep, at most two). */
static int
disown_one (struct wt_resolve *r, struct wt_owned *o, uint64_t start, uint64_t end,
            enum wt_piece_kind kind, uint64_t saved_at, uint64_t by,
            struct wt_owned **keep, int *nkeep)
{
  uint64_t from = o->start > start ? o->start : start;
  uint64_t to = o->end < end ? o->end : end;
  uint64_t src = kind == WT_PIECE_SAVED ? saved_at + (from - start) : by;
  int rc = add_piece (r, o->rec, from, to - from, kind, src);
  if (rc == 0 && o->start < from) {
    keep[(*nkeep)++] = owned_new (r, o->start, from, o->rec);
    rc = keep[*nkeep - 1] ? 0 : -1;
  }
  if (rc == 0 && to < o->end) {
    keep[(*nkeep)++] = owned_new (r, to, o->end, o->rec);
    rc = keep[*nkeep - 1] ? 0 : -1;
  }
  free (o);
  return rc;
}

/* Every range of the treap t, in order, through disown_one; t is freed. */
static int
disown_all (struct wt_resolve *r, struct wt_owned *t, uint64_t start, uint64_t end,
            enum wt_piece_kind kind, uint64_t saved_at, uint64_t by,
            struct wt_owned **keep, int *nkeep)
{
  if (!t)
    return 0;
  struct wt_owned *left = t->left, *right = t->right;
  int rc = disown_all (r, left, start, end, kind, saved_at, by, keep, nkeep);
  if (rc == 0)
    rc = disown_one (r, t, start, end, kind, saved_at, by, keep, nkeep);
  else
    free (t);
  if (rc == 0)
    return disown_all (r, right, start, end, kind, saved_at, by, keep, nkeep);
  treap_free (right);
  return rc;
}

/* Ends the ownership of [start, end): each owned piece of it becomes a
 * piece of its record, its bytes in the SAVED record whose payload holds
 * disk byte `start` at log byte saved_at (kind SAVED), or lost to seq `by`.
 * Only the range starting last before `start` can reach into it; all
 * ranges starting inside it overlap it. */
static int
disown (struct wt_resolve *r, uint64_t start, uint64_t end,
        enum wt_piece_kind kind, uint64_t saved_at, uint64_t by)
{
  struct wt_owned *before, *inside, *after, *keep[4] = { NULL };
  int nkeep = 0, rc = 0;
  if (start >= end)
    return 0;
  treap_split (r->owners, start, &before, &inside);
  treap_split (inside, end, &inside, &after);
  struct wt_owned *last = treap_pop_last (&before);
  if (last && last->end > start)
    rc = disown_one (r, last, start, end, kind, saved_at, by, keep, &nkeep);
  else if (last)
    keep[nkeep++] = last;
  if (rc == 0)
    rc = disown_all (r, inside, start, end, kind, saved_at, by, keep, &nkeep);
  else
    treap_free (inside);
  r->owners = treap_merge (before, after);
  for (int i = 0; i < nkeep; i++)
    if (keep[i])
      own_node (r, keep[i]);
  return rc;
}

static int
note_in_image (struct wt_resolve *r, const struct wtlog_record *rec)
{
  if (grow ((void **) &r->recs, &r->recs_cap, r->nrecs + 1, sizeof *r->recs) == -1)
    return -1;
  r->recs[r->nrecs] = (struct wt_in_image) { rec->seq, rec->offset, rec->length, 0, 0 };
  if (disown (r, rec->offset, rec->offset + rec->length, WT_PIECE_LOST, 0, rec->seq) == -1
      || (rec->length && own (r, rec->offset, rec->offset + rec->length, r->nrecs) == -1))
    return -1;
  r->nrecs++;
  return 0;
}

/* What one record of the log does to the owner map. */
static int
note_record (struct wt_resolve *r, const struct wtlog_record *rec)
{
  if (wt_record_in_image (rec))
    return note_in_image (r, rec);
  if (rec->type == WTLOG_SAVED && rec->data)
    return disown (r, rec->offset, rec->offset + rec->length, WT_PIECE_SAVED,
                   rec->log_offset + WTLOG_FIXED_SIZE + 8 * rec->nhashes, 0);
  if (wt_record_changes_disk (rec))
    return disown (r, rec->offset, rec->offset + rec->length, WT_PIECE_LOST, 0,
                   rec->seq);
  return 0;
}

static int
piece_cmp (const void *a, const void *b)
{
  const struct wt_piece *x = a, *y = b;
  if (x->rec != y->rec)
    return x->rec < y->rec ? -1 : 1;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* What is still owned at the end of the log is in the final image: each
 * record's pieces sorted by offset, its gaps filled with FINAL pieces. */
static void
sort_pieces (struct wt_resolve *r)
{
  if (r->npieces > 1)
    qsort (r->pieces, r->npieces, sizeof *r->pieces, piece_cmp);
}

static int
finish_pieces (struct wt_resolve *r)
{
  treap_free (r->owners);
  r->owners = NULL;
  sort_pieces (r);
  uint64_t fixed = r->npieces, p = 0;
  for (uint64_t i = 0; i < r->nrecs; i++) {
    uint64_t at = r->recs[i].offset, end = at + r->recs[i].length;
    for (; p < fixed && r->pieces[p].rec == i; p++) {
      if (r->pieces[p].offset > at && add_piece (r, i, at, r->pieces[p].offset - at,
                                                 WT_PIECE_FINAL, 0) == -1)
        return -1;
      at = r->pieces[p].offset + r->pieces[p].length;
    }
    if (at < end && add_piece (r, i, at, end - at, WT_PIECE_FINAL, 0) == -1)
      return -1;
  }
  sort_pieces (r);
  for (uint64_t i = 0, q = 0; i < r->nrecs; i++) {
    r->recs[i].first_piece = q;
    for (; q < r->npieces && r->pieces[q].rec == i; q++)
      if (r->pieces[q].kind == WT_PIECE_FINAL && !r->first_final_seq)
        r->first_final_seq = r->recs[i].seq;
    r->recs[i].npieces = q - r->recs[i].first_piece;
  }
  return 0;
}

/* The pass reads the log's fixed parts, skipping the payloads it does not
 * need (a replay reads them next: reading every write's bytes twice would
 * cost a data=on log's replay a third of its speed), and the SAVED records
 * whole, their CRC checked.  It ends where a reader would, at the first
 * fixed part or SAVED record that is bad, cut short or zero (records whose
 * bytes it skips are CRC-checked by the command's own reading, which
 * applies nothing past a bad one). */
#define WT_SKIM_CHUNK (256u << 10)
/* After a record larger than a chunk, only its successor's fixed part is
 * likely to be wanted: a page is read, not a chunk of its payload. */
#define WT_SKIM_PAGE 4096u

struct wt_skim {
  int fd;
  uint64_t file_size;
  unsigned char *buf;
  size_t cap, len;
  uint64_t pos;                 /* file offset of buf[0] */
  bool after_large;             /* the last record was larger than a chunk */
};

/* The n bytes at file offset at, read when not in the buffer already;
 * NULL at the end of the file or on a read error (which ends the pass as
 * it ends the reader: the command's own reading reports it). */
static const unsigned char *
skim_at (struct wt_skim *s, uint64_t at, size_t n)
{
  if (at >= s->pos && at - s->pos <= s->len && s->len - (at - s->pos) >= n)
    return s->buf + (at - s->pos);
  if (at >= s->file_size || s->file_size - at < n)
    return NULL;
  size_t chunk = s->after_large ? WT_SKIM_PAGE : WT_SKIM_CHUNK;
  size_t want = n > chunk ? n : chunk;
  if (want > s->cap) {
    unsigned char *nb = realloc (s->buf, want);
    if (!nb)
      return NULL;
    s->buf = nb;
    s->cap = want;
  }
  ssize_t got = wt_pread_full (s->fd, s->buf, want, at);
  s->pos = at;
  s->len = got < 0 ? 0 : (size_t) got;
  return s->len >= n ? s->buf : NULL;
}

/* The next record at *at, whole when the pass needs its payload (a SAVED
 * record with DATA); false at the end of what the pass reads. */
static bool
skim_next (struct wt_skim *s, const struct wtlog_header *h, uint64_t *at,
           uint64_t *last_seq, struct wtlog_record *rec)
{
  char why[160];
  const unsigned char *p = skim_at (s, *at, WTLOG_FIXED_SIZE);
  if (!p)
    return false;
  wtlog_fixed_decode (p, rec);
  if ((rec->size == 0 && rec->crc == 0 && rec->type == 0)
      || wtlog_fixed_check (h, *last_seq, p, rec, why, sizeof why)
      || s->file_size - *at < rec->size)
    return false;
  rec->log_offset = *at;
  rec->nhashes = wtlog_has_hashes (rec->type, rec->flags)
    ? wtlog_sectors_touched (rec->offset, rec->length) : 0;
  rec->hashes = NULL;
  rec->data = NULL;
  if (rec->type == WTLOG_SAVED && (rec->flags & WTLOG_F_DATA)) {
    p = skim_at (s, *at, rec->size);
    if (!p || wtlog_record_crc (p, rec->size) != rec->crc)
      return false;
    rec->data = p + WTLOG_FIXED_SIZE + 8 * rec->nhashes;
  }
  *at += rec->size;
  *last_seq = rec->seq;
  s->after_large = rec->size > WT_SKIM_CHUNK;
  return true;
}

static int
resolve_pass (struct wt_resolve *r, char *err, size_t errlen)
{
  struct wtlog_header h;
  /* Opened as every reader opens it: a killed plugin's ring goes into the
   * log first. */
  struct wtlog_reader *rd = wtlog_reader_open (r->log_path, &h, err, errlen);
  if (!rd)
    return -1;
  struct wt_skim s = { .file_size = wtlog_reader_status (rd)->file_size };
  wtlog_reader_close (rd);
  s.fd = wt_open_input (r->log_path, O_RDONLY | O_CLOEXEC, err, errlen);
  if (s.fd < 0)
    return -1;
  struct wtlog_record rec;
  uint64_t at = WTLOG_HEADER_SIZE, last_seq = 0;
  int rc = 0;
  if (h.flags & WTLOG_H_DATA)
    while (rc == 0 && skim_next (&s, &h, &at, &last_seq, &rec)) {
      rc = note_record (r, &rec);
      if (rec.type == WTLOG_CLOSE && rec.conn == 0)
        break;
    }
  close (s.fd);
  free (s.buf);
  if (rc == 0)
    rc = finish_pieces (r);
  if (rc == -1)
    return wtlog_fail (err, errlen, "%s: resolving the IN_IMAGE records' "
                       "bytes: out of memory", r->log_path);
  return 0;
}

struct wt_resolve *
wt_resolve_open (const char *log_path, const char *final_image, char *err,
                 size_t errlen)
{
  struct wt_resolve *r = calloc (1, sizeof *r);
  if (!r) {
    wtlog_fail (err, errlen, "malloc: %s", strerror (errno));
    return NULL;
  }
  r->log_fd = r->final_fd = -1;
  r->prio_state = 0x9e3779b97f4a7c15ull;
  r->log_path = strdup (log_path);
  r->final_path = final_image ? strdup (final_image) : NULL;
  if (!r->log_path || (final_image && !r->final_path)) {
    wtlog_fail (err, errlen, "malloc: %s", strerror (errno));
    wt_resolve_close (r);
    return NULL;
  }
  if (resolve_pass (r, err, errlen) == -1
      || (r->log_fd = wt_open_input (log_path, O_RDONLY | O_CLOEXEC, err, errlen)) < 0
      || (final_image && (r->final_fd = wt_open_input (final_image, O_RDONLY | O_CLOEXEC,
                                                       err, errlen)) < 0)) {
    wt_resolve_close (r);
    return NULL;
  }
  return r;
}

void
wt_resolve_close (struct wt_resolve *r)
{
  if (!r)
    return;
  treap_free (r->owners);
  if (r->log_fd >= 0)
    close (r->log_fd);
  if (r->final_fd >= 0)
    close (r->final_fd);
  free (r->recs);
  free (r->pieces);
  free (r->log_path);
  free (r->final_path);
  free (r);
}

uint64_t
wt_resolve_records (const struct wt_resolve *r)
{
  return r->nrecs;
}

uint64_t
wt_resolve_first_seq (const struct wt_resolve *r)
{
  return r->nrecs ? r->recs[0].seq : 0;
}

uint64_t
wt_resolve_first_final_seq (const struct wt_resolve *r)
{
  return r->first_final_seq;
}

bool
wt_resolve_has_final (const struct wt_resolve *r)
{
  return r->final_fd >= 0;
}

static const struct wt_in_image *
find_record (const struct wt_resolve *r, uint64_t seq)
{
  uint64_t lo = 0, hi = r->nrecs;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (r->recs[mid].seq < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->nrecs && r->recs[lo].seq == seq ? &r->recs[lo] : NULL;
}

/* The first piece of rec that ends after disk byte at. */
static uint64_t
first_piece_at (const struct wt_resolve *r, const struct wt_in_image *rec, uint64_t at)
{
  uint64_t lo = rec->first_piece, hi = rec->first_piece + rec->npieces;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (r->pieces[mid].offset + r->pieces[mid].length <= at)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* len bytes of a piece, from disk byte `from`, into buf. */
static int
read_piece (const struct wt_resolve *r, const struct wt_in_image *rec,
            const struct wt_piece *p, uint64_t from, uint64_t len,
            unsigned char *buf, char *err, size_t errlen)
{
  if (p->kind == WT_PIECE_LOST)
    return wtlog_fail (err, errlen, "%s: seq %" PRIu64 " (IN_IMAGE): its bytes %"
                       PRIu64 "+%" PRIu64 " were overwritten by seq %" PRIu64
                       " and no SAVED record before it kept them", r->log_path,
                       rec->seq, p->offset, p->length, p->src);
  if (p->kind == WT_PIECE_FINAL && r->final_fd < 0)
    return wtlog_fail (err, errlen, "%s: seq %" PRIu64 " (IN_IMAGE): its bytes %"
                       PRIu64 "+%" PRIu64 " are in the run's final image, and "
                       "none was given (--final-image)", r->log_path, rec->seq,
                       p->offset, p->length);
  int fd = p->kind == WT_PIECE_FINAL ? r->final_fd : r->log_fd;
  const char *name = p->kind == WT_PIECE_FINAL ? r->final_path : r->log_path;
  uint64_t at = p->kind == WT_PIECE_FINAL ? from : p->src + (from - p->offset);
  ssize_t got = wt_pread_full (fd, buf, len, at);
  if (got < 0)
    return wtlog_fail (err, errlen, "read: %s at byte %" PRIu64 ": %s", name, at,
                       strerror (errno));
  if ((uint64_t) got < len && p->kind == WT_PIECE_SAVED)
    return wtlog_fail (err, errlen, "read: %s at byte %" PRIu64 ": unexpected "
                       "end of file", name, at + (uint64_t) got);
  /* Past the end of the final image reads as the zeroes a disk holds
   * there; the hashes tell whether those are the bytes. */
  memset (buf + got, 0, len - (uint64_t) got);
  return 0;
}

/* The sector at disk byte `sector_at` of rec read into buf does not hash
 * as logged: named by where its first byte came from. */
static int
hash_mismatch (const struct wt_resolve *r, const struct wt_in_image *rec,
               uint64_t sector_at, uint64_t got, uint64_t want, char *err,
               size_t errlen)
{
  const struct wt_piece *p = &r->pieces[first_piece_at (r, rec, sector_at)];
  uint64_t sector = sector_at / WT_SECTOR_SIZE;
  if (p->kind == WT_PIECE_SAVED)
    return wtlog_fail (err, errlen, "%s: the SAVED record's bytes at log byte %"
                       PRIu64 " for sector %" PRIu64 " are not those seq %" PRIu64
                       " (IN_IMAGE) wrote (hash %016" PRIx64 ", logged %016"
                       PRIx64 ")", r->log_path, p->src + (sector_at - p->offset),
                       sector, rec->seq, got, want);
  return wtlog_fail (err, errlen, "%s: sector %" PRIu64 " does not hold what "
                     "seq %" PRIu64 " of %s (IN_IMAGE) wrote there (hash %016"
                     PRIx64 ", logged %016" PRIx64 "): not the run's final "
                     "image, or changed after the run", r->final_path, sector,
                     rec->seq, r->log_path, got, want);
}

int
wt_resolve_read (const struct wt_resolve *r, uint64_t seq, uint64_t at,
                 uint64_t len, void *buf, const uint64_t *hashes, char *err,
                 size_t errlen)
{
  const struct wt_in_image *rec = find_record (r, seq);
  if (!rec)
    return wtlog_fail (err, errlen, "%s: seq %" PRIu64 " is no IN_IMAGE record "
                       "before the end of the log", r->log_path, seq);
  if (at % WT_SECTOR_SIZE || len % WT_SECTOR_SIZE || at > rec->length
      || len > rec->length - at)
    return wtlog_fail (err, errlen, "%s: seq %" PRIu64 ": bytes %" PRIu64 "+%"
                       PRIu64 " are not whole sectors of its %" PRIu64 " bytes",
                       r->log_path, seq, at, len, rec->length);
  unsigned char *out = buf;
  uint64_t from = rec->offset + at, end = from + len;
  for (uint64_t i = first_piece_at (r, rec, from); from < end; i++) {
    const struct wt_piece *p = &r->pieces[i];
    uint64_t to = p->offset + p->length < end ? p->offset + p->length : end;
    if (read_piece (r, rec, p, from, to - from, out + (from - rec->offset - at),
                    err, errlen) == -1)
      return -1;
    from = to;
  }
  for (uint64_t s = 0; hashes && s < len / WT_SECTOR_SIZE; s++) {
    uint64_t want = hashes[at / WT_SECTOR_SIZE + s];
    uint64_t got = wt_sector_hash (out + s * WT_SECTOR_SIZE);
    if (got != want)
      return hash_mismatch (r, rec, rec->offset + at + s * WT_SECTOR_SIZE, got,
                            want, err, errlen);
  }
  return 0;
}
