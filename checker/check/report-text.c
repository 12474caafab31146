/* The check's text report: verdict lines first, then totals, runs, pages. */
#include <inttypes.h>
#include <string.h>

#include "check/check.h"
#include "check/report-trace.h"
#include "sector-hash.h"

/* A HELLO or RESULT value made safe to print (wtc_text_safe). */
static char *
wtc_text_value (const struct wtc_check *c, uint16_t type, const char *key)
{
  g_autofree char *raw = type == WTCH_HELLO ? wtc_hello_value (c, key)
    : wtc_result_value (c, key);
  return wtc_text_safe (raw);
}

/* "!! " and text that may hold guest bytes (paths, the reader's messages). */
static void
wtc_text_alarm (FILE *out, const char *what, const char *text)
{
  g_autofree char *safe = wtc_text_safe (text);
  fprintf (out, "!! %s%s\n", what, safe);
}

static void
wtc_text_inputs (const struct wtc_check *c, FILE *out)
{
  g_autofree char *kernel = wtc_text_value (c, WTCH_HELLO, "kernel");
  g_autofree char *fs = wtc_text_value (c, WTCH_HELLO, "fs");
  g_autofree char *workload = wtc_text_value (c, WTCH_HELLO, "workload");
  g_autofree char *status = wtc_text_value (c, WTCH_RESULT, "status");
  g_autofree char *readback = wtc_text_value (c, WTCH_RESULT, "readback");
  g_autofree char *rb_bad = wtc_text_value (c, WTCH_RESULT, "readback_bad_sectors");
  g_autofree char *gerr = wtc_text_value (c, WTCH_RESULT, "error");
  g_autofree char *io_errors = wtc_text_value (c, WTCH_RESULT, "io_errors");
  bool io_failed = io_errors && *io_errors && strcmp (io_errors, "0") != 0;
  g_autofree char *arch = wtc_text_value (c, WTCH_HELLO, "arch");
  g_autofree char *page = wtc_text_value (c, WTCH_HELLO, "page_size");
  g_autofree char *machine = arch || page
    ? g_strdup_printf (" (%s%s%s%s)", arch ? arch : "", arch && page ? ", " : "",
                       page ? page : "", page ? "-byte pages" : "")
    : g_strdup ("");
  g_autofree char *block = wtc_text_value (c, WTCH_HELLO, "block_size");
  g_autofree char *blocks = block ? g_strdup_printf (" (%s-byte blocks)", block) : g_strdup ("");
  fprintf (out, "# guest: kernel %s%s, fs %s%s, workload %s\n", kernel ? kernel : "?",
           machine, fs ? fs : "?", blocks, workload ? workload : "?");
  fprintf (out, "# guest result: status %s, read-back %s%s%s%s%s%s\n",
           status ? status : "? (no RESULT)", readback ? readback : "?",
           rb_bad ? " (" : "", rb_bad ? rb_bad : "", rb_bad ? " bad sectors)" : "",
           io_failed ? ", kernel I/O errors: " : "", io_failed ? io_errors : "");
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
    wtc_text_alarm (out, "LOG UNREADABLE: ", c->log_error);
  if (c->log_read && c->log_status.torn) {
    g_autofree char *why = g_strdup_printf ("%s; only the %" PRIu64 " records before it were used",
                                            c->log_status.error, c->log_status.records);
    wtc_text_alarm (out, "LOG TORN: ", why);
  }
  if (c->channel_error)
    wtc_text_alarm (out, "CHANNEL DAMAGED: ", c->channel_error);
  for (guint i = 0; i < c->warnings->len; i++)
    wtc_text_alarm (out, "", g_ptr_array_index (c->warnings, i));
  if (c->warnings_left_out)
    fprintf (out, "!! ... and %u more warnings (--json has the first %d too)\n",
             c->warnings_left_out, WTC_MAX_WARNINGS);
  if (c->mf && c->files && !wtc_coverage_complete (c))
    fprintf (out, "!! INPUTS INCOMPLETE: %" PRIu64 " sectors compared, %" PRIu64
             " could not be (extents misaligned or off the disk image), %" PRIu64
             " claimed twice%s: the check cannot say clean\n", c->compared, c->unchecked,
             c->claimed_twice, c->image_short ? ", the image is truncated" : "");
}

static void
wtc_text_verdict (const struct wtc_check *c, uint32_t fi, FILE *out)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  g_autofree char *path = wtc_text_safe (f->path);
  if (!st->bad) {
    fprintf (out, "%s: %s (%" PRIu64 " sectors checked", path, wtc_file_verdict (c, fi),
             st->checked);
    if (st->unchecked)
      fprintf (out, ", %" PRIu64 " could not be: extents misaligned or off the disk image",
               st->unchecked);
    if (st->uncheckable)
      fprintf (out, ", %" PRIu64 " not checkable: inline or encoded", st->uncheckable);
    if (st->claimed_twice)
      fprintf (out, ", %" PRIu64 " claimed by two extents", st->claimed_twice);
    fprintf (out, ")\n");
    return;
  }
  const uint64_t *n = st->by_class;
  unsigned kinds = 0, only = 0;
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    if (n[k])
      kinds++, only = k;
  uint64_t pages = wtc_file_bad_pages (c, fi);
  if (kinds == 1)
    fprintf (out, "%s: %" PRIu64 " sector%s %s in %" PRIu64 " page%s", path, st->bad,
             st->bad == 1 ? "" : "s", wtc_class_name (only), pages, pages == 1 ? "" : "s");
  else {
    fprintf (out, "%s: %" PRIu64 " bad sectors in %" PRIu64 " page%s (", path, st->bad,
             pages, pages == 1 ? "" : "s");
    for (unsigned k = 0, any = 0; k < WTC_NCLASSES; k++)
      if (n[k])
        fprintf (out, "%s%" PRIu64 " %s", any++ ? ", " : "", n[k], wtc_class_name (k));
    fprintf (out, ")");
  }
  const char *pc = wtc_page_cache_verdict (c);
  if (pc)
    fprintf (out, "; %s%s", pc, strstr (pc, "correct") ? "; the disk was not" : "");
  fprintf (out, " (%" PRIu64 " sectors checked", st->checked);
  if (st->unchecked)
    fprintf (out, ", %" PRIu64 " could not be", st->unchecked);
  fprintf (out, ")\n");
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
  if (b->delalloc) {
    fprintf (out, "; no disk sector: delayed allocation never written (extent DELALLOC after"
             " the sync): the kernel holds these bytes, no block was allocated");
    return;
  }
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
  else if (b->stale)
    fprintf (out, "; stale: the disk holds its pre-run content, the write never replaced it%s",
             mixed);
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
  guint i = wtc_file_first_bad (c, fi);
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
  g_autofree char *path = wtc_text_safe (c->mf->files[fi].path);
  g_autoptr (GArray) runs = wtc_file_runs (c, fi);
  uint64_t pages = wtc_file_bad_pages (c, fi);
  fprintf (out, "\n%s: %" PRIu64 " bad page%s\n", path, pages, pages == 1 ? "" : "s");
  wtc_text_file_pages (c, fi, o, out);
  fprintf (out, "\n%s: %u run%s (contiguous in the file and on the disk, one class)\n",
           path, runs->len, runs->len == 1 ? "" : "s");
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
  fprintf (out, "verdict: %s: %" PRIu64 " bad sector%s", wtc_verdict (c),
           total, total == 1 ? "" : "s");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    if (c->by_class[k])
      fprintf (out, ", %s %" PRIu64, wtc_class_name (k), c->by_class[k]);
  if (!wtc_coverage_complete (c))
    fprintf (out, "; %" PRIu64 " sectors compared, %" PRIu64 " could not be", c->compared,
             c->unchecked);
  if (!total && wtc_cold_damaged (&c->cold))
    fputs ("; the disk after a reboot is damaged (cold, below)", out);
  fputc ('\n', out);
  if (o->quiet) {
    if (c->cold.ran || c->cold.fsck_ran)
      wtc_cold_report_text (c, -1, out);
    return;
  }
  wtc_text_inputs (c, out);
  for (uint32_t fi = 0; fi < c->mf->nfiles; fi++)
    if (c->files[fi].bad)
      wtc_text_file_detail (c, fi, o, out);
  wtc_report_text_trace (c, o->max_runs, out);
  fputc ('\n', out);
  wtc_cold_report_text (c, o->max_runs, out);
}
