/* Step 2 of check: one streaming pass over the log, looking up only the bad
 * sectors (memory grows with the damage, not with the log), then one class
 * per bad sector. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "channel.h"
#include "check/check.h"
#include "search.h"
#include "sector-hash.h"

/* Expected content shared by more bad sectors than this (a fill pattern)
 * says nothing about where one of them went. */
#define WTC_MAX_SAME_EXPECTED 8
/* Nor does content the manifest expects at more disk sectors than this;
 * it also bounds the memory of the places kept per bad hash. */
#define WTC_MAX_PLACES 64

const char *
wtc_class_name (unsigned cls)
{
  static const char *const names[] = {
    [WTC_UNMAPPED] = "unmapped", [WTC_LIED] = "lied",
    [WTC_OVERWRITTEN] = "overwritten", [WTC_MISPLACED] = "misplaced",
    [WTC_LOST] = "lost",
  };
  return cls < WTC_NCLASSES ? names[cls] : "?";
}

void
wtc_warn (struct wtc_check *c, const char *fmt, ...)
{
  /* A hostile manifest can make one warning per extent. */
  if (c->warnings->len >= WTC_MAX_WARNINGS) {
    c->warnings_left_out++;
    return;
  }
  va_list ap;
  va_start (ap, fmt);
  g_ptr_array_add (c->warnings, g_strdup_vprintf (fmt, ap));
  va_end (ap);
}

/* Bad sectors in disk order, for range lookups by the log's records. */
struct wtc_disk_index {
  uint64_t sector;
  guint bad;
};

static gint
wtc_disk_index_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtc_disk_index *) a)->sector;
  uint64_t y = ((const struct wtc_disk_index *) b)->sector;
  return x < y ? -1 : x > y;
}

struct wtc_lookup {
  GArray *by_disk;              /* struct wtc_disk_index */
  GHashTable *by_expected;      /* &bad->expected -> first bad index + 1 */
  GHashTable *places;           /* struct wtc_place: where the manifest
                                   expects a traced hash */
};

/* A disk sector where the manifest expects hash: a write of hash there is
 * where it belongs, not a misplaced copy of a bad sector's content (two
 * sectors inside one linus2006 chunk hold the same bytes). */
struct wtc_place {
  uint64_t sector;
  uint64_t hash;
};

static guint
wtc_place_hash (gconstpointer p)
{
  const struct wtc_place *x = p;
  return (guint) (x->hash ^ ((x->sector * 0x9e3779b97f4a7c15ull) >> 32));
}

static gboolean
wtc_place_equal (gconstpointer a, gconstpointer b)
{
  const struct wtc_place *x = a, *y = b;
  return x->sector == y->sector && x->hash == y->hash;
}

static GArray *
wtc_index_by_disk (const struct wtc_check *c)
{
  GArray *idx = g_array_new (FALSE, FALSE, sizeof (struct wtc_disk_index));
  for (guint i = 0; i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->disk_sector != WTC_NO_SECTOR) {
      struct wtc_disk_index e = { b->disk_sector, i };
      g_array_append_val (idx, e);
    }
  }
  g_array_sort (idx, wtc_disk_index_cmp);
  return idx;
}

static GHashTable *
wtc_index_by_expected (struct wtc_check *c)
{
  GHashTable *t = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr (GHashTable) count = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < c->bad->len; i++) {
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    gpointer n = g_hash_table_lookup (count, &b->expected);
    g_hash_table_insert (count, &b->expected, GUINT_TO_POINTER (GPOINTER_TO_UINT (n) + 1));
  }
  for (guint i = c->bad->len; i-- > 0;) {
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->expected == wtc_zero_hash ())
      continue;
    if (GPOINTER_TO_UINT (g_hash_table_lookup (count, &b->expected)) > WTC_MAX_SAME_EXPECTED) {
      b->ambiguous = true;
      continue;
    }
    gpointer head = g_hash_table_lookup (t, &b->expected);
    b->next_same_expected = head ? (gint) GPOINTER_TO_UINT (head) - 1 : -1;
    g_hash_table_insert (t, &b->expected, GUINT_TO_POINTER (i + 1));
  }
  return t;
}

/* Stops tracing hash: its bad sectors become ambiguous. */
static void
wtc_untrace (struct wtc_check *c, GHashTable *by_expected, uint64_t hash)
{
  gpointer head = g_hash_table_lookup (by_expected, &hash);
  for (gint j = head ? (gint) GPOINTER_TO_UINT (head) - 1 : -1; j >= 0;) {
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, j);
    b->ambiguous = true;
    j = b->next_same_expected;
  }
  g_hash_table_remove (by_expected, &hash);
}

/* Notes the disk sectors of segment seg that expect a traced hash; counts
 * them per hash in count. */
static void
wtc_places_of_segment (const struct wtc_check *c, const struct wtc_segment *seg,
                       GHashTable *by_expected, GHashTable *count, GHashTable *places)
{
  const struct wtmf_file *f = &c->mf->files[seg->file];
  for (uint64_t i = 0; i < seg->count; i++) {
    gpointer key = &f->hashes[seg->file_first + i];
    if (!g_hash_table_contains (by_expected, key))
      continue;
    guint n = GPOINTER_TO_UINT (g_hash_table_lookup (count, key)) + 1;
    g_hash_table_insert (count, key, GUINT_TO_POINTER (n));
    if (n > WTC_MAX_PLACES)
      continue;
    struct wtc_place *pl = g_new (struct wtc_place, 1);
    pl->sector = seg->disk_first + i;
    pl->hash = *(const uint64_t *) key;
    g_hash_table_add (places, pl);
  }
}

/* Every disk sector where the manifest expects one of the traced hashes.
 * One pass over the mapped file sectors (each once, however the extents
 * overlap); memory grows with the bad hashes only. */
static GHashTable *
wtc_index_places (struct wtc_check *c, GHashTable *by_expected)
{
  GHashTable *places = g_hash_table_new_full (wtc_place_hash, wtc_place_equal, g_free, NULL);
  if (g_hash_table_size (by_expected) == 0)
    return places;
  g_autoptr (GHashTable) count = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < c->mapped->len; i++)
    wtc_places_of_segment (c, &g_array_index (c->mapped, struct wtc_segment, i),
                           by_expected, count, places);
  GHashTableIter it;
  gpointer key, n;
  g_autoptr (GArray) common = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  g_hash_table_iter_init (&it, count);
  while (g_hash_table_iter_next (&it, &key, &n))
    if (GPOINTER_TO_UINT (n) > WTC_MAX_PLACES)
      g_array_append_val (common, *(uint64_t *) key);
  for (guint i = 0; i < common->len; i++)
    wtc_untrace (c, by_expected, g_array_index (common, uint64_t, i));
  return places;
}

/* The first entry of by_disk at or after sector. */
static uint64_t
wtc_disk_index_at (size_t i, const void *by_disk)
{
  return g_array_index ((const GArray *) by_disk, struct wtc_disk_index, i).sector;
}

static guint
wtc_disk_lower_bound (const GArray *by_disk, uint64_t sector)
{
  return (guint) wt_lower_bound (0, by_disk->len, sector, wtc_disk_index_at, by_disk);
}

static void
wtc_note_write (struct wtc_bad *b, const struct wtlog_record *rec,
                uint64_t hash, bool known)
{
  b->last_seq = rec->seq;
  b->last_t = rec->t_start;
  b->last_hash = hash;
  b->last_known = known;
  if (known && hash == b->expected) {
    b->expected_seq = rec->seq;
    b->replaced_seq = 0;
  } else if (b->expected_seq && !b->replaced_seq) {
    b->replaced_seq = rec->seq;
  }
  if (known && hash == b->image)
    b->holds_seq = rec->seq;
}

/* Bad sectors in [first, first + n) of the disk. */
static void
wtc_note_range (struct wtc_check *c, const struct wtc_lookup *lk,
                const struct wtlog_record *rec, uint64_t first, uint64_t n)
{
  uint64_t end_byte = rec->offset + rec->length;
  for (guint i = wtc_disk_lower_bound (lk->by_disk, first); i < lk->by_disk->len; i++) {
    const struct wtc_disk_index *e = &g_array_index (lk->by_disk, struct wtc_disk_index, i);
    if (e->sector >= first + n)
      break;
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, e->bad);
    if (rec->type == WTLOG_WRITE) {
      wtc_note_write (b, rec, rec->hashes[e->sector - first], true);
    } else {
      bool whole = e->sector * WT_SECTOR_SIZE >= rec->offset
        && (e->sector + 1) * WT_SECTOR_SIZE <= end_byte;
      wtc_note_write (b, rec, wtc_zero_hash (), whole);
    }
  }
}

/* Where the expected content of bad sectors went instead. */
static void
wtc_note_misplaced (struct wtc_check *c, const struct wtc_lookup *lk,
                    const struct wtlog_record *rec, uint64_t first)
{
  for (uint64_t i = 0; i < rec->nhashes; i++) {
    gpointer head = g_hash_table_lookup (lk->by_expected, &rec->hashes[i]);
    struct wtc_place here = { first + i, rec->hashes[i] };
    if (head && g_hash_table_contains (lk->places, &here))
      continue;
    for (gint j = head ? (gint) GPOINTER_TO_UINT (head) - 1 : -1; j >= 0;) {
      struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, j);
      if (b->disk_sector != first + i) {
        b->misplaced_count++;
        b->misplaced_sector = first + i;
        b->misplaced_seq = rec->seq;
      }
      j = b->next_same_expected;
    }
  }
}

static void
wtc_log_record (struct wtc_check *c, const struct wtc_lookup *lk,
                const struct wtlog_record *rec)
{
  if (rec->type == WTLOG_CHANNEL) {
    if (c->channel)
      wtc_channel_place_record (c->channel, rec);
    return;
  }
  if ((rec->flags & WTLOG_F_FAILED) || rec->length == 0
      || (rec->type != WTLOG_WRITE && rec->type != WTLOG_ZERO && rec->type != WTLOG_TRIM))
    return;
  uint64_t first = rec->offset / WT_SECTOR_SIZE;
  uint64_t n = wtlog_sectors_touched (rec->offset, rec->length);
  if (lk->by_disk->len)
    wtc_note_range (c, lk, rec, first, n);
  if (rec->type == WTLOG_WRITE && g_hash_table_size (lk->by_expected))
    wtc_note_misplaced (c, lk, rec, first);
}

static gint
wtc_mark_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtc_mark *) a)->guest_ns;
  uint64_t y = ((const struct wtc_mark *) b)->guest_ns;
  return x < y ? -1 : x > y;
}

/* The MARKs, placed while the log streamed by, on both clocks. */
static void
wtc_collect_marks (struct wtc_check *c)
{
  if (!c->channel)
    return;
  for (guint i = 0; i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type == WTCH_MARK && m->placed) {
      struct wtc_mark mk = { m->guest_ns, m->log_t_start };
      g_array_append_val (c->marks, mk);
    }
  }
  g_array_sort (c->marks, wtc_mark_cmp);
}

/* An image shorter than the disk the log describes was cut: the sectors
 * past its end were not compared, whatever the extents say. */
static void
wtc_check_image_length (struct wtc_check *c)
{
  if (c->image_size >= c->log_header.disk_size)
    return;
  c->image_short = true;
  wtc_warn (c, "%s: %" PRIu64 " bytes, shorter than the %" PRIu64
            "-byte disk the log describes: the image is truncated", c->image_path,
            c->image_size, c->log_header.disk_size);
}

bool
wtc_log_pass (struct wtc_check *c, GError **error)
{
  char err[512];
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (c->log_path, &c->log_header, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  struct wtc_lookup lk = {
    .by_disk = wtc_index_by_disk (c),
    .by_expected = wtc_index_by_expected (c),
  };
  lk.places = wtc_index_places (c, lk.by_expected);
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_log_record (c, &lk, &rec);
  c->log_status = *wtlog_reader_status (r);
  c->log_read = true;
  wtlog_reader_close (r);
  g_array_unref (lk.by_disk);
  g_hash_table_unref (lk.by_expected);
  g_hash_table_unref (lk.places);
  wtc_collect_marks (c);
  wtc_check_image_length (c);
  return true;
}

static uint8_t
wtc_class_of (const struct wtc_bad *b)
{
  if (b->delalloc)
    return WTC_LOST;            /* no block: the kernel kept the bytes */
  if (b->disk_sector == WTC_NO_SECTOR)
    return WTC_UNMAPPED;
  if (b->last_seq && b->last_known && b->last_hash == b->expected)
    return WTC_LIED;
  if (b->expected_seq && b->replaced_seq)
    return WTC_OVERWRITTEN;
  if (b->misplaced_count)
    return WTC_MISPLACED;
  return WTC_LOST;
}

void
wtc_classify (struct wtc_check *c)
{
  memset (c->by_class, 0, sizeof c->by_class);
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    memset (c->files[fi].by_class, 0, sizeof c->files[fi].by_class);
  for (guint i = 0; i < c->bad->len; i++) {
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    b->cls = wtc_class_of (b);
    c->by_class[b->cls]++;
    c->files[b->file].by_class[b->cls]++;
  }
}

static uint64_t
wtc_interpolate (const struct wtc_mark *a, const struct wtc_mark *b, uint64_t g)
{
  if (b->guest_ns == a->guest_ns)
    return a->log_ns;
  double f = ((double) g - (double) a->guest_ns) / ((double) b->guest_ns - (double) a->guest_ns);
  double t = (double) a->log_ns + f * ((double) b->log_ns - (double) a->log_ns);
  return t < 0 ? 0 : (uint64_t) t;
}

static uint64_t
wtc_mark_guest_at (size_t i, const void *marks)
{
  return g_array_index ((const GArray *) marks, struct wtc_mark, i).guest_ns;
}

bool
wtc_guest_to_log (const struct wtc_check *c, uint64_t guest_ns,
                  uint64_t *log_ns, bool *approx)
{
  const GArray *m = c->marks;
  if (!m || m->len == 0)
    return false;
  const struct wtc_mark *first = &g_array_index (m, struct wtc_mark, 0);
  const struct wtc_mark *last = &g_array_index (m, struct wtc_mark, m->len - 1);
  /* Outside the marks both clocks are taken to run at the same rate. */
  if (guest_ns < first->guest_ns || guest_ns > last->guest_ns) {
    const struct wtc_mark *near = guest_ns < first->guest_ns ? first : last;
    int64_t t = (int64_t) near->log_ns + ((int64_t) guest_ns - (int64_t) near->guest_ns);
    *log_ns = t < 0 ? 0 : (uint64_t) t;
    *approx = true;
    return true;
  }
  /* The first MARK at or after guest_ns: a binary search, as a report asks
   * once per run and a channel may hold millions of MARKs. */
  size_t lo = wt_lower_bound (1, m->len - 1, guest_ns, wtc_mark_guest_at, m);
  if (m->len == 1) {
    *log_ns = last->log_ns;
    *approx = false;
    return true;
  }
  *log_ns = wtc_interpolate (&g_array_index (m, struct wtc_mark, lo - 1),
                             &g_array_index (m, struct wtc_mark, lo), guest_ns);
  *approx = false;
  return true;
}

static char *
wtc_msg_value (const struct wtc_check *c, uint16_t type, const char *key)
{
  const struct wtc_msg *m = c->channel ? wtc_channel_last (c->channel, type) : NULL;
  return m ? wtc_msg_kv (m, key) : NULL;
}

char *
wtc_result_value (const struct wtc_check *c, const char *key)
{
  return wtc_msg_value (c, WTCH_RESULT, key);
}

char *
wtc_hello_value (const struct wtc_check *c, const char *key)
{
  return wtc_msg_value (c, WTCH_HELLO, key);
}

