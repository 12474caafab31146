/* wtrack check, the cold half: what a freshly booted kernel read back
 * (cold.bin) against what the files must hold (the final manifest), each
 * bad sector placed on the disk twice (where the warm FIEMAP put it, where
 * the cold one does), and the fsck of the recovered disk. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/cold.h"
#include "check/check.h"
#include "lib/lastwrite.h"
#include "sector-hash.h"
#include "search.h"

static const char *const wtc_cold_class_names[WTC_COLD_NCLASSES] = {
  [WTC_COLD_MISSING] = "missing", [WTC_COLD_UNREADABLE] = "unreadable",
  [WTC_COLD_UNMAPPED] = "unmapped", [WTC_COLD_MOVED] = "moved",
  [WTC_COLD_STALE] = "stale", [WTC_COLD_LOST] = "lost",
};

const char *
wtc_cold_class_name (unsigned cls)
{
  return cls < WTC_COLD_NCLASSES ? wtc_cold_class_names[cls] : "?";
}

/* The disk sector of file sector fs through f's extents, WTC_NO_SECTOR for
 * a hole or an unmappable extent. Extents from FIEMAP come sorted, but the
 * guest is not trusted: a plain scan. */
static uint64_t
wtc_cold_map (const struct wtmf_file *f, uint64_t fs)
{
  uint64_t byte = fs * WT_SECTOR_SIZE;
  for (uint32_t i = 0; i < f->nextents; i++) {
    const struct wtmf_extent *e = &f->extents[i];
    if (byte < e->logical || byte - e->logical >= e->length)
      continue;
    if (e->flags & WTMF_EXT_UNMAPPABLE)
      return WTC_NO_SECTOR;
    uint64_t at = e->physical + (byte - e->logical);
    return at % WT_SECTOR_SIZE ? WTC_NO_SECTOR : at / WT_SECTOR_SIZE;
  }
  return WTC_NO_SECTOR;
}

/* The hash of sector s of img, or false when it cannot be read. */
static bool
wtc_cold_image_hash (struct wtc_image *img, uint64_t s, uint64_t *hash)
{
  if (!img || s == WTC_NO_SECTOR)
    return false;
  g_autoptr (GError) error = NULL;
  const unsigned char *p = wtc_image_sector (img, s, &error);
  if (!p)
    return false;
  *hash = wt_sector_hash (p);
  return true;
}

/* The cold entry of the file with this id. */
static const struct wtmf_file *
wtc_cold_entry (const struct wtc_cold *k, uint32_t id)
{
  return k->mf ? wtmf_find_file (k->mf, id) : NULL;
}

struct wtc_cold_imgs {
  struct wtc_image *disk, *base;
};

static void
wtc_cold_add (struct wtc_cold *k, struct wtc_cold_bad *b)
{
  g_array_append_val (k->bad, *b);
  k->files[b->file].bad++;
  k->files[b->file].by_class[b->cls]++;
  k->by_class[b->cls]++;
}

/* The class of a sector whose cold read differs from the expected content. */
static void
wtc_cold_classify (struct wtc_cold_imgs *im, uint64_t cold_hash, uint64_t expected,
                   struct wtc_cold_bad *b)
{
  uint64_t h;
  if (b->cold_disk == WTC_NO_SECTOR)
    b->cls = WTC_COLD_UNMAPPED;
  else if (b->cold_disk != b->warm_disk) {
    b->cls = WTC_COLD_MOVED;
    b->warm_holds = wtc_cold_image_hash (im->disk, b->warm_disk, &h) && h == expected;
  } else if (wtc_cold_image_hash (im->base, b->cold_disk, &h) && h == cold_hash)
    b->cls = WTC_COLD_STALE;
  else
    b->cls = WTC_COLD_LOST;
}

static void
wtc_cold_file (struct wtc_cold *k, struct wtc_cold_imgs *im, const struct wtmf_file *wf,
               uint32_t fi)
{
  struct wtc_cold_file *cf = &k->files[fi];
  const struct wtmf_file *e = wtc_cold_entry (k, wf->id);
  cf->present = e != NULL;
  cf->error = e ? e->error : ENOENT;
  cf->cold_size = e && !e->error ? e->size : 0;
  if (cf->error)
    k->unopenable++;
  else if (cf->cold_size != wf->size)
    k->size_changed++;
  for (uint64_t s = 0; s < wf->nsectors; s++) {
    struct wtc_cold_bad b = {
      .file = fi, .file_sector = s, .warm_disk = wtc_cold_map (wf, s),
      .cold_disk = WTC_NO_SECTOR,
    };
    if (cf->error || s >= e->nsectors)
      b.cls = WTC_COLD_MISSING;
    else if (e->ops[s]) {
      b.cls = WTC_COLD_UNREADABLE;
      b.err = e->ops[s];
    } else if (e->hashes[s] == wf->hashes[s])
      continue;
    else {
      b.cold_disk = wtc_cold_map (e, s);
      wtc_cold_classify (im, e->hashes[s], wf->hashes[s], &b);
    }
    wtc_cold_add (k, &b);
  }
  if (cf->bad || cf->error || cf->cold_size != wf->size)
    k->files_damaged++;
}

/* Index of a bad sector by its cold disk sector, for the log pass. */
struct wtc_cold_at {
  uint64_t sector;
  guint bad;
};

static gint
wtc_cold_at_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_cold_at *x = a, *y = b;
  return x->sector < y->sector ? -1 : x->sector > y->sector;
}

/* The first entry at or after sector. */
static uint64_t
wtc_cold_at_sector (size_t i, const void *at)
{
  return g_array_index ((const GArray *) at, struct wtc_cold_at, i).sector;
}

static guint
wtc_cold_at_lower (const GArray *at, uint64_t sector)
{
  return (guint) wt_lower_bound (0, at->len, sector, wtc_cold_at_sector, at);
}

/* One pass over the log: the last write of every cold disk sector named. */
static void
wtc_cold_log_pass (struct wtc_check *c, struct wtc_cold *k)
{
  g_autoptr (GArray) at = g_array_new (FALSE, FALSE, sizeof (struct wtc_cold_at));
  for (guint i = 0; i < k->bad->len; i++) {
    const struct wtc_cold_bad *b = &g_array_index (k->bad, struct wtc_cold_bad, i);
    if (b->cold_disk != WTC_NO_SECTOR) {
      struct wtc_cold_at a = { b->cold_disk, i };
      g_array_append_val (at, a);
    }
  }
  if (!at->len)
    return;
  g_array_sort (at, wtc_cold_at_cmp);
  char err[256];
  struct wtlog_header h;
  struct wtlog_reader *r = wtlog_reader_open (c->log_path, &h, err, sizeof err);
  if (!r)
    return;                     /* the warm check reports the log */
  struct wtlog_record rec;
  while (wtlog_reader_next (r, &rec) == 0) {
    if ((rec.type != WTLOG_WRITE && rec.type != WTLOG_ZERO && rec.type != WTLOG_TRIM)
        || (rec.flags & WTLOG_F_FAILED) || !rec.length)
      continue;
    uint64_t first = rec.offset / WT_SECTOR_SIZE;
    uint64_t last = (rec.offset + rec.length - 1) / WT_SECTOR_SIZE;
    for (guint i = wtc_cold_at_lower (at, first); i < at->len; i++) {
      const struct wtc_cold_at *a = &g_array_index (at, struct wtc_cold_at, i);
      if (a->sector > last)
        break;
      struct wtc_cold_bad *b = &g_array_index (k->bad, struct wtc_cold_bad, a->bad);
      b->last_seq = rec.seq;
      b->last_t = rec.t_start;
    }
  }
  wtlog_reader_close (r);
}

/* A disk range, first to last sector, a file's extent covers. */
struct wtc_cold_span {
  uint64_t first, last;
};

static gint
wtc_cold_span_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_cold_span *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Every extent of mf's files, whole sectors rounded outward (a partly
 * covered sector holds file data, so it is not metadata). */
static void
wtc_cold_add_spans (GArray *spans, const struct wtmf_manifest *mf)
{
  for (uint32_t fi = 0; mf && fi < mf->nfiles; fi++)
    for (uint32_t i = 0; i < mf->files[fi].nextents; i++) {
      const struct wtmf_extent *e = &mf->files[fi].extents[i];
      if ((e->flags & WTMF_EXT_UNMAPPABLE) || !e->length)
        continue;
      uint64_t end = e->physical > UINT64_MAX - (e->length - 1) ? UINT64_MAX
        : e->physical + e->length - 1;
      struct wtc_cold_span s = { e->physical / WT_SECTOR_SIZE, end / WT_SECTOR_SIZE };
      g_array_append_val (spans, s);
    }
}

/* The files' spans, warm and cold, sorted and merged. */
static GArray *
wtc_cold_file_spans (const struct wtc_check *c, const struct wtc_cold *k)
{
  g_autoptr (GArray) all = g_array_new (FALSE, FALSE, sizeof (struct wtc_cold_span));
  wtc_cold_add_spans (all, c->mf);
  wtc_cold_add_spans (all, k->mf);
  g_array_sort (all, wtc_cold_span_cmp);
  GArray *merged = g_array_new (FALSE, FALSE, sizeof (struct wtc_cold_span));
  for (guint i = 0; i < all->len; i++) {
    const struct wtc_cold_span *s = &g_array_index (all, struct wtc_cold_span, i);
    struct wtc_cold_span *top = merged->len
      ? &g_array_index (merged, struct wtc_cold_span, merged->len - 1) : NULL;
    if (top && (s->first <= top->last || s->first - top->last == 1)) {
      if (s->last > top->last)
        top->last = s->last;
    } else
      g_array_append_val (merged, *s);
  }
  return merged;
}

/* The first span whose last sector is at or after sector. */
static uint64_t
wtc_cold_span_last (size_t i, const void *spans)
{
  return g_array_index ((const GArray *) spans, struct wtc_cold_span, i).last;
}

static guint
wtc_cold_span_lower (const GArray *spans, uint64_t sector)
{
  return (guint) wt_lower_bound (0, spans->len, sector, wtc_cold_span_last, spans);
}

/* Applies to m the part of rec outside the spans: of a WRITE the sectors
 * no file's extent covers, so the map holds metadata, not the files' data
 * (memory grows with the metadata written, not with the log); ZERO and
 * TRIM whole (kept as ranges, a few nodes whatever their length). */
static void
wtc_cold_apply_outside (struct wtc_lastmap *m, const GArray *spans,
                        const struct wtlog_record *rec)
{
  if (rec->type != WTLOG_WRITE || (rec->flags & WTLOG_F_FAILED) || !rec->nhashes) {
    wtc_lastmap_apply (m, rec);
    return;
  }
  uint64_t first = rec->offset / WT_SECTOR_SIZE, end = first + rec->nhashes;
  uint64_t s = first;
  for (guint at = wtc_cold_span_lower (spans, first); s < end; at++) {
    const struct wtc_cold_span *sp = at < spans->len
      ? &g_array_index (spans, struct wtc_cold_span, at) : NULL;
    uint64_t stop = sp && sp->first < end ? MAX (sp->first, s) : end;
    if (stop > s) {
      struct wtlog_record part = *rec;
      part.offset = s * WT_SECTOR_SIZE;
      part.length = part.nhashes = stop - s;
      part.length *= WT_SECTOR_SIZE;
      part.hashes = rec->hashes + (s - first);
      wtc_lastmap_apply (m, &part);
    }
    if (!sp || sp->first >= end || sp->last >= end - 1)
      break;
    s = MAX (s, sp->last + 1);
  }
}

/* The log's last write of every sector outside the files against
 * disk.img: which metadata writes the disk lacks, although the guest's
 * kernel was told they were done. A vanished write left no record, so it
 * cannot be named here. */
static void
wtc_cold_metadata_pass (struct wtc_check *c, struct wtc_cold *k, struct wtc_image *disk)
{
  if (!disk || !c->log_path)
    return;
  char err[256];
  struct wtlog_header h;
  struct wtlog_reader *r = wtlog_reader_open (c->log_path, &h, err, sizeof err);
  if (!r)
    return;                     /* the warm check reports the log */
  g_autoptr (GArray) spans = wtc_cold_file_spans (c, k);
  g_autoptr (wtc_lastmap) m = wtc_lastmap_new ();
  struct wtlog_record rec;
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_cold_apply_outside (m, spans, &rec);
  wtlog_reader_close (r);
  uint64_t touched, compared;
  g_autoptr (GArray) diffs = wtc_lastmap_compare (m, disk, &touched, &compared, NULL);
  if (!diffs)
    return;                     /* and an image it cannot read */
  k->meta_lacking = g_array_new (FALSE, FALSE, sizeof (struct wtc_diff));
  guint at = 0;
  for (guint i = 0; i < diffs->len; i++) {
    const struct wtc_diff *d = &g_array_index (diffs, struct wtc_diff, i);
    /* A ZERO or TRIM over a file, applied whole, is the warm check's. */
    while (at < spans->len && g_array_index (spans, struct wtc_cold_span, at).last < d->sector)
      at++;
    if (at < spans->len && g_array_index (spans, struct wtc_cold_span, at).first <= d->sector)
      continue;
    g_array_append_val (k->meta_lacking, *d);
  }
}

GArray *
wtc_cold_meta_runs (const struct wtc_cold *k)
{
  GArray *runs = g_array_new (FALSE, FALSE, sizeof (struct wtc_cold_run));
  for (guint i = 0; k->meta_lacking && i < k->meta_lacking->len; i++) {
    const struct wtc_diff *d = &g_array_index (k->meta_lacking, struct wtc_diff, i);
    if (runs->len) {
      struct wtc_cold_run *r = &g_array_index (runs, struct wtc_cold_run, runs->len - 1);
      const struct wtc_diff *p = &g_array_index (k->meta_lacking, struct wtc_diff, i - 1);
      if (p->sector + 1 == d->sector && p->seq == d->seq) {
        r->count++;
        continue;
      }
    }
    struct wtc_cold_run r = { i, 1 };
    g_array_append_val (runs, r);
  }
  return runs;
}

/* Warm bad sectors the log wrote, whose disk sector still holds its
 * pre-run content: stale, the write never replaced it. */
static void
wtc_cold_mark_stale (struct wtc_check *c, struct wtc_image *base)
{
  for (guint i = 0; base && i < c->bad->len; i++) {
    struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    uint64_t h;
    if (!b->holds_seq && b->last_seq && !b->unwritten
        && wtc_cold_image_hash (base, b->disk_sector, &h) && h == b->image)
      b->stale = true;
  }
}

static void
wtc_cold_read_fsck (struct wtc_cold *k, const char *path)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return;
  k->fsck_ran = true;
  k->fsck_lines = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  bool body = false;
  for (guint i = 0; lines[i]; i++) {
    const char *l = lines[i];
    if (body) {
      if (k->fsck_lines->len < 20 && (l[0] || lines[i + 1]))
        g_ptr_array_add (k->fsck_lines, g_strdup (l));
    } else if (strcmp (l, "--") == 0)
      body = true;
    else if (g_str_has_prefix (l, "command="))
      k->fsck_command = g_strdup (l + 8);
    else if (g_str_has_prefix (l, "verdict="))
      k->fsck_verdict = g_strdup (l + 8);
    else if (g_str_has_prefix (l, "status="))
      k->fsck_status = atoi (l + 7);
  }
  if (!k->fsck_verdict)
    k->fsck_verdict = g_strdup ("unreadable");
}

/* cold.bin: its last manifest, which must be flagged cold. */
static void
wtc_cold_read_channel (struct wtc_cold *k)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_channel) ch = wtc_channel_read (k->path, &error);
  if (!ch) {
    k->error = g_strdup (error->message);
    return;
  }
  const struct wtc_msg *hello = wtc_channel_last (ch, WTCH_HELLO);
  const struct wtc_msg *result = wtc_channel_last (ch, WTCH_RESULT);
  if (hello)
    k->kernel = wtc_msg_kv (hello, "kernel");
  g_autofree char *gerr = result ? wtc_msg_kv (result, "error") : NULL;
  if (gerr && gerr[0])
    k->guest_error = g_steal_pointer (&gerr);
  if (!wtc_manifests_parse (ch, &k->manifests, &error)) {
    k->error = g_strdup_printf ("%s: %s", k->path, error->message);
    return;
  }
  if (k->manifests->len)
    k->mf = g_ptr_array_index (k->manifests, k->manifests->len - 1);
  if (k->mf && !(k->mf->flags & WTMF_FLAG_COLD)) {
    k->error = g_strdup_printf ("%s: its manifest is not flagged cold", k->path);
    k->mf = NULL;
  } else if (!k->mf && !k->guest_error)
    k->error = g_strdup_printf ("%s: no cold manifest%s", k->path,
                                ch->error ? "" : " (the cold guest did not report)");
  if (ch->error && !k->error)
    k->error = g_strdup_printf ("%s: %s", k->path, ch->error);
}

void
wtc_cold_check (struct wtc_check *c, const char *cold_path, const char *fsck_path,
                const char *base_path)
{
  struct wtc_cold *k = &c->cold;
  g_autoptr (wtc_image) base = base_path && g_file_test (base_path, G_FILE_TEST_EXISTS)
    ? wtc_image_open (base_path, NULL) : NULL;
  wtc_cold_mark_stale (c, base);
  if (fsck_path)
    wtc_cold_read_fsck (k, fsck_path);
  if (!cold_path || !g_file_test (cold_path, G_FILE_TEST_EXISTS))
    return;
  k->ran = true;
  k->path = g_strdup (cold_path);
  k->bad = g_array_new (FALSE, TRUE, sizeof (struct wtc_cold_bad));
  k->files = g_new0 (struct wtc_cold_file, c->mf->nfiles);
  wtc_cold_read_channel (k);
  wtc_check_translate (c, k->manifests, k->path);
  g_autoptr (wtc_image) disk = wtc_image_open (c->image_path, NULL);
  /* Also when the cold kernel reported nothing (it could not mount). */
  wtc_cold_metadata_pass (c, k, disk);
  if (!k->mf)
    return;
  struct wtc_cold_imgs im = { disk, base };
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    wtc_cold_file (k, &im, &c->mf->files[fi], fi);
  wtc_cold_log_pass (c, k);
}

void
wtc_cold_clear (struct wtc_cold *k)
{
  g_free (k->path);
  g_free (k->error);
  g_free (k->guest_error);
  g_free (k->kernel);
  if (k->manifests)
    g_ptr_array_unref (k->manifests);
  if (k->bad)
    g_array_unref (k->bad);
  g_free (k->files);
  if (k->meta_lacking)
    g_array_unref (k->meta_lacking);
  g_free (k->fsck_command);
  g_free (k->fsck_verdict);
  if (k->fsck_lines)
    g_ptr_array_unref (k->fsck_lines);
}

/* Runs: contiguous in the file and on both disk places, one class. */
GArray *
wtc_cold_file_runs (const struct wtc_cold *k, uint32_t fi)
{
  GArray *runs = g_array_new (FALSE, FALSE, sizeof (struct wtc_cold_run));
  for (guint i = 0; k->bad && i < k->bad->len; i++) {
    const struct wtc_cold_bad *b = &g_array_index (k->bad, struct wtc_cold_bad, i);
    if (b->file != fi)
      continue;
    if (runs->len) {
      struct wtc_cold_run *r = &g_array_index (runs, struct wtc_cold_run, runs->len - 1);
      const struct wtc_cold_bad *p = &g_array_index (k->bad, struct wtc_cold_bad, i - 1);
      bool next = p->file == fi && p->cls == b->cls && p->file_sector + 1 == b->file_sector
        && (p->warm_disk == WTC_NO_SECTOR ? b->warm_disk == WTC_NO_SECTOR
            : p->warm_disk + 1 == b->warm_disk)
        && (p->cold_disk == WTC_NO_SECTOR ? b->cold_disk == WTC_NO_SECTOR
            : p->cold_disk + 1 == b->cold_disk)
        && p->err == b->err;
      if (next && r->first + r->count == i) {
        r->count++;
        continue;
      }
    }
    struct wtc_cold_run r = { i, 1 };
    g_array_append_val (runs, r);
  }
  return runs;
}
