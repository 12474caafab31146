/* Step 1 of check: every file sector mapped through its extents to the
 * disk, the image read in disk order in large windows, and each sector's
 * hash compared with the manifest's. Memory: the extents and the bad
 * sectors, nothing per good sector. */
#include <inttypes.h>
#include <string.h>

#include "check/check.h"
#include "lib/btrfs-chunks.h"
#include "sector-hash.h"

/* An extent and its place in the manifest, so that extents starting at the
 * same file offset keep the manifest's order (the first one wins). */
struct wtc_ordered_extent {
  struct wtmf_extent e;
  uint32_t index;
};

static gint
wtc_extent_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_ordered_extent *x = a, *y = b;
  if (x->e.logical != y->e.logical)
    return x->e.logical < y->e.logical ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
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

/* Why extent e cannot be read from the image, or NULL when it can. */
static const char *
wtc_extent_flaw (const struct wtc_check *c, const struct wtmf_extent *e)
{
  if (e->flags & WTC_EXT_NO_CHUNK)
    return "lies in no chunk of the btrfs chunk map";
  if (e->logical % WT_SECTOR_SIZE || e->physical % WT_SECTOR_SIZE
      || e->length % WT_SECTOR_SIZE)
    return "is not aligned to 512 bytes";
  if (!(e->flags & WTMF_EXT_UNMAPPABLE)
      && (e->physical > c->image_size || e->length > c->image_size - e->physical))
    return "lies outside the disk image";
  return NULL;
}

/* The file sectors [*first, *end) extent e covers, cut at the end of the
 * file; false when it starts at or past the end (an extent preallocated past
 * EOF holds none of the file's data). A misaligned extent covers every
 * sector it touches. */
static bool
wtc_extent_sectors (const struct wtmf_file *f, const struct wtmf_extent *e,
                    uint64_t *first, uint64_t *end)
{
  *first = e->logical / WT_SECTOR_SIZE;
  if (*first >= f->nsectors)
    return false;
  /* The manifest reader refused logical + length past 2^64. */
  uint64_t last_byte = e->logical + e->length - 1;
  *end = MIN (f->nsectors, last_byte / WT_SECTOR_SIZE + 1);
  return true;
}

/* A delayed allocation still pending after the guest's sync: the kernel
 * holds these bytes and never wrote them, so no block holds them. A sector
 * that must read zeros is clean (a hole would read so); any other is lost. */
static void
wtc_check_delalloc (struct wtc_check *c, uint32_t fi, uint64_t first, uint64_t end)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  for (uint64_t s = first; s < end; s++) {
    c->files[fi].checked++;
    if (f->hashes[s] != wtc_zero_hash ()) {
      wtc_add_bad (c, fi, s, WTC_NO_SECTOR, wtc_zero_hash (), false);
      g_array_index (c->bad, struct wtc_bad, c->bad->len - 1).delalloc = true;
    }
  }
}

/* The sectors [first, end) of file fi that extent e covers. */
static void
wtc_map_extent (struct wtc_check *c, uint32_t fi, const struct wtmf_extent *e,
                uint64_t first, uint64_t end)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  uint64_t disk_first = (e->physical + (first * WT_SECTOR_SIZE - e->logical)) / WT_SECTOR_SIZE;
  if (e->flags & WTMF_EXT_DELALLOC) {
    wtc_check_delalloc (c, fi, first, end);
    return;
  }
  if (e->flags & WTMF_EXT_UNMAPPABLE) {
    c->files[fi].uncheckable += end - first;
    return;
  }
  struct wtc_segment seg = { disk_first, first, end - first, fi,
                             (e->flags & WTMF_EXT_UNWRITTEN) != 0 };
  g_array_append_val (c->mapped, seg);
  if (!seg.unwritten)
    return;
  for (uint64_t s = first; s < end; s++) {
    c->files[fi].checked++;
    if (f->hashes[s] != wtc_zero_hash ())
      wtc_add_bad (c, fi, s, disk_first + (s - first), wtc_zero_hash (), true);
  }
}

/* Extents in file order; holes between them; sectors past the last. A file
 * sector two extents claim is compared once, through the extent that starts
 * first (the earlier in the manifest on a tie), and counted in
 * claimed_twice: the manifest contradicts itself there. Time: a sort of the
 * extents, then one pass, whatever they overlap. */
static void
wtc_map_file (struct wtc_check *c, uint32_t fi)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  struct wtc_file_stat *st = &c->files[fi];
  g_autoptr (GArray) ext = g_array_sized_new (FALSE, FALSE, sizeof (struct wtc_ordered_extent),
                                              f->nextents);
  for (uint32_t i = 0; i < f->nextents; i++) {
    struct wtc_ordered_extent oe = { f->extents[i], i };
    g_array_append_val (ext, oe);
  }
  g_array_sort (ext, wtc_extent_cmp);
  uint64_t next = 0;            /* first sector no extent has claimed yet */
  uint64_t twice_next = 0;      /* first sector not yet counted as claimed twice */
  uint64_t first_twice = UINT64_MAX;
  for (guint i = 0; i < ext->len; i++) {
    const struct wtc_ordered_extent *oe = &g_array_index (ext, struct wtc_ordered_extent, i);
    uint64_t first, end;
    if (!wtc_extent_sectors (f, &oe->e, &first, &end))
      break;                    /* sorted: every later one is past EOF too */
    if (first < next) {
      uint64_t from = MAX (first, twice_next), to = MIN (end, next);
      if (to > from) {
        st->claimed_twice += to - from;
        first_twice = MIN (first_twice, from);
        twice_next = to;
      }
    }
    if (end <= next)
      continue;
    wtc_check_hole (c, fi, next, first);
    first = MAX (first, next);
    const char *flaw = wtc_extent_flaw (c, &oe->e);
    if (flaw) {
      wtc_warn (c, "%s: extent %" PRIu32 " (logical %" PRIu64 ", physical %" PRIu64
                ", length %" PRIu64 ") %s: not checked", f->path, oe->index, oe->e.logical,
                oe->e.physical, oe->e.length, flaw);
      st->unchecked += end - first;
    } else {
      wtc_map_extent (c, fi, &oe->e, first, end);
    }
    next = end;
  }
  wtc_check_hole (c, fi, next, f->nsectors);
  if (st->claimed_twice)
    wtc_warn (c, "%s: %" PRIu64 " sectors (the first at file sector %" PRIu64
              ") are claimed by more than one extent: each was compared through the first only",
              f->path, st->claimed_twice, first_twice);
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

/* The check's totals, and whether it covered what the manifest claims. */
static void
wtc_sum_files (struct wtc_check *c)
{
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++) {
    c->compared += c->files[fi].checked;
    c->unchecked += c->files[fi].unchecked;
    c->claimed_twice += c->files[fi].claimed_twice;
  }
}

bool
wtc_find_bad (struct wtc_check *c, GError **error)
{
  g_autoptr (wtc_image) img = wtc_image_open (c->image_path, error);
  if (!img)
    return false;
  c->image_size = wtc_image_size (img);
  c->files = g_new0 (struct wtc_file_stat, c->mf->nfiles);
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    wtc_map_file (c, fi);
  g_array_sort (c->mapped, wtc_segment_cmp);
  gint64 t0 = g_get_monotonic_time ();
  for (guint i = 0; i < c->mapped->len; i++) {
    const struct wtc_segment *seg = &g_array_index (c->mapped, struct wtc_segment, i);
    if (!seg->unwritten && !wtc_read_segment (c, img, seg, error))
      return false;
  }
  c->read_secs = (double) (g_get_monotonic_time () - t0) / 1e6;
  g_array_sort (c->bad, wtc_bad_file_cmp);
  wtc_sum_files (c);
  return true;
}

/* Manifests from a btrfs run: FIEMAP's addresses through the chunk map,
 * once, so everything after sees disk offsets. */
void
wtc_check_translate (struct wtc_check *c, GPtrArray *manifests, const char *path)
{
  if (!c->chunks)
    return;
  g_autofree char *example = NULL;
  uint64_t lost = wtc_chunks_translate (c->chunks, manifests, &example);
  if (lost)
    wtc_warn (c, "%s: %" PRIu64 " extents lie outside every chunk of the btrfs chunk map,"
              " not checked; the first: %s", path, lost, example);
}
