/* wtrack check --html FILE: one self-contained page (inline CSS and
 * JavaScript, data as JSON) that draws the disk map, each file's pages and
 * extents, and the timeline; doc/report-html.md describes its data. The
 * page itself is generic (report-html.h): the data's "kind" says what the
 * script draws. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "check/check.h"
#include "check/html-data.h"
#include "check/report-html.h"
#include "lib/html-page.h"
#include "sector-hash.h"

/* What the page embeds whole, at most (then it says how many there were). */
#define WTC_HTML_MAX_RUNS 20000
#define WTC_HTML_MAX_PAGES 50000
#define WTC_HTML_MAX_EXTENTS 20000
#define WTC_HTML_MAX_COLD_RUNS 5000
/* Sectors of a run whose expected and found hashes the page shows. */
#define WTC_HTML_RUN_HASHES 8

/* An array of zeroes (a timeline without trims, a log that never wrote)
 * is sent as "" : the page knows each array's length. */
static void
wtc_html_b64 (FILE *out, const char *key, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t nonzero = 0;
  while (nonzero < len && p[nonzero] == 0)
    nonzero++;
  if (nonzero == len) {
    fprintf (out, "\"%s\": \"\"", key);
    return;
  }
  g_autofree char *b64 = g_base64_encode (data, len);
  fprintf (out, "\"%s\": \"%s\"", key, b64);
}

static void
wtc_html_kv_str (FILE *out, const char *key, const char *value)
{
  fprintf (out, "\"%s\": ", key);
  if (value)
    wtc_json_str (out, value);
  else
    fputs ("null", out);
}

static void
wtc_html_num (FILE *out, double v)
{
  if (v < 0)
    fputs ("null", out);
  else
    fprintf (out, "%.0f", v);
}

/* The cold pass in one line (the text report's "cold:" and "fsck:"). */
static void
wtc_html_cold (const struct wtc_check *c, FILE *out)
{
  const struct wtc_cold *k = &c->cold;
  g_autoptr (GString) line = g_string_new (wtc_cold_verdict (k));
  if (k->mf)
    g_string_append_printf (line, ": %" PRIu32 " of %" PRIu32 " files differ after a reboot, %u bad sectors",
                            k->files_damaged, c->mf->nfiles, k->bad->len);
  else if (k->ran)
    g_string_append_printf (line, ": %s", k->guest_error ? k->guest_error
                            : k->error ? k->error : "no cold manifest");
  if (k->fsck_ran)
    g_string_append_printf (line, "; fsck %s (%s)", k->fsck_verdict,
                            k->fsck_command ? k->fsck_command : "?");
  fputs ("\"cold\": {", out);
  wtc_html_kv_str (out, "verdict", wtc_cold_verdict (k));
  fputs (", ", out);
  wtc_html_kv_str (out, "line", line->str);
  /* the cold section: report.json's "cold", its runs bounded */
  fputs (", \"detail\": ", out);
  wtc_cold_json_object (c, WTC_HTML_MAX_COLD_RUNS, out);
  fputs ("},\n", out);
}

/* Everything the header shows. */
static void
wtc_html_header (const struct wtc_check *c, FILE *out)
{
  static const char *const hello_keys[] = { "kernel", "arch", "page_size", "fs", "block_size",
                                            "workload", "seed" };
  static const char *const result_keys[] = { "status", "readback", "readback_bad_sectors", "error" };
  bool inputs_ok = c->log_read && !c->log_status.torn && !c->channel_error && !c->log_error;
  fprintf (out, "\"verdict\": \"%s\", \"inputs_complete\": %s, \"bad_sectors\": %u, \"by_class\": {",
           wtc_verdict (c), inputs_ok ? "true" : "false", c->bad->len);
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    fprintf (out, "%s\"%s\": %" PRIu64, k ? ", " : "", wtc_class_name (k), c->by_class[k]);
  fputs ("},\n\"guest\": {", out);
  for (size_t i = 0; i < G_N_ELEMENTS (hello_keys); i++) {
    g_autofree char *v = wtc_hello_value (c, hello_keys[i]);
    fputs (i ? ", " : "", out);
    wtc_html_kv_str (out, hello_keys[i], v);
  }
  for (size_t i = 0; i < G_N_ELEMENTS (result_keys); i++) {
    g_autofree char *v = wtc_result_value (c, result_keys[i]);
    fputs (", ", out);
    wtc_html_kv_str (out, result_keys[i], v);
  }
  fputs (", ", out);
  wtc_html_kv_str (out, "page_cache", wtc_page_cache_verdict (c));
  fputs ("},\n", out);
  wtc_html_cold (c, out);
  fputs ("\"hello\": [", out);
  /* Every HELLO line: the run's parameters as the guest saw them. */
  bool any = false;
  for (guint i = 0; c->channel && i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type != WTCH_HELLO || !m->text)
      continue;
    g_auto (GStrv) lines = g_strsplit (m->text, "\n", -1);
    for (int j = 0; lines[j]; j++)
      if (lines[j][0]) {
        fputs (any ? ", " : "", out);
        wtc_json_str (out, lines[j]);
        any = true;
      }
    break;
  }
  char when[64], id[40];
  fprintf (out, "],\n\"log\": {\"records\": %" PRIu64 ", \"end\": \"%s\", \"disk_size\": %" PRIu64
           ", \"data\": %s, \"start\": \"%s\", \"run_id\": \"%s\", ",
           c->log_status.records, !c->log_read ? "unread" : c->log_status.torn ? "torn"
           : c->log_status.closed ? "closed" : "unclosed", c->log_header.disk_size,
           (c->log_header.flags & WTLOG_H_DATA) ? "true" : "false",
           c->log_read ? wtc_fmt_iso (c->log_header.start_realtime_ns, when, sizeof when) : "",
           wtc_fmt_run_id (c->log_header.run_id, id, sizeof id));
  wtc_html_kv_str (out, "creator", c->log_read ? c->log_header.creator : NULL);
  fputs (", ", out);
  wtc_html_kv_str (out, "error", c->log_status.torn ? c->log_status.error : c->log_error);
  fputs ("},\n", out);
  wtc_html_kv_str (out, "channel_error", c->channel_error);
  fputs (", \"warnings\": [", out);
  for (guint i = 0; i < c->warnings->len; i++) {
    fputs (i ? ", " : "", out);
    wtc_json_str (out, g_ptr_array_index (c->warnings, i));
  }
  fputs ("],\n", out);
}

static void
wtc_html_file_pages (const struct wtc_check *c, uint32_t fi, uint64_t *budget, FILE *out)
{
  uint64_t total = 0;
  fputs ("\"pages\": [", out);
  for (guint i = 0; i < c->bad->len;) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file != fi) {
      i++;
      continue;
    }
    uint64_t page = b->file_sector / 8;
    unsigned mask = 0;
    guint j = i;
    for (; j < c->bad->len; j++) {
      const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, j);
      if (s->file != fi || s->file_sector / 8 != page)
        break;
      mask |= 1u << (s->file_sector % 8);
    }
    if (*budget) {
      fprintf (out, "%s[%" PRIu64 ", %u, %u]", total ? ", " : "", page, mask, b->cls);
      --*budget;
    }
    total++;
    i = j;
  }
  fprintf (out, "], \"pages_total\": %" PRIu64, total);
}

static void
wtc_html_file (const struct wtc_check *c, uint32_t fi, uint64_t *ext_budget,
               uint64_t *page_budget, FILE *out)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  fputs ("{", out);
  wtc_html_kv_str (out, "path", f->path);
  fprintf (out, ", \"size\": %" PRIu64 ", \"sectors\": %" PRIu64 ", \"checked\": %" PRIu64
           ", \"uncheckable\": %" PRIu64 ", \"bad\": %" PRIu64 ", \"extents\": [",
           f->size, f->nsectors, st->checked, st->uncheckable, st->bad);
  uint32_t shown = 0;
  for (; shown < f->nextents && *ext_budget; shown++, --*ext_budget) {
    const struct wtmf_extent *e = &f->extents[shown];
    fprintf (out, "%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu32 "]", shown ? ", " : "",
             e->logical, e->physical, e->length, e->flags);
  }
  fprintf (out, "], \"extents_total\": %" PRIu32 ", ", f->nextents);
  wtc_html_file_pages (c, fi, page_budget, out);
  fputs ("}", out);
}

/* The writes a run names, whose times the timeline marks. */
static void
wtc_html_run_seqs (const struct wtc_check *c, const struct wtc_run *r, GArray *seqs)
{
  const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, r->first);
  uint64_t s[] = { r->last_seq, b->expected_seq, b->replaced_seq, b->holds_seq, b->misplaced_seq };
  for (size_t i = 0; i < G_N_ELEMENTS (s); i++)
    if (s[i])
      g_array_append_val (seqs, s[i]);
}

static void
wtc_html_seq_field (FILE *out, const struct wtc_html_data *d, const char *key, uint64_t seq)
{
  if (!seq) {
    fprintf (out, ", \"%s\": null", key);
    return;
  }
  fprintf (out, ", \"%s\": [%" PRIu64 ", ", key, seq);
  wtc_html_num (out, wtc_html_seq_x (d, seq));
  fputs ("]", out);
}

static void
wtc_html_run (const struct wtc_check *c, const struct wtc_html_data *d,
              const struct wtc_run *r, FILE *out)
{
  const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, r->first);
  fprintf (out, "{\"f\": %" PRIu32 ", \"c\": %u, \"fs\": %" PRIu64 ", \"ds\": ", r->file, r->cls,
           b->file_sector);
  if (b->disk_sector == WTC_NO_SECTOR)
    fputs ("null", out);
  else
    fprintf (out, "%" PRIu64, b->disk_sector);
  fprintf (out, ", \"n\": %u, \"op\": ", r->count);
  const struct wtmf_op *op = r->op && r->op <= c->mf->nops ? &c->mf->ops[r->op - 1] : NULL;
  uint64_t t;
  bool approx;
  if (op && wtc_guest_to_log (c, op->guest_ns, &t, &approx))
    fprintf (out, "[%" PRIu32 ", \"%s\", %" PRIu64 ", %s]", r->op, wtmf_op_kind_name (op->kind),
             t, approx ? "true" : "false");
  else if (op)
    fprintf (out, "[%" PRIu32 ", \"%s\", null, false]", r->op, wtmf_op_kind_name (op->kind));
  else
    fputs ("null", out);
  wtc_html_seq_field (out, d, "last", r->last_seq);
  wtc_html_seq_field (out, d, "expected", b->expected_seq);
  wtc_html_seq_field (out, d, "replaced", b->replaced_seq);
  if (b->holds_seq)
    wtc_html_seq_field (out, d, "holds", b->holds_seq);
  else if (b->disk_sector != WTC_NO_SECTOR && !b->unwritten)
    fputs (", \"holds\": \"pre-run\"", out);
  else
    fputs (", \"holds\": null", out);
  if (b->misplaced_count)
    fprintf (out, ", \"misplaced\": [%" PRIu64 ", %" PRIu64 ", %" PRIu32 "]",
             b->misplaced_sector, b->misplaced_seq, b->misplaced_count);
  fprintf (out, ", \"unwritten\": %s, \"h\": [", b->unwritten ? "true" : "false");
  for (guint i = 0; i < r->count && i < WTC_HTML_RUN_HASHES; i++) {
    const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, r->first + i);
    fprintf (out, "%s[\"%016" PRIx64 "\", \"%016" PRIx64 "\"]", i ? ", " : "", s->expected, s->image);
  }
  fputs ("]}", out);
}

static void
wtc_html_disk (const struct wtc_html_data *d, FILE *out)
{
  fprintf (out, "\"disk\": {\"sectors\": %" PRIu64 ", \"bucket\": %" PRIu64 ", \"n\": %" PRIu32
           ", \"fine\": %" PRIu64 ", \"nfine\": %" PRIu64 ", ", d->disk_sectors, d->bucket_sectors,
           d->nbuckets, d->fine_sectors, d->nfine);
  wtc_html_b64 (out, "writes", d->bucket_writes, d->nbuckets * sizeof *d->bucket_writes);
  fputs (", ", out);
  wtc_html_b64 (out, "last_seq", d->bucket_last_seq, d->nbuckets * sizeof *d->bucket_last_seq);
  fputs (", ", out);
  wtc_html_b64 (out, "last_t", d->bucket_last_t, d->nbuckets * sizeof *d->bucket_last_t);
  fputs (", ", out);
  wtc_html_b64 (out, "written", d->written, (d->nfine + 7) / 8);
  fputs ("},\n", out);
}

static void
wtc_html_timeline (const struct wtc_check *c, const struct wtc_html_data *d, FILE *out)
{
  size_t cells = WTC_HTML_TL_COLS * WTC_HTML_TL_ROWS;
  fprintf (out, "\"timeline\": {\"cols\": %d, \"rows\": %d, \"x\": \"%s\", \"x0\": %" PRIu64
           ", \"col_width\": %" PRIu64 ", \"x_max\": %" PRIu64 ", \"row_sectors\": %" PRIu64 ", ",
           WTC_HTML_TL_COLS, WTC_HTML_TL_ROWS, d->x_is_seq ? "seq" : "ns", d->x0, d->col_width,
           d->x_max, d->row_sectors);
  wtc_html_b64 (out, "writes", d->tl_writes, cells * sizeof *d->tl_writes);
  fputs (", ", out);
  wtc_html_b64 (out, "zeroes", d->tl_zeroes, cells * sizeof *d->tl_zeroes);
  fputs (", ", out);
  wtc_html_b64 (out, "flush", d->tl_flush, WTC_HTML_TL_COLS * sizeof *d->tl_flush);
  fputs (", ", out);
  wtc_html_b64 (out, "fua", d->tl_fua, WTC_HTML_TL_COLS * sizeof *d->tl_fua);
  fputs (", \"marks\": [", out);
  uint64_t marks = 0;
  for (guint i = 0; c->channel && i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK || !m->placed)
      continue;
    if (marks++ < WTC_HTML_MAX_MARKS) {
      fprintf (out, "%s[%" PRIu64 ", ", marks > 1 ? ", " : "",
               d->x_is_seq ? m->log_seq : m->log_t_start);
      wtc_json_str (out, m->text ? m->text : "");
      fputs ("]", out);
    }
  }
  fprintf (out, "], \"marks_total\": %" PRIu64 ", \"have_faults\": %s, \"faults\": [", marks,
           d->have_faults ? "true" : "false");
  for (guint i = 0; i < d->faults->len; i++) {
    const struct wtc_html_fault *f = &g_array_index (d->faults, struct wtc_html_fault, i);
    fprintf (out, "%s[\"%s\", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", ", i ? ", " : "",
             f->kind, f->seq, f->after_seq, f->offset, f->length);
    wtc_html_num (out, f->t);
    fputs ("]", out);
  }
  fprintf (out, "], \"faults_total\": %" PRIu64 ", ", d->faults_total);
  wtc_html_kv_str (out, "faults_error", d->faults_error);
  fputs ("},\n", out);
}

static void
wtc_html_data_json (const struct wtc_check *c, const struct wtc_html_data *d,
                    GPtrArray *runs, uint64_t runs_total, const char *collect_error, FILE *out)
{
  fputs ("{\"kind\": \"run\", \"version\": 1, \"classes\": [", out);
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    fprintf (out, "%s\"%s\"", k ? ", " : "", wtc_class_name (k));
  fputs ("],\n", out);
  wtc_html_header (c, out);
  wtc_html_kv_str (out, "picture_error", collect_error);
  fputs (",\n", out);
  wtc_html_disk (d, out);
  wtc_html_timeline (c, d, out);
  fputs ("\"files\": [", out);
  uint64_t ext_budget = WTC_HTML_MAX_EXTENTS, page_budget = WTC_HTML_MAX_PAGES;
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++) {
    fputs (fi ? ",\n" : "\n", out);
    wtc_html_file (c, fi, &ext_budget, &page_budget, out);
  }
  fputs ("],\n\"runs\": [", out);
  guint shown = 0;
  for (guint fi = 0; fi < runs->len; fi++) {
    const GArray *fr = g_ptr_array_index (runs, fi);
    for (guint i = 0; i < fr->len && shown < WTC_HTML_MAX_RUNS; i++, shown++) {
      fputs (shown ? ",\n" : "\n", out);
      wtc_html_run (c, d, &g_array_index (fr, struct wtc_run, i), out);
    }
  }
  fprintf (out, "], \"runs_total\": %" PRIu64 "}\n", runs_total);
}

static char *
wtc_html_title (const struct wtc_check *c)
{
  g_autofree char *kernel = wtc_hello_value (c, "kernel");
  g_autofree char *fs = wtc_hello_value (c, "fs");
  g_autofree char *workload = wtc_hello_value (c, "workload");
  return g_strdup_printf ("wtrack: %s, %s %s on %s", c->bad->len ? "damaged" : "clean",
                          workload ? workload : "?", fs ? fs : "?", kernel ? kernel : "?");
}

bool
wtc_report_html (const struct wtc_check *c, const char *path, GError **error)
{
  g_autoptr (GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (GArray) seqs = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  uint64_t runs_total = 0;
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++) {
    GArray *fr = wtc_file_runs (c, fi);
    for (guint i = 0; i < fr->len; i++, runs_total++)
      if (runs_total < WTC_HTML_MAX_RUNS)
        wtc_html_run_seqs (c, &g_array_index (fr, struct wtc_run, i), seqs);
    g_ptr_array_add (runs, fr);
  }
  struct wtc_html_data d;
  g_autoptr (GError) collect_error = NULL;
  wtc_html_collect (c, seqs, &d, &collect_error);
  char *json = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&json, &len);
  if (!mem) {
    wtc_html_data_clear (&d);
    g_set_error (error, WTC_ERROR, errno, "html report: %s", g_strerror (errno));
    return false;
  }
  wtc_html_data_json (c, &d, runs, runs_total, collect_error ? collect_error->message : NULL, mem);
  fclose (mem);
  wtc_html_data_clear (&d);
  g_autofree char *title = wtc_html_title (c);
  bool ok = wtc_html_page (path, title, json, error);
  free (json);
  return ok;
}
