/* The index of the log-as-store disk (index.h): a treap of disjoint
 * extents ordered by start.  An update cuts the extents that straddle its
 * edges, splits out the part of the tree inside its range, frees it and puts
 * one extent in its place: O(log n) expected, whatever the range's size. */
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

int
wtp_index_spare_get (struct wtp_index_spare *sp)
{
  for (int i = 0; i < 3; i++) {
    sp->node[i] = malloc (sizeof (struct wtp_extent));
    if (!sp->node[i]) {
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
  for (int i = 0; i < 3; i++) {
    free (sp->node[i]);
    sp->node[i] = NULL;
  }
}

static struct wtp_extent *
wtp_index_take (struct wtp_index *ix, struct wtp_index_spare *sp)
{
  for (int i = 0; i < 3; i++)
    if (sp->node[i]) {
      struct wtp_extent *n = sp->node[i];
      sp->node[i] = NULL;
      /* xorshift32: priorities only need to look random. */
      ix->rand ^= ix->rand << 13;
      ix->rand ^= ix->rand >> 17;
      ix->rand ^= ix->rand << 5;
      n->prio = ix->rand;
      n->left = n->right = NULL;
      ix->extents++;
      return n;
    }
  abort ();                     /* an update never needs more than three */
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

/* Makes key an extent boundary: an extent that straddles it becomes two. */
static void
wtp_index_cut (struct wtp_index *ix, uint64_t key, struct wtp_index_spare *sp)
{
  struct wtp_extent *t = ix->root;
  while (t && !(t->start < key && key < t->end))
    t = key <= t->start ? t->left : t->right;
  if (!t)
    return;
  struct wtp_extent *tail = wtp_index_take (ix, sp);
  tail->start = key;
  tail->end = t->end;
  tail->kind = t->kind;
  tail->log_pos = t->log_pos + (key - t->start);
  t->end = key;
  ix->root = wtp_index_insert_at (ix->root, tail);
}

static void
wtp_index_free_tree (struct wtp_index *ix, struct wtp_extent *t)
{
  while (t) {
    struct wtp_extent *right = t->right;
    wtp_index_free_tree (ix, t->left);
    free (t);
    ix->extents--;
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
 * Called with the write lock held; false when neither applies. */
static bool
wtp_index_set_quick (struct wtp_index *ix, uint64_t offset, uint64_t end,
                     uint32_t kind, uint64_t log_pos,
                     struct wtp_index_spare *sp)
{
  /* Extents are disjoint and ordered: only the last one that starts before
   * end can reach into [offset, end). */
  struct wtp_extent *last = wtp_index_floor (ix->root, end);
  if (last && last->start == offset && last->end == end) {
    last->kind = kind;
    last->log_pos = log_pos;
    return true;
  }
  if (last && last->end > offset)
    return false;
  struct wtp_extent *n = wtp_index_take (ix, sp);
  n->start = offset;
  n->end = end;
  n->kind = kind;
  n->log_pos = log_pos;
  ix->root = wtp_index_insert_at (ix->root, n);
  return true;
}

static void
wtp_index_set (struct wtp_index *ix, uint64_t offset, uint64_t length,
               uint32_t kind, uint64_t log_pos, struct wtp_index_spare *sp)
{
  struct wtp_extent *before, *inside, *after;
  if (length == 0)
    return;
  pthread_rwlock_wrlock (&ix->lock);
  if (wtp_index_set_quick (ix, offset, offset + length, kind, log_pos, sp)) {
    pthread_rwlock_unlock (&ix->lock);
    return;
  }
  wtp_index_cut (ix, offset, sp);
  wtp_index_cut (ix, offset + length, sp);
  wtp_index_split (ix->root, offset, &before, &inside);
  wtp_index_split (inside, offset + length, &inside, &after);
  struct wtp_extent *n = wtp_index_take (ix, sp);
  n->start = offset;
  n->end = offset + length;
  n->kind = kind;
  n->log_pos = log_pos;
  ix->root = wtp_index_merge (wtp_index_merge (before, n), after);
  wtp_index_free_tree (ix, inside);
  pthread_rwlock_unlock (&ix->lock);
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

struct wtp_index_reading {
  unsigned char *buf;
  uint64_t offset, end;         /* the request */
  uint64_t pos;                 /* filled up to here */
  const unsigned char *log;
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
wtp_index_fill_extent (struct wtp_index_reading *rd, const struct wtp_extent *e)
{
  int err = wtp_index_fill_base (rd, e->start);
  if (err)
    return err;
  uint64_t from = rd->pos;
  uint64_t to = e->end < rd->end ? e->end : rd->end;
  unsigned char *dst = rd->buf + (from - rd->offset);
  if (e->kind == WTP_EXTENT_ZERO)
    memset (dst, 0, to - from);
  else
    memcpy (dst, rd->log + e->log_pos + (from - e->start), to - from);
  rd->pos = to;
  return 0;
}

/* In order over the extents that overlap [rd->offset, rd->end). */
static int
wtp_index_walk (struct wtp_index_reading *rd, const struct wtp_extent *t)
{
  while (t) {
    if (rd->offset < t->start) {
      int err = wtp_index_walk (rd, t->left);
      if (err)
        return err;
    }
    if (t->start >= rd->end)
      return 0;
    if (t->end > rd->offset) {
      int err = wtp_index_fill_extent (rd, t);
      if (err)
        return err;
    }
    t = t->right;
  }
  return 0;
}

int
wtp_index_read (struct wtp_index *ix, void *buf, size_t count, uint64_t offset,
                const unsigned char *log,
                int (*read_base) (void *ctx, void *buf, size_t count,
                                  uint64_t offset),
                void *ctx)
{
  struct wtp_index_reading rd = {
    .buf = buf, .offset = offset, .end = offset + count, .pos = offset,
    .log = log, .read_base = read_base, .ctx = ctx,
  };
  pthread_rwlock_rdlock (&ix->lock);
  int err = wtp_index_walk (&rd, ix->root);
  if (!err)
    err = wtp_index_fill_base (&rd, rd.end);
  pthread_rwlock_unlock (&ix->lock);
  return err;
}

uint64_t
wtp_index_extents (struct wtp_index *ix)
{
  pthread_rwlock_rdlock (&ix->lock);
  uint64_t n = ix->extents;
  pthread_rwlock_unlock (&ix->lock);
  return n;
}

void
wtp_index_free (struct wtp_index *ix)
{
  pthread_rwlock_wrlock (&ix->lock);
  wtp_index_free_tree (ix, ix->root);
  ix->root = NULL;
  pthread_rwlock_unlock (&ix->lock);
}
