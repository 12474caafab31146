/* Step 1 of check: every file sector mapped through its extents to the
 * disk, the image read in disk order in large windows, and each sector's
 * hash compared with the manifest's. Memory: the extents and the bad
 * sectors, nothing per good sector. */
#include <inttypes.h>
#include <string.h>

#include "check.h"
#include "sector-hash.h"

/* A stretch of a file that lies contiguous on the disk. */
struct wtc_segment {
  uint64_t disk_first;
  uint64_t file_first;
  uint64_t count;
  uint32_t file;
};

static gint
wtc_extent_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtmf_extent *) a)->logical;
  uint64_t y = ((const struct wtmf_extent *) b)->logical;
  return x < y ? -1 : x > y;
}

static gint
wtc_segment_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = ((const struct wtc_segment *) a)->disk_first;
  uint64_t y = ((const struct wtc_segment *) b)->disk_first;
  return x < y ? -1 : x > y;
}

static void
wtc_add_bad (struct wtc_check *c, uint32_t fi, uint64_t fs, uint64_t ds,
             uint64_t image, bool unwritten)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  struct wtc_bad b = {
    .file = fi, .file_sector = fs, .disk_sector = ds,
    .expected = f->hashes[fs], .image = image, .unwritten = unwritten,
    .next_same_expected = -1,
  };
  g_array_append_val (c->bad, b);
  c->files[fi].bad++;
}

/* Sectors of a file no extent covers: a hole reads as zeros. */
static void
wtc_check_hole (struct wtc_check *c, uint32_t fi, uint64_t from, uint64_t to)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  for (uint64_t s = from; s < to && s < f->nsectors; s++) {
    c->files[fi].checked++;
    if (f->hashes[s] != wtc_zero_hash ())
      wtc_add_bad (c, fi, s, WTC_NO_SECTOR, wtc_zero_hash (), false);
  }
}

static bool
wtc_extent_usable (struct wtc_check *c, const struct wtmf_file *f,
                   const struct wtmf_extent *e, uint32_t ei)
{
  if (e->logical % WT_SECTOR_SIZE || e->physical % WT_SECTOR_SIZE
      || e->length % WT_SECTOR_SIZE) {
    wtc_warn (c, "%s: extent %" PRIu32 " (logical %" PRIu64 ", physical %" PRIu64
              ", length %" PRIu64 ") is not aligned to 512 bytes: not checked",
              f->path, ei, e->logical, e->physical, e->length);
    return false;
  }
  if (!(e->flags & WTMF_EXT_UNMAPPABLE)
      && (e->physical > c->image_size || e->length > c->image_size - e->physical)) {
    wtc_warn (c, "%s: extent %" PRIu32 " (physical %" PRIu64 ", length %" PRIu64
              ") lies outside the disk (%" PRIu64 " bytes): not checked",
              f->path, ei, e->physical, e->length, c->image_size);
    return false;
  }
  return true;
}

/* The sectors [first, end) of file fi that extent e covers. */
static void
wtc_map_extent (struct wtc_check *c, uint32_t fi, const struct wtmf_extent *e,
                uint64_t first, uint64_t end, GArray *segments)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  uint64_t disk_first = (e->physical + (first * WT_SECTOR_SIZE - e->logical)) / WT_SECTOR_SIZE;
  if (e->flags & WTMF_EXT_UNMAPPABLE) {
    c->files[fi].uncheckable += end - first;
    return;
  }
  if (e->flags & WTMF_EXT_UNWRITTEN) {
    for (uint64_t s = first; s < end; s++) {
      c->files[fi].checked++;
      if (f->hashes[s] != wtc_zero_hash ())
        wtc_add_bad (c, fi, s, disk_first + (s - first), wtc_zero_hash (), true);
    }
    return;
  }
  struct wtc_segment seg = { disk_first, first, end - first, fi };
  g_array_append_val (segments, seg);
}

/* Extents in file order; holes between them; sectors past the last. */
static void
wtc_map_file (struct wtc_check *c, uint32_t fi, GArray *segments)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  g_autoptr (GArray) ext = g_array_new (FALSE, FALSE, sizeof (struct wtmf_extent));
  g_array_append_vals (ext, f->extents, f->nextents);
  g_array_sort (ext, wtc_extent_cmp);
  uint64_t next = 0;            /* first sector not yet accounted for */
  for (guint i = 0; i < ext->len && next < f->nsectors; i++) {
    const struct wtmf_extent *e = &g_array_index (ext, struct wtmf_extent, i);
    if (!wtc_extent_usable (c, f, e, i)) {
      uint64_t skip_end = MIN (f->nsectors, (e->logical + e->length + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE);
      uint64_t skip_from = MAX (next, e->logical / WT_SECTOR_SIZE);
      wtc_check_hole (c, fi, next, skip_from);
      if (skip_end > skip_from)
        c->files[fi].uncheckable += skip_end - skip_from;
      next = MAX (next, skip_end);
      continue;
    }
    uint64_t first = e->logical / WT_SECTOR_SIZE;
    uint64_t end = MIN (f->nsectors, first + e->length / WT_SECTOR_SIZE);
    if (end <= next)
      continue;                 /* overlaps what earlier extents mapped */
    wtc_check_hole (c, fi, next, first);
    first = MAX (first, next);
    wtc_map_extent (c, fi, e, first, end, segments);
    next = end;
  }
  wtc_check_hole (c, fi, next, f->nsectors);
}

static uint64_t
wtc_file_sector_hash (const struct wtmf_file *f, uint64_t fs,
                      const unsigned char *p)
{
  uint64_t tail = f->size % WT_SECTOR_SIZE;
  if (fs + 1 < f->nsectors || tail == 0)
    return wt_sector_hash (p);
  /* The bytes past the end of the file are not the file's. */
  unsigned char last[WT_SECTOR_SIZE] = { 0 };
  memcpy (last, p, tail);
  return wt_sector_hash (last);
}

static bool
wtc_read_segment (struct wtc_check *c, struct wtc_image *img,
                  const struct wtc_segment *seg, GError **error)
{
  const struct wtmf_file *f = &c->mf->files[seg->file];
  for (uint64_t i = 0; i < seg->count; i++) {
    const unsigned char *p = wtc_image_sector (img, seg->disk_first + i, error);
    if (!p)
      return false;
    uint64_t fs = seg->file_first + i;
    uint64_t h = wtc_file_sector_hash (f, fs, p);
    c->files[seg->file].checked++;
    if (h != f->hashes[fs])
      wtc_add_bad (c, seg->file, fs, seg->disk_first + i, h, false);
  }
  c->read_bytes += seg->count * WT_SECTOR_SIZE;
  return true;
}

static gint
wtc_bad_file_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_bad *x = a, *y = b;
  if (x->file != y->file)
    return x->file < y->file ? -1 : 1;
  return x->file_sector < y->file_sector ? -1 : x->file_sector > y->file_sector;
}

bool
wtc_find_bad (struct wtc_check *c, GError **error)
{
  g_autoptr (wtc_image) img = wtc_image_open (c->image_path, error);
  if (!img)
    return false;
  c->image_size = wtc_image_size (img);
  c->files = g_new0 (struct wtc_file_stat, c->mf->nfiles);
  g_autoptr (GArray) segments = g_array_new (FALSE, FALSE, sizeof (struct wtc_segment));
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    wtc_map_file (c, fi, segments);
  g_array_sort (segments, wtc_segment_cmp);
  gint64 t0 = g_get_monotonic_time ();
  for (guint i = 0; i < segments->len; i++)
    if (!wtc_read_segment (c, img, &g_array_index (segments, struct wtc_segment, i), error))
      return false;
  c->read_secs = (double) (g_get_monotonic_time () - t0) / 1e6;
  g_array_sort (c->bad, wtc_bad_file_cmp);
  return true;
}
