/* The last logged hash of every touched sector: WRITEs in an
 * open-addressing table, ZERO and TRIM ranges in a tree (lib/lastwrite.h). */
#include "lib/lastwrite.h"

#include <inttypes.h>
#include <string.h>

#include "lib/channel-read.h"
#include "sector-hash.h"

/* No disk has this many sectors, so it marks an empty slot. */
#define WTC_EMPTY UINT64_MAX

/* Sectors [start, end) last zeroed by record seq. */
struct wtc_zrange {
  uint64_t start, end;
  uint64_t seq;
  uint32_t known;               /* 0: zeroed in part, its content unknown */
  uint32_t type;                /* WTLOG_ZERO or WTLOG_TRIM */
};

struct wtc_lastmap {
  struct wtc_last *slots;       /* WRITE sectors */
  uint64_t mask;                /* slot count - 1, a power of two */
  uint64_t used;
  GTree *zeroed;                /* start sector -> struct wtc_zrange, disjoint */
};

static gint
wtc_sector_key_cmp (gconstpointer a, gconstpointer b, gpointer unused)
{
  (void) unused;
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

struct wtc_lastmap *
wtc_lastmap_new (void)
{
  struct wtc_lastmap *m = g_new0 (struct wtc_lastmap, 1);
  m->mask = 1023;
  m->slots = g_new (struct wtc_last, m->mask + 1);
  for (uint64_t i = 0; i <= m->mask; i++)
    m->slots[i].sector = WTC_EMPTY;
  /* The key is the range's own start field: freeing the value frees both. */
  m->zeroed = g_tree_new_full (wtc_sector_key_cmp, NULL, NULL, g_free);
  return m;
}

void
wtc_lastmap_free (struct wtc_lastmap *m)
{
  if (!m)
    return;
  g_free (m->slots);
  g_tree_destroy (m->zeroed);
  g_free (m);
}

static inline uint64_t
wtc_mix (uint64_t x)
{
  /* splitmix64's finaliser: neighbouring sectors land far apart. */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static struct wtc_last *
wtc_lastmap_slot (struct wtc_lastmap *m, uint64_t sector)
{
  uint64_t i = wtc_mix (sector) & m->mask;
  while (m->slots[i].sector != WTC_EMPTY && m->slots[i].sector != sector)
    i = (i + 1) & m->mask;
  return &m->slots[i];
}

static void
wtc_lastmap_grow (struct wtc_lastmap *m)
{
  struct wtc_last *old = m->slots;
  uint64_t n = m->mask + 1;
  m->mask = 2 * n - 1;
  m->slots = g_new (struct wtc_last, 2 * n);
  for (uint64_t i = 0; i < 2 * n; i++)
    m->slots[i].sector = WTC_EMPTY;
  for (uint64_t i = 0; i < n; i++)
    if (old[i].sector != WTC_EMPTY)
      *wtc_lastmap_slot (m, old[i].sector) = old[i];
  g_free (old);
}

static void
wtc_lastmap_set (struct wtc_lastmap *m, uint64_t sector, uint64_t hash,
                 uint64_t seq, bool known, uint32_t type)
{
  struct wtc_last *s = wtc_lastmap_slot (m, sector);
  if (s->sector == WTC_EMPTY) {
    if (2 * (m->used + 1) > m->mask + 1) {
      wtc_lastmap_grow (m);
      s = wtc_lastmap_slot (m, sector);
    }
    m->used++;
  }
  *s = (struct wtc_last) { sector, hash, seq, known, type };
}

static struct wtc_zrange *
wtc_zrange_node_value (GTreeNode *n)
{
  return n ? g_tree_node_value (n) : NULL;
}

static void
wtc_zeroed_insert (struct wtc_lastmap *m, uint64_t start, uint64_t end,
                   const struct wtc_zrange *like)
{
  struct wtc_zrange *z = g_new (struct wtc_zrange, 1);
  *z = *like;
  z->start = start;
  z->end = end;
  g_tree_insert (m->zeroed, &z->start, z);
}

/* [start, end) last zeroed by seq: what older ranges hold there is cut
 * out of them (split in two where the new one lies inside). */
static void
wtc_zeroed_set (struct wtc_lastmap *m, uint64_t start, uint64_t end, uint64_t seq,
                bool known, uint32_t type)
{
  /* The range that starts at or before start, then those starting inside. */
  GTreeNode *n = g_tree_upper_bound (m->zeroed, &start);
  n = n ? g_tree_node_previous (n) : g_tree_node_last (m->zeroed);
  struct wtc_zrange *z = wtc_zrange_node_value (n);
  if (!z || z->end <= start)
    z = wtc_zrange_node_value (g_tree_lower_bound (m->zeroed, &start));
  while (z && z->start < end) {
    struct wtc_zrange old = *z;
    g_tree_remove (m->zeroed, &z->start);          /* frees z */
    if (old.start < start)
      wtc_zeroed_insert (m, old.start, start, &old);
    if (old.end > end)
      wtc_zeroed_insert (m, end, old.end, &old);
    uint64_t from = MAX (old.end, start);
    z = wtc_zrange_node_value (g_tree_lower_bound (m->zeroed, &from));
  }
  struct wtc_zrange fresh = { start, end, seq, known, type };
  wtc_zeroed_insert (m, start, end, &fresh);
}

void
wtc_lastmap_apply (struct wtc_lastmap *m, const struct wtlog_record *rec)
{
  if ((rec->flags & WTLOG_F_FAILED) || rec->length == 0)
    return;
  uint64_t first = rec->offset / WT_SECTOR_SIZE;
  if (rec->type == WTLOG_WRITE) {
    for (uint64_t i = 0; i < rec->nhashes; i++)
      wtc_lastmap_set (m, first + i, rec->hashes[i], rec->seq, true, rec->type);
    return;
  }
  if (rec->type != WTLOG_ZERO && rec->type != WTLOG_TRIM)
    return;
  /* A sector zeroed only in part holds bytes the log never saw. */
  uint64_t end = rec->offset + rec->length;
  uint64_t last = (end - 1) / WT_SECTOR_SIZE;
  uint64_t whole = (rec->offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE;
  uint64_t whole_end = end / WT_SECTOR_SIZE;
  if (whole >= whole_end) {
    wtc_zeroed_set (m, first, last + 1, rec->seq, false, rec->type);
    return;
  }
  if (first < whole)
    wtc_zeroed_set (m, first, whole, rec->seq, false, rec->type);
  wtc_zeroed_set (m, whole, whole_end, rec->seq, true, rec->type);
  if (whole_end <= last)
    wtc_zeroed_set (m, whole_end, last + 1, rec->seq, false, rec->type);
}

static gint
wtc_last_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtc_last *) a)->sector;
  uint64_t y = ((const struct wtc_last *) b)->sector;
  return x < y ? -1 : x > y;
}

/* The WRITE sectors, sorted by sector (struct wtc_last). */
static GArray *
wtc_lastmap_writes_sorted (const struct wtc_lastmap *m)
{
  GArray *out = g_array_sized_new (FALSE, FALSE, sizeof (struct wtc_last), (guint) m->used);
  for (uint64_t i = 0; i <= m->mask; i++)
    if (m->slots[i].sector != WTC_EMPTY)
      g_array_append_val (out, m->slots[i]);
  g_array_sort (out, wtc_last_cmp);
  return out;
}

struct wtc_lastmap *
wtc_lastmap_from_log (const char *path, struct wtlog_header *h,
                      struct wtlog_status *st, GArray *chanrecs,
                      GError **error)
{
  char err[512];
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (path, h, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return NULL;
  }
  struct wtc_lastmap *m = wtc_lastmap_new ();
  while (wtlog_reader_next (r, &rec) == 0) {
    wtc_lastmap_apply (m, &rec);
    if (chanrecs)
      wtc_chanrec_note (chanrecs, &rec);
  }
  *st = *wtlog_reader_status (r);
  wtlog_reader_close (r);
  return m;
}

struct wtc_compare {
  struct wtc_image *img;
  GArray *diffs;
  uint64_t touched, compared;
};

/* One touched sector whose last write carried hash (when known). */
static bool
wtc_compare_one (struct wtc_compare *c, uint64_t sector, uint64_t hash, uint64_t seq,
                 bool known, uint32_t type, GError **error)
{
  c->touched++;
  if (!known)
    return true;
  const unsigned char *p = wtc_image_sector (c->img, sector, error);
  if (!p)
    return false;
  uint64_t h = wt_sector_hash (p);
  c->compared++;
  if (h != hash) {
    struct wtc_diff d = { sector, h, hash, seq, type };
    g_array_append_val (c->diffs, d);
  }
  return true;
}

static bool
wtc_compare_write (struct wtc_compare *c, const struct wtc_last *l, GError **error)
{
  return wtc_compare_one (c, l->sector, l->hash, l->seq, l->known, l->type, error);
}

/* The sectors of z, each against the newer of z and its WRITE slot (the
 * writes from *i on, sorted, consumed as they are passed). */
static bool
wtc_compare_zrange (struct wtc_compare *c, const struct wtc_zrange *z,
                    const GArray *writes, guint *i, GError **error)
{
  for (uint64_t s = z->start; s < z->end; s++) {
    const struct wtc_last *w = *i < writes->len
      ? &g_array_index (writes, struct wtc_last, *i) : NULL;
    bool ok;
    if (w && w->sector == s) {
      ++*i;
      ok = w->seq > z->seq ? wtc_compare_write (c, w, error)
        : wtc_compare_one (c, s, wtc_zero_hash (), z->seq, z->known, z->type, error);
    }
    else
      ok = wtc_compare_one (c, s, wtc_zero_hash (), z->seq, z->known, z->type, error);
    if (!ok)
      return false;
  }
  return true;
}

GArray *
wtc_lastmap_compare (const struct wtc_lastmap *m, struct wtc_image *img,
                     uint64_t *touched, uint64_t *compared, GError **error)
{
  g_autoptr (GArray) writes = wtc_lastmap_writes_sorted (m);
  struct wtc_compare c = {
    .img = img, .diffs = g_array_new (FALSE, FALSE, sizeof (struct wtc_diff)),
  };
  guint i = 0;
  bool ok = true;
  for (GTreeNode *n = g_tree_node_first (m->zeroed); ok && n; n = g_tree_node_next (n)) {
    const struct wtc_zrange *z = g_tree_node_value (n);
    for (; ok && i < writes->len
           && g_array_index (writes, struct wtc_last, i).sector < z->start; i++)
      ok = wtc_compare_write (&c, &g_array_index (writes, struct wtc_last, i), error);
    ok = ok && wtc_compare_zrange (&c, z, writes, &i, error);
  }
  for (; ok && i < writes->len; i++)
    ok = wtc_compare_write (&c, &g_array_index (writes, struct wtc_last, i), error);
  *touched = c.touched;
  *compared = c.compared;
  if (!ok) {
    g_array_unref (c.diffs);
    return NULL;
  }
  return c.diffs;
}

/* Whether every sector the log touched holds its last logged content in
 * image: a disk the log was applied to. */
static bool
wtc_image_has_log_applied (const char *log, const char *image)
{
  struct wtlog_header h;
  struct wtlog_status st;
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_lastmap) map = wtc_lastmap_from_log (log, &h, &st, NULL, &error);
  if (!map)
    return false;
  g_autoptr (wtc_image) img = wtc_image_open (image, &error);
  if (!img)
    return false;
  uint64_t touched = 0, compared = 0;
  g_autoptr (GArray) diffs = wtc_lastmap_compare (map, img, &touched, &compared, &error);
  return diffs && diffs->len == 0;
}

/* Whether log is a store log (header flag STORE) that was not closed. */
static bool
wtc_store_log_unclosed (const char *log)
{
  char err[512];
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r)
    return false;               /* the command's own reading says why */
  bool closed = true;
  if (h.flags & WTLOG_H_STORE) {
    while (wtlog_reader_next (r, &rec) == 0)
      ;
    closed = wtlog_reader_status (r)->closed;
  }
  wtlog_reader_close (r);
  return !closed;
}

bool
wtc_store_log_applied (const char *log, const char *image, GError **error)
{
  if (!wtc_store_log_unclosed (log) || wtc_image_has_log_applied (log, image))
    return true;
  /* The base is the image itself: with data=on it is the disk at the start
   * or part way through the unload's apply (a prefix applied again changes
   * nothing); with the queue (data=off) it holds the records flagged
   * APPLIED, which replay skips, and only the image has their bytes.  In a
   * run directory the replayed disk goes beside disk.img. */
  g_autofree char *dir = g_path_get_dirname (log);
  g_autofree char *base = g_strdup (image);
  g_autofree char *replayed = g_build_filename (dir, "disk.img.replayed", NULL);
  g_autofree char *run_base = g_build_filename (dir, "base.img", NULL);
  if (!g_file_test (run_base, G_FILE_TEST_IS_REGULAR)) {
    g_free (replayed);
    replayed = g_strconcat (log, ".replayed.img", NULL);
  }
  g_autofree char *qlog = g_shell_quote (log);
  g_autofree char *qbase = g_shell_quote (base);
  g_autofree char *qreplayed = g_shell_quote (replayed);
  g_set_error (error, WTC_ERROR, 0, "%s: recorded with the log as the store (stage=on) "
               "and not closed: nbdkit stopped before it applied the log, and %s does "
               "not hold what the log says was written (it is the disk as it was at the "
               "start of the run, or partly updated); make the disk after the run with: "
               "wtrack replay %s --base %s --final-image %s --out %s, then give it as "
               "the image (--image %s)", log, image, qlog, qbase, qbase, qreplayed, qreplayed);
  return false;
}
