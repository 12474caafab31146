/* Step 3 of check: bad sectors grouped into runs (contiguous in the file and
 * on the disk, one class) and into 4 KiB pages. */
#include <inttypes.h>

#include "check/check.h"
#include "search.h"

#define WTC_PAGE_SECTORS 8

static bool
wtc_continues_run (const struct wtc_bad *prev, const struct wtc_bad *b)
{
  if (b->file != prev->file || b->cls != prev->cls
      || b->file_sector != prev->file_sector + 1)
    return false;
  if (b->disk_sector == WTC_NO_SECTOR || prev->disk_sector == WTC_NO_SECTOR)
    return b->disk_sector == prev->disk_sector;
  return b->disk_sector == prev->disk_sector + 1;
}

static void
wtc_run_add (const struct wtc_check *c, struct wtc_run *r, const struct wtc_bad *b)
{
  const struct wtmf_file *f = &c->mf->files[b->file];
  uint32_t op = f->ops[b->file_sector];
  if (op > r->op)
    r->op = op;
  if (b->last_seq > r->last_seq) {
    r->last_seq = b->last_seq;
    r->last_t = b->last_t;
  }
  const struct wtc_bad *first = &g_array_index (c->bad, struct wtc_bad, r->first);
  if (b->holds_seq != first->holds_seq)
    r->holds_mixed = true;
  r->count++;
}

/* c->bad is sorted by file: a binary search. */
static uint64_t
wtc_bad_file_at (size_t i, const void *bad)
{
  return g_array_index ((const GArray *) bad, struct wtc_bad, i).file;
}

guint
wtc_file_first_bad (const struct wtc_check *c, uint32_t fi)
{
  return (guint) wt_lower_bound (0, c->bad->len, fi, wtc_bad_file_at, c->bad);
}

GArray *
wtc_file_runs (const struct wtc_check *c, uint32_t fi)
{
  GArray *runs = g_array_new (FALSE, FALSE, sizeof (struct wtc_run));
  struct wtc_run r = { 0 };
  bool open = false;
  for (guint i = wtc_file_first_bad (c, fi); i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file != fi)
      break;
    if (open && !wtc_continues_run (&g_array_index (c->bad, struct wtc_bad, i - 1), b)) {
      g_array_append_val (runs, r);
      open = false;
    }
    if (!open) {
      r = (struct wtc_run) { .file = fi, .first = i, .cls = b->cls };
      open = true;
    }
    wtc_run_add (c, &r, b);
  }
  if (open)
    g_array_append_val (runs, r);
  return runs;
}

uint64_t
wtc_file_bad_pages (const struct wtc_check *c, uint32_t fi)
{
  uint64_t pages = 0, last = UINT64_MAX;
  for (guint i = wtc_file_first_bad (c, fi); i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file != fi)
      break;
    if (b->file_sector / WTC_PAGE_SECTORS != last) {
      last = b->file_sector / WTC_PAGE_SECTORS;
      pages++;
    }
  }
  return pages;
}

/* "3-7" from a bitmask of the page's sectors. */
static void
wtc_append_ranges (GString *out, unsigned mask)
{
  bool any = false;
  for (unsigned s = 0; s < WTC_PAGE_SECTORS; s++) {
    if (!(mask & (1u << s)))
      continue;
    unsigned e = s;
    while (e + 1 < WTC_PAGE_SECTORS && (mask & (1u << (e + 1))))
      e++;
    g_string_append_printf (out, "%s%u", any ? "," : "", s);
    if (e > s)
      g_string_append_printf (out, "-%u", e);
    any = true;
    s = e;
  }
}

guint
wtc_page_describe (const struct wtc_check *c, guint first, GString *out)
{
  const struct wtc_bad *fb = &g_array_index (c->bad, struct wtc_bad, first);
  uint64_t page = fb->file_sector / WTC_PAGE_SECTORS;
  unsigned mask[WTC_NCLASSES] = { 0 };
  guint i = first;
  for (; i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file != fb->file || b->file_sector / WTC_PAGE_SECTORS != page)
      break;
    mask[b->cls] |= 1u << (b->file_sector % WTC_PAGE_SECTORS);
  }
  const struct wtmf_file *f = &c->mf->files[fb->file];
  uint64_t in_page = MIN ((uint64_t) WTC_PAGE_SECTORS, f->nsectors - page * WTC_PAGE_SECTORS);
  g_autofree char *path = wtc_text_safe (f->path);
  g_string_append_printf (out, "page %" PRIu64 " of %s: ", page, path);
  bool any = false;
  for (unsigned cls = 0; cls < WTC_NCLASSES; cls++) {
    if (!mask[cls])
      continue;
    g_string_append (out, any ? "; " : "");
    g_string_append (out, mask[cls] & (mask[cls] - 1) ? "sectors " : "sector ");
    wtc_append_ranges (out, mask[cls]);
    g_string_append_printf (out, " of %" PRIu64 " %s", in_page, wtc_class_name (cls));
    any = true;
  }
  return i;
}
