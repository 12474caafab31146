/* The range index (index.h), data=on's owner map: the disk cut into at most
 * 65536 shards of a power of two bytes, each a treap of disjoint extents
 * ordered by start, under one of 64 striped locks.  Shards keep the trees
 * shallow (a walk is a chain of cache misses) and let updates of different
 * places run at once.  Within a shard an update cuts the extents that
 * straddle its edges, splits out the part of the tree inside its range,
 * frees it and puts one extent in its place: O(log n) expected, whatever
 * the range's size; a range over several shards is one extent in each. */
#include "index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum wtp_extent_kind { WTP_EXTENT_LOG, WTP_EXTENT_ZERO };

struct wtp_extent {
  uint64_t start, end;          /* [start, end) of the disk */
  uint64_t log_pos;             /* LOG: the log byte that holds start */
  struct wtp_extent *left, *right;
  uint32_t prio;
  uint32_t kind;
};

/* The end of [offset, offset+length), kept from wrapping past the last
 * byte. */
static uint64_t
wtp_index_range_end (uint64_t offset, uint64_t length)
{
  return offset + length < offset ? UINT64_MAX : offset + length;
}

/* The shard that holds byte off; the last one takes everything past the
 * disk's end. */
static uint64_t
wtp_index_shard_of (const struct wtp_index *ix, uint64_t off)
{
  uint64_t s = off >> ix->shard_shift;
  return s < ix->nshards ? s : ix->nshards - 1;
}

/* The first byte past shard s. */
static uint64_t
wtp_index_shard_end (const struct wtp_index *ix, uint64_t s)
{
  return s + 1 < ix->nshards ? (s + 1) << ix->shard_shift : UINT64_MAX;
}

static struct wtp_index_stripe *
wtp_index_stripe_of (struct wtp_index *ix, uint64_t shard)
{
  return &ix->stripes[shard % WTP_INDEX_STRIPES];
}

int
wtp_index_init (struct wtp_index *ix, uint64_t disk_size)
{
  unsigned shift = WTP_INDEX_MIN_SHARD_SHIFT;
  while (disk_size > 0 && ((disk_size - 1) >> shift) >= WTP_INDEX_MAX_SHARDS)
    shift++;
  ix->shard_shift = shift;
  ix->nshards = disk_size > 0 ? ((disk_size - 1) >> shift) + 1 : 1;
  ix->extents = 0;
  ix->roots = calloc (ix->nshards, sizeof *ix->roots);
  if (!ix->roots) {
    errno = ENOMEM;
    return -1;
  }
  for (unsigned i = 0; i < WTP_INDEX_STRIPES; i++) {
    pthread_rwlock_init (&ix->stripes[i].lock, NULL);
    ix->stripes[i].rand = 2463534242u + i;
  }
  return 0;
}

/* The most nodes an update of [offset, offset+length) may take: three in
 * a single shard (two cut extents and the new one); over k shards one in
 * each, and the two cut ones in each of the two end shards. */
static size_t
wtp_index_nodes_needed (const struct wtp_index *ix, uint64_t offset,
                        uint64_t length)
{
  if (length == 0)
    return 0;
  uint64_t end = wtp_index_range_end (offset, length);
  uint64_t k = wtp_index_shard_of (ix, end - 1)
    - wtp_index_shard_of (ix, offset) + 1;
  return k == 1 ? 3 : (size_t) k + 4;
}

int
wtp_index_spare_get (const struct wtp_index *ix, struct wtp_index_spare *sp,
                     uint64_t offset, uint64_t length)
{
  size_t n = wtp_index_nodes_needed (ix, offset, length);
  sp->count = 0;
  sp->node = n <= WTP_INDEX_SPARE_INLINE ? sp->inline_node
    : calloc (n, sizeof *sp->node);
  if (!sp->node) {
    errno = ENOMEM;
    return -1;
  }
  for (; sp->count < n; sp->count++) {
    sp->node[sp->count] = malloc (sizeof (struct wtp_extent));
    if (!sp->node[sp->count]) {
      wtp_index_spare_put (sp);
      errno = ENOMEM;
      return -1;
    }
  }
  return 0;
}

void
wtp_index_spare_put (struct wtp_index_spare *sp)
{
  for (size_t i = 0; i < sp->count; i++)
    free (sp->node[i]);
  if (sp->node != sp->inline_node)
    free (sp->node);
  sp->node = NULL;
  sp->count = 0;
}

/* A node from the spare, its priority drawn under the stripe's lock. */
static struct wtp_extent *
wtp_index_take (struct wtp_index *ix, struct wtp_index_stripe *st,
                struct wtp_index_spare *sp)
{
  if (sp->count == 0)
    abort ();                   /* wtp_index_nodes_needed is the bound */
  struct wtp_extent *n = sp->node[--sp->count];
  sp->node[sp->count] = NULL;
  /* xorshift32: priorities only need to look random. */
  st->rand ^= st->rand << 13;
  st->rand ^= st->rand >> 17;
  st->rand ^= st->rand << 5;
  n->prio = st->rand;
  n->left = n->right = NULL;
  __atomic_add_fetch (&ix->extents, 1, __ATOMIC_RELAXED);
  return n;
}

/* Splits t into the extents that start before key (*l) and the rest (*r).
 * No extent may straddle key. */
static void
wtp_index_split (struct wtp_extent *t, uint64_t key, struct wtp_extent **l,
                 struct wtp_extent **r)
{
  if (!t) {
    *l = *r = NULL;
    return;
  }
  if (t->start < key) {
    wtp_index_split (t->right, key, &t->right, r);
    *l = t;
  }
  else {
    wtp_index_split (t->left, key, l, &t->left);
    *r = t;
  }
}

/* Joins a and b, every extent of a before every extent of b. */
static struct wtp_extent *
wtp_index_merge (struct wtp_extent *a, struct wtp_extent *b)
{
  if (!a)
    return b;
  if (!b)
    return a;
  if (a->prio > b->prio) {
    a->right = wtp_index_merge (a->right, b);
    return a;
  }
  b->left = wtp_index_merge (a, b->left);
  return b;
}

/* Puts n into t where no extent overlaps it: one walk down to the place its
 * priority gives it, and a split of the subtree it takes over. */
static struct wtp_extent *
wtp_index_insert_at (struct wtp_extent *t, struct wtp_extent *n)
{
  if (!t)
    return n;
  if (n->prio > t->prio) {
    wtp_index_split (t, n->start, &n->left, &n->right);
    return n;
  }
  if (n->start < t->start)
    t->left = wtp_index_insert_at (t->left, n);
  else
    t->right = wtp_index_insert_at (t->right, n);
  return t;
}

/* One shard's tree and what an update of it uses, under the stripe's
 * write lock. */
struct wtp_index_shard {
  struct wtp_index *ix;
  struct wtp_extent **root;
  struct wtp_index_stripe *stripe;
  struct wtp_index_spare *sp;
};

/* A node from the spare holding [start, end) as kind says. */
static struct wtp_extent *
wtp_index_new_extent (struct wtp_index_shard *sh, uint64_t start, uint64_t end,
                      uint32_t kind, uint64_t log_pos)
{
  struct wtp_extent *n = wtp_index_take (sh->ix, sh->stripe, sh->sp);
  n->start = start;
  n->end = end;
  n->kind = kind;
  n->log_pos = log_pos;
  return n;
}

/* Makes key an extent boundary: an extent that straddles it becomes two. */
static void
wtp_index_cut (struct wtp_index_shard *sh, uint64_t key)
{
  struct wtp_extent *t = *sh->root;
  while (t && !(t->start < key && key < t->end))
    t = key <= t->start ? t->left : t->right;
  if (!t)
    return;
  uint64_t tail_pos = t->log_pos + (key - t->start);
  struct wtp_extent *tail = wtp_index_new_extent (sh, key, t->end, t->kind,
                                                  tail_pos);
  t->end = key;
  *sh->root = wtp_index_insert_at (*sh->root, tail);
}

static void
wtp_index_free_tree (struct wtp_index *ix, struct wtp_extent *t)
{
  while (t) {
    struct wtp_extent *right = t->right;
    wtp_index_free_tree (ix, t->left);
    free (t);
    __atomic_sub_fetch (&ix->extents, 1, __ATOMIC_RELAXED);
    t = right;
  }
}

/* The extent with the greatest start below key, or NULL. */
static struct wtp_extent *
wtp_index_floor (struct wtp_extent *t, uint64_t key)
{
  struct wtp_extent *best = NULL;
  while (t) {
    if (t->start < key) {
      best = t;
      t = t->right;
    }
    else
      t = t->left;
  }
  return best;
}

/* The two updates a disk written in place mostly makes, each in one walk
 * instead of the general path's six: a range that is exactly one extent
 * already (rewritten: the extent is pointed at the new data), and a range
 * no extent overlaps (written for the first time: one extent put in).
 * false when neither applies. */
static bool
wtp_index_set_quick (struct wtp_index_shard *sh, uint64_t offset, uint64_t end,
                     uint32_t kind, uint64_t log_pos)
{
  /* Extents are disjoint and ordered: only the last one that starts before
   * end can reach into [offset, end). */
  struct wtp_extent *last = wtp_index_floor (*sh->root, end);
  if (last && last->start == offset && last->end == end) {
    last->kind = kind;
    last->log_pos = log_pos;
    return true;
  }
  if (last && last->end > offset)
    return false;
  struct wtp_extent *n = wtp_index_new_extent (sh, offset, end, kind, log_pos);
  *sh->root = wtp_index_insert_at (*sh->root, n);
  return true;
}

/* [offset, end), all inside one shard, now reads as kind says. */
static void
wtp_index_set_in_shard (struct wtp_index_shard *sh, uint64_t offset,
                        uint64_t end, uint32_t kind, uint64_t log_pos)
{
  struct wtp_extent *before, *inside, *after;
  if (wtp_index_set_quick (sh, offset, end, kind, log_pos))
    return;
  wtp_index_cut (sh, offset);
  wtp_index_cut (sh, end);
  wtp_index_split (*sh->root, offset, &before, &inside);
  wtp_index_split (inside, end, &inside, &after);
  struct wtp_extent *n = wtp_index_new_extent (sh, offset, end, kind, log_pos);
  *sh->root = wtp_index_merge (wtp_index_merge (before, n), after);
  wtp_index_free_tree (sh->ix, inside);
}

/* Shard by shard, each under its stripe's write lock: a reader may see a
 * range over several shards half updated, as NBD allows for a read that
 * overlaps a write in flight; overlapping writes are ordered by the
 * plugin's range lock. */
static void
wtp_index_set (struct wtp_index *ix, uint64_t offset, uint64_t length,
               uint32_t kind, uint64_t log_pos, struct wtp_index_spare *sp)
{
  if (length == 0)
    return;
  uint64_t end = wtp_index_range_end (offset, length);
  for (uint64_t s = wtp_index_shard_of (ix, offset); ; s++) {
    uint64_t s_start = s << ix->shard_shift;
    uint64_t s_end = wtp_index_shard_end (ix, s);
    uint64_t lo = offset > s_start ? offset : s_start;
    uint64_t hi = end < s_end ? end : s_end;
    struct wtp_index_shard sh = {
      .ix = ix, .root = &ix->roots[s], .stripe = wtp_index_stripe_of (ix, s),
      .sp = sp,
    };
    pthread_rwlock_wrlock (&sh.stripe->lock);
    wtp_index_set_in_shard (&sh, lo, hi, kind, log_pos + (lo - offset));
    pthread_rwlock_unlock (&sh.stripe->lock);
    if (hi == end)
      break;
  }
}

void
wtp_index_set_log (struct wtp_index *ix, uint64_t offset, uint64_t length,
                   uint64_t log_pos, struct wtp_index_spare *sp)
{
  wtp_index_set (ix, offset, length, WTP_EXTENT_LOG, log_pos, sp);
}

void
wtp_index_set_zero (struct wtp_index *ix, uint64_t offset, uint64_t length,
                    struct wtp_index_spare *sp)
{
  wtp_index_set (ix, offset, length, WTP_EXTENT_ZERO, 0, sp);
}

/* What a walk does with each extent that overlaps its range: 0 to go on,
 * else the error that stops it. */
typedef int wtp_index_visit_fn (void *ctx, const struct wtp_extent *e);

/* In order over the extents of t that overlap [offset, end). */
static int
wtp_index_walk (const struct wtp_extent *t, uint64_t offset, uint64_t end,
                wtp_index_visit_fn *visit, void *ctx)
{
  while (t) {
    if (offset < t->start) {
      int err = wtp_index_walk (t->left, offset, end, visit, ctx);
      if (err)
        return err;
    }
    if (t->start >= end)
      return 0;
    if (t->end > offset) {
      int err = visit (ctx, t);
      if (err)
        return err;
    }
    t = t->right;
  }
  return 0;
}

/* In disk order over the extents that overlap [offset, end), shard by
 * shard, each under its stripe's read lock. */
static int
wtp_index_visit (struct wtp_index *ix, uint64_t offset, uint64_t end,
                 wtp_index_visit_fn *visit, void *ctx)
{
  int err = 0;
  uint64_t last = wtp_index_shard_of (ix, end - 1);
  for (uint64_t s = wtp_index_shard_of (ix, offset); !err && s <= last; s++) {
    struct wtp_index_stripe *st = wtp_index_stripe_of (ix, s);
    pthread_rwlock_rdlock (&st->lock);
    err = wtp_index_walk (ix->roots[s], offset, end, visit, ctx);
    pthread_rwlock_unlock (&st->lock);
  }
  return err;
}

struct wtp_index_reading {
  unsigned char *buf;
  uint64_t offset, end;         /* the request */
  uint64_t pos;                 /* filled up to here */
  int (*read_log) (void *dst, uint64_t log_pos, uint64_t length);
  int (*read_base) (void *ctx, void *buf, size_t count, uint64_t offset);
  void *ctx;
};

static int
wtp_index_fill_base (struct wtp_index_reading *rd, uint64_t to)
{
  if (to <= rd->pos)
    return 0;
  int err = rd->read_base (rd->ctx, rd->buf + (rd->pos - rd->offset),
                           to - rd->pos, rd->pos);
  rd->pos = to;
  return err;
}

/* One extent that overlaps the request, in disk order. */
static int
wtp_index_fill_extent (void *ctx, const struct wtp_extent *e)
{
  struct wtp_index_reading *rd = ctx;
  int err = wtp_index_fill_base (rd, e->start);
  if (err)
    return err;
  uint64_t from = rd->pos;
  uint64_t to = e->end < rd->end ? e->end : rd->end;
  unsigned char *dst = rd->buf + (from - rd->offset);
  if (e->kind == WTP_EXTENT_ZERO)
    memset (dst, 0, to - from);
  else if (rd->read_log (dst, e->log_pos + (from - e->start), to - from) == 1)
    return wtp_index_fill_base (rd, to);
  rd->pos = to;
  return 0;
}

int
wtp_index_read (struct wtp_index *ix, void *buf, size_t count, uint64_t offset,
                int (*read_log) (void *dst, uint64_t log_pos,
                                 uint64_t length),
                int (*read_base) (void *ctx, void *buf, size_t count,
                                  uint64_t offset),
                void *ctx)
{
  struct wtp_index_reading rd = {
    .buf = buf, .offset = offset, .end = offset + count, .pos = offset,
    .read_log = read_log, .read_base = read_base, .ctx = ctx,
  };
  if (count == 0)
    return 0;
  int err = wtp_index_visit (ix, offset, rd.end, wtp_index_fill_extent, &rd);
  if (!err)
    err = wtp_index_fill_base (&rd, rd.end);
  return err;
}

struct wtp_index_listing {
  uint64_t offset, end;         /* the range asked */
  struct wtp_index_piece *piece;
  size_t n, cap;
};

/* One LOG extent's part inside the range, appended.  0 or ENOMEM. */
static int
wtp_index_list_extent (void *ctx, const struct wtp_extent *e)
{
  struct wtp_index_listing *ls = ctx;
  if (e->kind != WTP_EXTENT_LOG)
    return 0;
  if (ls->n == ls->cap) {
    size_t cap = ls->cap ? 2 * ls->cap : 8;
    struct wtp_index_piece *p = realloc (ls->piece, cap * sizeof *p);
    if (!p)
      return ENOMEM;
    ls->piece = p;
    ls->cap = cap;
  }
  uint64_t from = e->start > ls->offset ? e->start : ls->offset;
  uint64_t to = e->end < ls->end ? e->end : ls->end;
  ls->piece[ls->n++] = (struct wtp_index_piece) {
    .start = from, .end = to, .log_pos = e->log_pos + (from - e->start),
  };
  return 0;
}

int
wtp_index_list_log (struct wtp_index *ix, uint64_t offset, uint64_t length,
                    struct wtp_index_piece **pieces, size_t *n)
{
  struct wtp_index_listing ls = {
    .offset = offset, .end = wtp_index_range_end (offset, length),
  };
  int err = length > 0
    ? wtp_index_visit (ix, offset, ls.end, wtp_index_list_extent, &ls) : 0;
  if (err) {
    free (ls.piece);
    errno = err;
    return -1;
  }
  *pieces = ls.piece;
  *n = ls.n;
  return 0;
}

uint64_t
wtp_index_extents (struct wtp_index *ix)
{
  return __atomic_load_n (&ix->extents, __ATOMIC_RELAXED);
}

/* Called once no request runs. */
void
wtp_index_free (struct wtp_index *ix)
{
  if (!ix->roots)
    return;
  for (uint64_t s = 0; s < ix->nshards; s++)
    wtp_index_free_tree (ix, ix->roots[s]);
  free (ix->roots);
  ix->roots = NULL;
  for (unsigned i = 0; i < WTP_INDEX_STRIPES; i++)
    pthread_rwlock_destroy (&ix->stripes[i].lock);
}
