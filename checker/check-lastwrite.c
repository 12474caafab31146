/* The last logged hash of every touched sector, in an open-addressing table. */
#include "check-lastwrite.h"

#include <inttypes.h>
#include <string.h>

#include "check-channel.h"
#include "sector-hash.h"

/* No disk has this many sectors, so it marks an empty slot. */
#define WTC_EMPTY UINT64_MAX

struct wtc_lastmap {
  struct wtc_last *slots;
  uint64_t mask;                /* slot count - 1, a power of two */
  uint64_t used;
};

struct wtc_lastmap *
wtc_lastmap_new (void)
{
  struct wtc_lastmap *m = g_new0 (struct wtc_lastmap, 1);
  m->mask = 1023;
  m->slots = g_new (struct wtc_last, m->mask + 1);
  for (uint64_t i = 0; i <= m->mask; i++)
    m->slots[i].sector = WTC_EMPTY;
  return m;
}

void
wtc_lastmap_free (struct wtc_lastmap *m)
{
  if (!m)
    return;
  g_free (m->slots);
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
  uint64_t end = rec->offset + rec->length;
  uint64_t last = (end - 1) / WT_SECTOR_SIZE;
  for (uint64_t s = first; s <= last; s++) {
    /* A sector zeroed only in part holds bytes the log never saw. */
    bool whole = s * WT_SECTOR_SIZE >= rec->offset
      && (s + 1) * WT_SECTOR_SIZE <= end;
    wtc_lastmap_set (m, s, wtc_zero_hash (), rec->seq, whole, rec->type);
  }
}

uint64_t
wtc_lastmap_count (const struct wtc_lastmap *m)
{
  return m->used;
}

static gint
wtc_last_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtc_last *) a)->sector;
  uint64_t y = ((const struct wtc_last *) b)->sector;
  return x < y ? -1 : x > y;
}

GArray *
wtc_lastmap_sorted (const struct wtc_lastmap *m)
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

GArray *
wtc_lastmap_compare (const GArray *sorted, struct wtc_image *img,
                     uint64_t *compared, GError **error)
{
  g_autoptr (GArray) diffs = g_array_new (FALSE, FALSE, sizeof (struct wtc_diff));
  *compared = 0;
  for (guint i = 0; i < sorted->len; i++) {
    const struct wtc_last *l = &g_array_index (sorted, struct wtc_last, i);
    if (!l->known)
      continue;
    const unsigned char *p = wtc_image_sector (img, l->sector, error);
    if (!p)
      return NULL;
    uint64_t h = wt_sector_hash (p);
    ++*compared;
    if (h != l->hash) {
      struct wtc_diff d = { l->sector, h, l->hash, l->seq, l->type };
      g_array_append_val (diffs, d);
    }
  }
  return g_steal_pointer (&diffs);
}
