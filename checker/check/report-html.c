/* wtrack check --html FILE: one self-contained page (inline CSS and
 * JavaScript, data as JSON) that draws the disk map, each file's pages and
 * extents, and the timeline; doc/report-html.md describes its data. The
 * page itself is generic (report-html.h): the data's "kind" says what the
 * script draws. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "check/check.h"
#include "check/report-trace.h"
#include "check/html-data.h"
#include "check/report-html.h"
#include "lib/html-page.h"
#include "lib/json.h"
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
wtc_html_b64 (JsonBuilder *b, const char *key, const void *data, size_t len)
{
  const unsigned char *p = data;
  size_t nonzero = 0;
  while (nonzero < len && p[nonzero] == 0)
    nonzero++;
  if (nonzero == len) {
    wtc_jb_str (b, key, "");
    return;
  }
  g_autofree char *b64 = g_base64_encode (data, len);
  wtc_jb_str (b, key, b64);
}

/* A position on the timeline's axis (whole seqs or ns), null when unknown. */
static void
wtc_html_num (JsonBuilder *b, const char *key, double v)
{
  if (v < 0)
    wtc_jb_null (b, key);
  else
    wtc_jb_int (b, key, (gint64) nearbyint (v)); /* as printf's %.0f rounds */
}

/* The cold pass in one line (the text report's "cold:" and "fsck:"). */
static void
wtc_html_cold (const struct wtc_check *c, JsonBuilder *b)
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
  wtc_jb_object (b, "cold");
  wtc_jb_str (b, "verdict", wtc_cold_verdict (k));
  wtc_jb_str (b, "line", line->str);
  /* the cold section: report.json's "cold", its runs bounded */
  json_builder_set_member_name (b, "detail");
  wtc_cold_json_object (c, WTC_HTML_MAX_COLD_RUNS, b);
  json_builder_end_object (b);
}

static void
wtc_html_guest (const struct wtc_check *c, JsonBuilder *b)
{
  static const char *const hello_keys[] = { "kernel", "arch", "page_size", "fs", "block_size",
                                            "workload", "seed" };
  static const char *const result_keys[] = { "status", "readback", "readback_bad_sectors", "error" };
  wtc_jb_object (b, "guest");
  for (size_t i = 0; i < G_N_ELEMENTS (hello_keys); i++) {
    g_autofree char *v = wtc_hello_value (c, hello_keys[i]);
    wtc_jb_str (b, hello_keys[i], v);
  }
  for (size_t i = 0; i < G_N_ELEMENTS (result_keys); i++) {
    g_autofree char *v = wtc_result_value (c, result_keys[i]);
    wtc_jb_str (b, result_keys[i], v);
  }
  wtc_jb_str (b, "page_cache", wtc_page_cache_verdict (c));
  json_builder_end_object (b);
}

/* Every HELLO line: the run's parameters as the guest saw them. */
static void
wtc_html_hello (const struct wtc_check *c, JsonBuilder *b)
{
  wtc_jb_array (b, "hello");
  for (guint i = 0; c->channel && i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type != WTCH_HELLO || !m->text)
      continue;
    g_auto (GStrv) lines = g_strsplit (m->text, "\n", -1);
    for (int j = 0; lines[j]; j++)
      if (lines[j][0])
        wtc_jb_str (b, NULL, lines[j]);
    break;
  }
  json_builder_end_array (b);
}

static void
wtc_html_log (const struct wtc_check *c, JsonBuilder *b)
{
  char when[64], id[40];
  wtc_jb_object (b, "log");
  wtc_jb_u64 (b, "records", c->log_status.records);
  wtc_jb_str (b, "end", wtc_log_end (c));
  wtc_jb_u64 (b, "disk_size", c->log_header.disk_size);
  wtc_jb_bool (b, "data", c->log_header.flags & WTLOG_H_DATA);
  wtc_jb_str (b, "start", c->log_read ? wtc_fmt_iso (c->log_header.start_realtime_ns, when, sizeof when) : "");
  wtc_jb_str (b, "run_id", wtc_fmt_run_id (c->log_header.run_id, id, sizeof id));
  wtc_jb_str (b, "creator", c->log_read ? c->log_header.creator : NULL);
  wtc_jb_str (b, "error", c->log_status.torn ? c->log_status.error : c->log_error);
  json_builder_end_object (b);
}

/* Everything the header shows. */
static void
wtc_html_header (const struct wtc_check *c, JsonBuilder *b)
{
  bool inputs_ok = c->log_read && !c->log_status.torn && !c->channel_error && !c->log_error;
  wtc_jb_str (b, "verdict", wtc_verdict (c));
  wtc_jb_bool (b, "inputs_complete", inputs_ok);
  wtc_jb_u64 (b, "bad_sectors", c->bad->len);
  wtc_jb_object (b, "by_class");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    wtc_jb_u64 (b, wtc_class_name (k), c->by_class[k]);
  json_builder_end_object (b);
  wtc_html_guest (c, b);
  wtc_html_cold (c, b);
  wtc_html_hello (c, b);
  wtc_html_log (c, b);
  wtc_jb_str (b, "channel_error", c->channel_error);
  wtc_jb_strings (b, "warnings", c->warnings);
}

static void
wtc_html_file_pages (const struct wtc_check *c, uint32_t fi, uint64_t *budget, JsonBuilder *b)
{
  uint64_t total = 0;
  wtc_jb_array (b, "pages");
  for (guint i = 0; i < c->bad->len;) {
    const struct wtc_bad *bad = &g_array_index (c->bad, struct wtc_bad, i);
    if (bad->file != fi) {
      i++;
      continue;
    }
    uint64_t page = bad->file_sector / 8;
    unsigned mask = 0;
    guint j = i;
    for (; j < c->bad->len; j++) {
      const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, j);
      if (s->file != fi || s->file_sector / 8 != page)
        break;
      mask |= 1u << (s->file_sector % 8);
    }
    if (*budget) {
      wtc_jb_array (b, NULL);
      wtc_jb_u64 (b, NULL, page);
      wtc_jb_u64 (b, NULL, mask);
      wtc_jb_u64 (b, NULL, bad->cls);
      json_builder_end_array (b);
      --*budget;
    }
    total++;
    i = j;
  }
  json_builder_end_array (b);
  wtc_jb_u64 (b, "pages_total", total);
}

static void
wtc_html_file (const struct wtc_check *c, uint32_t fi, uint64_t *ext_budget,
               uint64_t *page_budget, JsonBuilder *b)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "path", f->path);
  wtc_jb_u64 (b, "size", f->size);
  wtc_jb_u64 (b, "sectors", f->nsectors);
  wtc_jb_u64 (b, "checked", st->checked);
  wtc_jb_u64 (b, "uncheckable", st->uncheckable);
  wtc_jb_u64 (b, "bad", st->bad);
  wtc_jb_array (b, "extents");
  for (uint32_t shown = 0; shown < f->nextents && *ext_budget; shown++, --*ext_budget) {
    const struct wtmf_extent *e = &f->extents[shown];
    wtc_jb_array (b, NULL);
    wtc_jb_u64 (b, NULL, e->logical);
    wtc_jb_u64 (b, NULL, e->physical);
    wtc_jb_u64 (b, NULL, e->length);
    wtc_jb_u64 (b, NULL, e->flags);
    json_builder_end_array (b);
  }
  json_builder_end_array (b);
  wtc_jb_u64 (b, "extents_total", f->nextents);
  wtc_html_file_pages (c, fi, page_budget, b);
  json_builder_end_object (b);
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

/* [seq, its place on the timeline] or null. */
static void
wtc_html_seq_field (JsonBuilder *b, const struct wtc_html_data *d, const char *key, uint64_t seq)
{
  if (!seq) {
    wtc_jb_null (b, key);
    return;
  }
  wtc_jb_array (b, key);
  wtc_jb_u64 (b, NULL, seq);
  wtc_html_num (b, NULL, wtc_html_seq_x (d, seq));
  json_builder_end_array (b);
}

/* [number, kind, log time or null, approx] or null. */
static void
wtc_html_run_op (const struct wtc_check *c, const struct wtc_run *r, JsonBuilder *b)
{
  const struct wtmf_op *op = r->op && r->op <= c->mf->nops ? &c->mf->ops[r->op - 1] : NULL;
  if (!op) {
    wtc_jb_null (b, "op");
    return;
  }
  uint64_t t;
  bool approx = false;
  bool placed = wtc_guest_to_log (c, op->guest_ns, &t, &approx);
  wtc_jb_array (b, "op");
  wtc_jb_u64 (b, NULL, r->op);
  wtc_jb_str (b, NULL, wtmf_op_kind_name (op->kind));
  if (placed)
    wtc_jb_u64 (b, NULL, t);
  else
    wtc_jb_null (b, NULL);
  wtc_jb_bool (b, NULL, placed && approx);
  json_builder_end_array (b);
}

static void
wtc_html_run_holds (const struct wtc_bad *bad, const struct wtc_html_data *d, JsonBuilder *b)
{
  if (bad->holds_seq)
    wtc_html_seq_field (b, d, "holds", bad->holds_seq);
  else if (bad->disk_sector != WTC_NO_SECTOR && !bad->unwritten)
    wtc_jb_str (b, "holds", "pre-run");
  else
    wtc_jb_null (b, "holds");
  if (bad->misplaced_count) {
    wtc_jb_array (b, "misplaced");
    wtc_jb_u64 (b, NULL, bad->misplaced_sector);
    wtc_jb_u64 (b, NULL, bad->misplaced_seq);
    wtc_jb_u64 (b, NULL, bad->misplaced_count);
    json_builder_end_array (b);
  }
}

static void
wtc_html_run (const struct wtc_check *c, const struct wtc_html_data *d,
              const struct wtc_run *r, JsonBuilder *b)
{
  const struct wtc_bad *bad = &g_array_index (c->bad, struct wtc_bad, r->first);
  wtc_jb_object (b, NULL);
  wtc_jb_u64 (b, "f", r->file);
  wtc_jb_u64 (b, "c", r->cls);
  wtc_jb_u64 (b, "fs", bad->file_sector);
  if (bad->disk_sector == WTC_NO_SECTOR)
    wtc_jb_null (b, "ds");
  else
    wtc_jb_u64 (b, "ds", bad->disk_sector);
  wtc_jb_u64 (b, "n", r->count);
  wtc_html_run_op (c, r, b);
  wtc_html_seq_field (b, d, "last", r->last_seq);
  wtc_html_seq_field (b, d, "expected", bad->expected_seq);
  wtc_html_seq_field (b, d, "replaced", bad->replaced_seq);
  wtc_html_run_holds (bad, d, b);
  wtc_jb_bool (b, "unwritten", bad->unwritten);
  wtc_jb_bool (b, "delalloc", bad->delalloc);
  wtc_jb_array (b, "h");
  for (guint i = 0; i < r->count && i < WTC_HTML_RUN_HASHES; i++) {
    const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, r->first + i);
    char hex[17];
    wtc_jb_array (b, NULL);
    g_snprintf (hex, sizeof hex, "%016" PRIx64, s->expected);
    wtc_jb_str (b, NULL, hex);
    g_snprintf (hex, sizeof hex, "%016" PRIx64, s->image);
    wtc_jb_str (b, NULL, hex);
    json_builder_end_array (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
wtc_html_disk (const struct wtc_html_data *d, JsonBuilder *b)
{
  wtc_jb_object (b, "disk");
  wtc_jb_u64 (b, "sectors", d->disk_sectors);
  wtc_jb_u64 (b, "bucket", d->bucket_sectors);
  wtc_jb_u64 (b, "n", d->nbuckets);
  wtc_jb_u64 (b, "fine", d->fine_sectors);
  wtc_jb_u64 (b, "nfine", d->nfine);
  wtc_html_b64 (b, "writes", d->bucket_writes, d->nbuckets * sizeof *d->bucket_writes);
  wtc_html_b64 (b, "last_seq", d->bucket_last_seq, d->nbuckets * sizeof *d->bucket_last_seq);
  wtc_html_b64 (b, "last_t", d->bucket_last_t, d->nbuckets * sizeof *d->bucket_last_t);
  wtc_html_b64 (b, "written", d->written, (d->nfine + 7) / 8);
  json_builder_end_object (b);
}

static void
wtc_html_marks (const struct wtc_check *c, const struct wtc_html_data *d, JsonBuilder *b)
{
  uint64_t marks = 0;
  wtc_jb_array (b, "marks");
  for (guint i = 0; c->channel && i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK || !m->placed)
      continue;
    if (marks++ < WTC_HTML_MAX_MARKS) {
      wtc_jb_array (b, NULL);
      wtc_jb_u64 (b, NULL, d->x_is_seq ? m->log_seq : m->log_t_start);
      wtc_jb_str (b, NULL, m->text ? m->text : "");
      json_builder_end_array (b);
    }
  }
  json_builder_end_array (b);
  wtc_jb_u64 (b, "marks_total", marks);
}

static void
wtc_html_faults (const struct wtc_html_data *d, JsonBuilder *b)
{
  wtc_jb_bool (b, "have_faults", d->have_faults);
  wtc_jb_array (b, "faults");
  for (guint i = 0; i < d->faults->len; i++) {
    const struct wtc_html_fault *f = &g_array_index (d->faults, struct wtc_html_fault, i);
    wtc_jb_array (b, NULL);
    wtc_jb_str (b, NULL, f->kind);
    wtc_jb_u64 (b, NULL, f->seq);
    wtc_jb_u64 (b, NULL, f->after_seq);
    wtc_jb_u64 (b, NULL, f->offset);
    wtc_jb_u64 (b, NULL, f->length);
    wtc_html_num (b, NULL, f->t);
    json_builder_end_array (b);
  }
  json_builder_end_array (b);
  wtc_jb_u64 (b, "faults_total", d->faults_total);
  wtc_jb_str (b, "faults_error", d->faults_error);
}

static void
wtc_html_timeline (const struct wtc_check *c, const struct wtc_html_data *d, JsonBuilder *b)
{
  size_t cells = WTC_HTML_TL_COLS * WTC_HTML_TL_ROWS;
  wtc_jb_object (b, "timeline");
  wtc_jb_int (b, "cols", WTC_HTML_TL_COLS);
  wtc_jb_int (b, "rows", WTC_HTML_TL_ROWS);
  wtc_jb_str (b, "x", d->x_is_seq ? "seq" : "ns");
  wtc_jb_u64 (b, "x0", d->x0);
  wtc_jb_u64 (b, "col_width", d->col_width);
  wtc_jb_u64 (b, "x_max", d->x_max);
  wtc_jb_u64 (b, "row_sectors", d->row_sectors);
  wtc_html_b64 (b, "writes", d->tl_writes, cells * sizeof *d->tl_writes);
  wtc_html_b64 (b, "zeroes", d->tl_zeroes, cells * sizeof *d->tl_zeroes);
  wtc_html_b64 (b, "flush", d->tl_flush, WTC_HTML_TL_COLS * sizeof *d->tl_flush);
  wtc_html_b64 (b, "fua", d->tl_fua, WTC_HTML_TL_COLS * sizeof *d->tl_fua);
  wtc_html_marks (c, d, b);
  wtc_html_faults (d, b);
  json_builder_end_object (b);
}

static void
wtc_html_runs (const struct wtc_check *c, const struct wtc_html_data *d, GPtrArray *runs,
               uint64_t runs_total, JsonBuilder *b)
{
  wtc_jb_array (b, "runs");
  guint shown = 0;
  for (guint fi = 0; fi < runs->len; fi++) {
    const GArray *fr = g_ptr_array_index (runs, fi);
    for (guint i = 0; i < fr->len && shown < WTC_HTML_MAX_RUNS; i++, shown++)
      wtc_html_run (c, d, &g_array_index (fr, struct wtc_run, i), b);
  }
  json_builder_end_array (b);
  wtc_jb_u64 (b, "runs_total", runs_total);
}

/* The page's data: bounded (WTC_HTML_MAX_*), so built as one tree. */
static char *
wtc_html_data_json (const struct wtc_check *c, const struct wtc_html_data *d,
                    GPtrArray *runs, uint64_t runs_total, const char *collect_error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "kind", "run");
  wtc_jb_int (b, "version", 1);
  wtc_jb_array (b, "classes");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    wtc_jb_str (b, NULL, wtc_class_name (k));
  json_builder_end_array (b);
  wtc_html_header (c, b);
  wtc_jb_str (b, "picture_error", collect_error);
  wtc_html_disk (d, b);
  wtc_html_timeline (c, d, b);
  wtc_jb_array (b, "files");
  uint64_t ext_budget = WTC_HTML_MAX_EXTENTS, page_budget = WTC_HTML_MAX_PAGES;
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++)
    wtc_html_file (c, fi, &ext_budget, &page_budget, b);
  json_builder_end_array (b);
  wtc_html_runs (c, d, runs, runs_total, b);
  if (c->trace)
    wtc_report_html_trace (c, d->x_is_seq, b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return wtc_json_text (root);
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
  g_autofree char *json = wtc_html_data_json (c, &d, runs, runs_total,
                                              collect_error ? collect_error->message : NULL);
  wtc_html_data_clear (&d);
  g_autofree char *title = wtc_html_title (c);
  return wtc_html_page_trace (path, title, json, c->trace != NULL, error);
}
