/* The check's text report: verdict lines first, then totals, runs, pages. */
#include <inttypes.h>
#include <string.h>

#include "check.h"
#include "sector-hash.h"

static void
wtc_text_inputs (const struct wtc_check *c, FILE *out)
{
  g_autofree char *kernel = wtc_hello_value (c, "kernel");
  g_autofree char *fs = wtc_hello_value (c, "fs");
  g_autofree char *workload = wtc_hello_value (c, "workload");
  g_autofree char *status = wtc_result_value (c, "status");
  g_autofree char *readback = wtc_result_value (c, "readback");
  g_autofree char *rb_bad = wtc_result_value (c, "readback_bad_sectors");
  g_autofree char *gerr = wtc_result_value (c, "error");
  fprintf (out, "# guest: kernel %s, fs %s, workload %s\n", kernel ? kernel : "?",
           fs ? fs : "?", workload ? workload : "?");
  fprintf (out, "# guest result: status %s, read-back %s%s%s%s\n",
           status ? status : "? (no RESULT)", readback ? readback : "?",
           rb_bad ? " (" : "", rb_bad ? rb_bad : "", rb_bad ? " bad sectors)" : "");
  if (gerr && *gerr)
    fprintf (out, "# guest error: %s\n", gerr);
  if (c->log_read)
    fprintf (out, "# log: %" PRIu64 " records, %s\n", c->log_status.records,
             c->log_status.torn ? "TORN" : c->log_status.closed ? "closed"
             : "not closed (nbdkit did not unload cleanly)");
}

static void
wtc_text_problems (const struct wtc_check *c, FILE *out)
{
  if (c->log_error)
    fprintf (out, "!! LOG UNREADABLE: %s\n", c->log_error);
  if (c->log_read && c->log_status.torn)
    fprintf (out, "!! LOG TORN: %s; only the %" PRIu64 " records before it were used\n",
             c->log_status.error, c->log_status.records);
  if (c->channel_error)
    fprintf (out, "!! CHANNEL DAMAGED: %s\n", c->channel_error);
  for (guint i = 0; i < c->warnings->len; i++)
    fprintf (out, "!! %s\n", (const char *) g_ptr_array_index (c->warnings, i));
}

static void
wtc_text_verdict (const struct wtc_check *c, uint32_t fi, FILE *out)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  if (!st->bad) {
    fprintf (out, "%s: clean (%" PRIu64 " sectors checked", f->path, st->checked);
    if (st->uncheckable)
      fprintf (out, ", %" PRIu64 " not checkable: inline, encoded or misaligned", st->uncheckable);
    fprintf (out, ")\n");
    return;
  }
  uint64_t n[WTC_NCLASSES] = { 0 };
  for (guint i = 0; i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file == fi)
      n[b->cls]++;
  }
  unsigned kinds = 0, only = 0;
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    if (n[k])
      kinds++, only = k;
  uint64_t pages = wtc_file_bad_pages (c, fi);
  if (kinds == 1)
    fprintf (out, "%s: %" PRIu64 " sector%s %s in %" PRIu64 " page%s", f->path, st->bad,
             st->bad == 1 ? "" : "s", wtc_class_name (only), pages, pages == 1 ? "" : "s");
  else {
    fprintf (out, "%s: %" PRIu64 " bad sectors in %" PRIu64 " page%s (", f->path, st->bad,
             pages, pages == 1 ? "" : "s");
    for (unsigned k = 0, any = 0; k < WTC_NCLASSES; k++)
      if (n[k])
        fprintf (out, "%s%" PRIu64 " %s", any++ ? ", " : "", n[k], wtc_class_name (k));
    fprintf (out, ")");
  }
  const char *pc = wtc_page_cache_verdict (c);
  if (pc)
    fprintf (out, "; %s%s", pc, strstr (pc, "correct") ? "; the disk was not" : "");
  fprintf (out, " (%" PRIu64 " sectors checked)\n", st->checked);
}

static void
wtc_text_log_time (const struct wtc_check *c, uint64_t guest_ns, FILE *out)
{
  uint64_t t;
  bool approx;
  char buf[32];
  if (wtc_guest_to_log (c, guest_ns, &t, &approx))
    fprintf (out, " at t=%s%s", approx ? "~" : "", wtc_fmt_secs (t, buf, sizeof buf));
  else
    fprintf (out, " at guest time %s", wtc_fmt_secs (guest_ns, buf, sizeof buf));
}

/* Why the expected content is not there, per class. */
static void
wtc_text_run_cause (const struct wtc_bad *b, FILE *out)
{
  char t[32];
  switch (b->cls) {
  case WTC_UNMAPPED:
    fprintf (out, "; the file has data here but no disk block");
    break;
  case WTC_LIED:
    fprintf (out, "; write seq %" PRIu64 " (t=%s) carried the right content, the disk does not hold it",
             b->last_seq, wtc_fmt_secs (b->last_t, t, sizeof t));
    break;
  case WTC_OVERWRITTEN:
    fprintf (out, "; arrived with seq %" PRIu64 ", replaced by seq %" PRIu64,
             b->expected_seq, b->replaced_seq);
    break;
  case WTC_MISPLACED:
    fprintf (out, "; written to disk sector %" PRIu64 " instead (seq %" PRIu64 "%s)",
             b->misplaced_sector, b->misplaced_seq,
             b->misplaced_count > 1 ? ", and elsewhere" : "");
    break;
  default:
    fprintf (out, "; the expected content never arrived here");
    break;
  }
}

/* What the run's sectors hold instead, and when the log last wrote them. */
static void
wtc_text_run_story (const struct wtc_run *r, const struct wtc_bad *b, FILE *out)
{
  char t[32];
  const char *mixed = r->holds_mixed ? " (first sector; the others differ)" : "";
  wtc_text_run_cause (b, out);
  if (r->cls == WTC_UNMAPPED)
    return;
  if (b->unwritten)
    fprintf (out, "; extent UNWRITTEN: the file reads zeros");
  if (!r->last_seq) {
    fprintf (out, "; never written during the run%s", b->unwritten ? ""
             : ": the disk holds its pre-run content");
    return;
  }
  if (b->holds_seq == r->last_seq && !r->holds_mixed) {
    fprintf (out, "; the disk holds its last write, seq %" PRIu64 " at t=%s", r->last_seq,
             wtc_fmt_secs (r->last_t, t, sizeof t));
    return;
  }
  if (b->holds_seq)
    fprintf (out, "; the disk holds the content of seq %" PRIu64 "%s", b->holds_seq, mixed);
  else if (!b->last_seq && !b->unwritten)
    fprintf (out, "; the disk holds its pre-run content%s", mixed);
  else if (!b->unwritten)
    fprintf (out, "; the disk holds content no logged write carried%s", mixed);
  if (r->cls == WTC_LIED && r->last_seq == b->last_seq)
    return;                     /* the cause named the last write */
  fprintf (out, "; last written seq %" PRIu64 " at t=%s", r->last_seq,
           wtc_fmt_secs (r->last_t, t, sizeof t));
}

static void
wtc_text_run (const struct wtc_check *c, const struct wtc_run *r, FILE *out)
{
  const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, r->first);
  fprintf (out, "  %-11s file bytes %" PRIu64 "+%" PRIu64, wtc_class_name (r->cls),
           b->file_sector * WT_SECTOR_SIZE, (uint64_t) r->count * WT_SECTOR_SIZE);
  if (r->count == 1)
    fprintf (out, " (sector %" PRIu64 ")", b->file_sector);
  else
    fprintf (out, " (sectors %" PRIu64 "-%" PRIu64 ")", b->file_sector,
             b->file_sector + r->count - 1);
  if (b->disk_sector != WTC_NO_SECTOR && r->count == 1)
    fprintf (out, " disk sector %" PRIu64, b->disk_sector);
  else if (b->disk_sector != WTC_NO_SECTOR)
    fprintf (out, " disk sectors %" PRIu64 "-%" PRIu64, b->disk_sector,
             b->disk_sector + r->count - 1);
  if (r->op && r->op <= c->mf->nops) {
    const struct wtmf_op *op = &c->mf->ops[r->op - 1];
    fprintf (out, "; last op %" PRIu32 " %s %" PRIu64 "+%" PRIu64, r->op,
             wtmf_op_kind_name (op->kind), op->offset, op->length);
    wtc_text_log_time (c, op->guest_ns, out);
  }
  wtc_text_run_story (r, b, out);
  fputc ('\n', out);
}

/* The bad pages of file fi: the compact view, which sectors of each page. */
static void
wtc_text_file_pages (const struct wtc_check *c, uint32_t fi,
                     const struct wtc_report_opts *o, FILE *out)
{
  g_autoptr (GString) line = g_string_new (NULL);
  guint i = 0;
  while (i < c->bad->len && g_array_index (c->bad, struct wtc_bad, i).file != fi)
    i++;
  int shown = 0;
  while (i < c->bad->len && g_array_index (c->bad, struct wtc_bad, i).file == fi) {
    g_string_truncate (line, 0);
    i = wtc_page_describe (c, i, line);
    if (shown++ < o->max_runs)
      fprintf (out, "  %s\n", line->str);
  }
  if (shown > o->max_runs)
    fprintf (out, "  ... %d more pages (--max-runs, or the JSON report)\n",
             shown - o->max_runs);
}

/* Pages first (where the holes are), then runs (why, and which write). */
static void
wtc_text_file_detail (const struct wtc_check *c, uint32_t fi,
                      const struct wtc_report_opts *o, FILE *out)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  g_autoptr (GArray) runs = wtc_file_runs (c, fi);
  uint64_t pages = wtc_file_bad_pages (c, fi);
  fprintf (out, "\n%s: %" PRIu64 " bad page%s\n", f->path, pages, pages == 1 ? "" : "s");
  wtc_text_file_pages (c, fi, o, out);
  fprintf (out, "\n%s: %u run%s (contiguous in the file and on the disk, one class)\n",
           f->path, runs->len, runs->len == 1 ? "" : "s");
  for (guint i = 0; i < runs->len && (int) i < o->max_runs; i++)
    wtc_text_run (c, &g_array_index (runs, struct wtc_run, i), out);
  if ((int) runs->len > o->max_runs)
    fprintf (out, "  ... %u more runs (--max-runs, or the JSON report)\n",
             runs->len - (guint) o->max_runs);
}

void
wtc_report_text (const struct wtc_check *c, const struct wtc_report_opts *o,
                 FILE *out)
{
  wtc_text_problems (c, out);
  if (!c->mf)
    return;
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    wtc_text_verdict (c, fi, out);
  uint64_t total = c->bad->len;
  fprintf (out, "verdict: %s: %" PRIu64 " bad sector%s", total ? "damaged" : "clean",
           total, total == 1 ? "" : "s");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    if (c->by_class[k])
      fprintf (out, ", %s %" PRIu64, wtc_class_name (k), c->by_class[k]);
  fputc ('\n', out);
  if (o->quiet)
    return;
  wtc_text_inputs (c, out);
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    if (c->files[fi].bad)
      wtc_text_file_detail (c, fi, o, out);
}
