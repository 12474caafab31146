/* The summaries of a campaign (campaign/summary.h) from what collect.c
 * tallied. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "campaign/summary.h"
#include "lib/html-page.h"
#include "lib/json.h"
#include "lib/util.h"

#define WTC_SUMMARY_VERSION 1

static const char *const wtc_status_names[] = { "not_run", "clean", "damaged", "error" };

/* The grid's rows and columns, shared with collect.c's tally. */

void
wtc_column_free (struct wtc_column *col)
{
  g_free (col->fs);
  g_free (col->variant);
  g_free (col->workload);
  g_free (col->label);
  g_free (col);
}

static bool
wtc_same (const char *a, const char *b)
{
  return (!a && !b) || (a && b && strcmp (a, b) == 0);
}

guint
wtc_column_of (GPtrArray *columns, const struct wtc_cell *cell)
{
  for (guint i = 0; i < columns->len; i++) {
    const struct wtc_column *col = g_ptr_array_index (columns, i);
    if (wtc_same (col->fs, cell->fs) && wtc_same (col->variant, cell->variant)
        && wtc_same (col->workload, cell->workload))
      return i;
  }
  struct wtc_column *col = g_new0 (struct wtc_column, 1);
  col->fs = g_strdup (cell->fs);
  col->variant = g_strdup (cell->variant);
  col->workload = g_strdup (cell->workload);
  col->label = cell->variant
                 ? g_strdup_printf ("%s/%s %s", cell->fs, cell->variant, cell->workload)
                 : g_strdup_printf ("%s %s", cell->fs, cell->workload);
  g_ptr_array_add (columns, col);
  return columns->len - 1;
}

guint
wtc_row_of (GPtrArray *rows, const char *kernel)
{
  for (guint i = 0; i < rows->len; i++)
    if (strcmp (g_ptr_array_index (rows, i), kernel) == 0)
      return i;
  g_ptr_array_add (rows, g_strdup (kernel));
  return rows->len - 1;
}

/* pdata has no NULL end: g_strjoinv does not serve. */
char *
wtc_join (GPtrArray *strings, const char *sep)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < strings->len; i++)
    g_string_append_printf (s, "%s%s", i ? sep : "", (const char *) g_ptr_array_index (strings, i));
  return g_string_free (s, FALSE);
}

static int
wtc_u64_cmp (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* The distinct block sizes the cells of a column (row G_MAXUINT: of every
 * row) reported, smallest first; empty when none did. */
static GArray *
wtc_block_sizes (struct wtc_collect *c, guint row, guint col)
{
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < c->results->len; i++) {
    const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
    if (!r->block_size || wtc_column_of (c->columns, r->cell) != col
        || (row != G_MAXUINT && wtc_row_of (c->rows, r->cell->kernel) != row))
      continue;
    bool seen = false;
    for (guint k = 0; k < sizes->len && !seen; k++)
      seen = g_array_index (sizes, guint64, k) == r->block_size;
    if (!seen)
      g_array_append_val (sizes, r->block_size);
  }
  g_array_sort (sizes, wtc_u64_cmp);
  return sizes;
}

/* A grid cell's block size when its cells agree on one, else 0. */
static guint64
wtc_block_size_at (struct wtc_collect *c, guint row, guint col)
{
  g_autoptr (GArray) sizes = wtc_block_sizes (c, row, col);
  return sizes->len == 1 ? g_array_index (sizes, guint64, 0) : 0;
}

/* A column's label in summary.txt: "fs[/variant] workload", then
 * " bs=N[/M...]", the block sizes its cells reported (none: nothing). */
static char *
wtc_column_text (struct wtc_collect *c, guint col)
{
  const struct wtc_column *column = g_ptr_array_index (c->columns, col);
  g_autoptr (GArray) sizes = wtc_block_sizes (c, G_MAXUINT, col);
  GString *s = g_string_new (column->label);
  for (guint k = 0; k < sizes->len; k++)
    g_string_append_printf (s, "%s%" PRIu64, k ? "/" : " bs=", g_array_index (sizes, guint64, k));
  return g_string_free (s, FALSE);
}

static char *
wtc_grid_text (const struct wtc_tally *t)
{
  guint ran = t->counts[WTC_CELL_CLEAN] + t->counts[WTC_CELL_DAMAGED];
  GString *s = g_string_new (NULL);
  g_string_printf (s, "%u/%u", t->counts[WTC_CELL_DAMAGED], ran);
  if (t->counts[WTC_CELL_ERROR])
    g_string_append_printf (s, " +%u error%s", t->counts[WTC_CELL_ERROR],
                            t->counts[WTC_CELL_ERROR] == 1 ? "" : "s");
  if (t->counts[WTC_CELL_NOT_RUN])
    g_string_append_printf (s, " +%u not run", t->counts[WTC_CELL_NOT_RUN]);
  return g_string_free (s, FALSE);
}

static int
wtc_double_cmp (gconstpointer a, gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The median of a phase over the cells that report it; false when none. */
static bool
wtc_phase_median (struct wtc_collect *c, const char *phase, double *median, guint *n)
{
  g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < c->results->len; i++) {
    const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
    const double *d = g_hash_table_lookup (r->timings, phase);
    if (d)
      g_array_append_val (v, *d);
  }
  if (!v->len)
    return false;
  g_array_sort (v, wtc_double_cmp);
  guint m = v->len / 2;
  *median = v->len % 2 ? g_array_index (v, double, m)
                       : (g_array_index (v, double, m - 1) + g_array_index (v, double, m)) / 2;
  *n = v->len;
  return true;
}

static void
wtc_write_grid (struct wtc_collect *c, FILE *out)
{
  size_t kw = strlen ("kernel");
  for (guint i = 0; i < c->rows->len; i++)
    kw = MAX (kw, strlen (g_ptr_array_index (c->rows, i)));
  g_autofree size_t *cw = g_new0 (size_t, c->columns->len);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  for (guint j = 0; j < c->columns->len; j++) {
    g_ptr_array_add (labels, wtc_column_text (c, j));
    cw[j] = strlen (g_ptr_array_index (labels, j));
    for (guint i = 0; i < c->rows->len; i++) {
      g_autofree char *t = wtc_grid_text (wtc_grid_at (c, i, j));
      cw[j] = MAX (cw[j], strlen (t));
    }
  }
  fprintf (out, "damaged/total seeds per kernel (rows) and fs[/variant] workload (columns;\n"
                "bs= the file system's block size the cells reported);\n"
                "errors (cells that could not run, or were interrupted or lost) and cells\n"
                "--until-fail did not run are counted apart\n\n");
  fprintf (out, "%-*s", (int) kw, "kernel");
  for (guint j = 0; j < c->columns->len; j++)
    fprintf (out, "  %-*s", (int) cw[j], (const char *) g_ptr_array_index (labels, j));
  fputc ('\n', out);
  for (guint i = 0; i < c->rows->len; i++) {
    fprintf (out, "%-*s", (int) kw, (const char *) g_ptr_array_index (c->rows, i));
    for (guint j = 0; j < c->columns->len; j++) {
      g_autofree char *t = wtc_grid_text (wtc_grid_at (c, i, j));
      fprintf (out, "  %-*s", (int) cw[j], t);
    }
    fputc ('\n', out);
  }
}

void
wtc_summary_text (struct wtc_collect *c, FILE *out)
{
  const struct wtc_tally *t = &c->total;
  fprintf (out, "campaign %s: %u cells: %u clean, %u damaged, %u error, %u not run (--until-fail)\n\n", c->dir,
           c->results->len, t->counts[WTC_CELL_CLEAN], t->counts[WTC_CELL_DAMAGED],
           t->counts[WTC_CELL_ERROR], t->counts[WTC_CELL_NOT_RUN]);
  wtc_write_grid (c, out);
  for (int want = WTC_CELL_DAMAGED; want <= WTC_CELL_ERROR; want++) {
    if (!t->counts[want])
      continue;
    fprintf (out, "\n%s cells:\n", want == WTC_CELL_DAMAGED ? "damaged" : "error");
    for (guint i = 0; i < c->results->len; i++) {
      const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
      if ((int) r->status != want)
        continue;
      if (want == WTC_CELL_DAMAGED) {
        g_autofree char *classes = wtc_join (r->classes, " ");
        fprintf (out, "  %s: %" PRIu64 " bad sectors (%s): %s/%s\n", r->cell->id,
                 r->bad_sectors, classes, c->dir, r->dir);
        for (guint l = 0; l < r->verdict->len; l++)
          fprintf (out, "    %s\n", (const char *) g_ptr_array_index (r->verdict, l));
      } else if (r->exit_status >= 0)
        fprintf (out, "  %s: exit %d: %s: %s/%s\n", r->cell->id, r->exit_status,
                 r->error ? r->error : "?", c->dir, r->dir);
      else
        fprintf (out, "  %s: %s: %s/%s\n", r->cell->id, r->error ? r->error : "?", c->dir,
                 r->dir);
    }
  }
  if (c->phases->len) {
    fprintf (out, "\nmedian time of each phase (report.json timings):\n");
    for (guint p = 0; p < c->phases->len; p++) {
      double median;
      guint n;
      if (wtc_phase_median (c, g_ptr_array_index (c->phases, p), &median, &n))
        fprintf (out, "  %-20s %8.2f s  (%u cells)\n",
                 (const char *) g_ptr_array_index (c->phases, p), median, n);
    }
  }
}

static void
wtc_json_seconds (JsonBuilder *b, const char *key, double seconds, double unit)
{
  if (seconds >= 0)
    wtc_jb_double (b, key, round (seconds / unit) * unit);
  else
    wtc_jb_null (b, key);
}

/* A size in bytes, or null for 0 (unknown: no report, or an older guest's). */
static void
wtc_json_size (JsonBuilder *b, const char *key, guint64 n)
{
  if (n)
    wtc_jb_u64 (b, key, n);
  else
    wtc_jb_null (b, key);
}

static void
wtc_json_by_class (const struct wtc_result *r, JsonBuilder *b)
{
  wtc_jb_object (b, "by_class");
  for (guint i = 0; i < r->classes->len; i++) {
    g_auto (GStrv) kv = g_strsplit (g_ptr_array_index (r->classes, i), "=", 2);
    guint64 n = 0;
    g_ascii_string_to_unsigned (kv[1] ? kv[1] : "", 10, 0, G_MAXUINT64, &n, NULL);
    wtc_jb_u64 (b, kv[0], n);
  }
  json_builder_end_object (b);
}

static void
wtc_json_cell (const struct wtc_result *r, JsonBuilder *b)
{
  const struct wtc_cell *cell = r->cell;
  g_autofree char *arch = wtc_kernel_arch (cell->kernel);
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "id", cell->id);
  wtc_jb_str (b, "kernel", cell->kernel);
  wtc_jb_str (b, "arch", arch);
  wtc_json_size (b, "page_size", r->page_size);
  wtc_jb_str (b, "fs", cell->fs);
  wtc_json_size (b, "block_size", r->block_size);
  wtc_jb_str (b, "variant", cell->variant);
  wtc_jb_str (b, "workload", cell->workload);
  wtc_jb_u64 (b, "seed", cell->seed);
  wtc_jb_str (b, "status", wtc_status_names[r->status]);
  if (r->exit_status >= 0)
    wtc_jb_int (b, "exit", r->exit_status);
  else
    wtc_jb_null (b, "exit");
  wtc_json_seconds (b, "seconds", r->seconds, 0.1);
  wtc_jb_u64 (b, "bad_sectors", r->bad_sectors);
  wtc_json_by_class (r, b);
  wtc_jb_str (b, "error", r->error);
  wtc_jb_str (b, "dir", r->dir);
  wtc_jb_str (b, "minimal", r->minimal);
  wtc_jb_strings (b, "args", cell->args);
  json_builder_end_object (b);
}

/* The counts of a tally, after "cells" (the tally's total). */
static void
wtc_json_counts (const struct wtc_tally *t, JsonBuilder *b)
{
  wtc_jb_u64 (b, "cells", t->counts[0] + t->counts[1] + t->counts[2] + t->counts[3]);
  wtc_jb_u64 (b, "clean", t->counts[WTC_CELL_CLEAN]);
  wtc_jb_u64 (b, "damaged", t->counts[WTC_CELL_DAMAGED]);
  wtc_jb_u64 (b, "error", t->counts[WTC_CELL_ERROR]);
  wtc_jb_u64 (b, "not_run", t->counts[WTC_CELL_NOT_RUN]);
}

static void
wtc_json_grid (struct wtc_collect *c, JsonBuilder *b)
{
  wtc_jb_array (b, "grid");
  for (guint i = 0; i < c->rows->len; i++)
    for (guint j = 0; j < c->columns->len; j++) {
      const struct wtc_column *col = g_ptr_array_index (c->columns, j);
      const struct wtc_tally *g = wtc_grid_at (c, i, j);
      if (!(g->counts[0] + g->counts[1] + g->counts[2] + g->counts[3]))
        continue;
      g_autofree char *arch = wtc_kernel_arch (g_ptr_array_index (c->rows, i));
      wtc_jb_object (b, NULL);
      wtc_jb_str (b, "kernel", g_ptr_array_index (c->rows, i));
      wtc_jb_str (b, "arch", arch);
      wtc_jb_str (b, "fs", col->fs);
      wtc_json_size (b, "block_size", wtc_block_size_at (c, i, j));
      wtc_jb_str (b, "variant", col->variant);
      wtc_jb_str (b, "workload", col->workload);
      wtc_json_counts (g, b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
wtc_json_medians (struct wtc_collect *c, JsonBuilder *b)
{
  wtc_jb_object (b, "timings_median");
  for (guint p = 0; p < c->phases->len; p++) {
    double median;
    guint n;
    if (wtc_phase_median (c, g_ptr_array_index (c->phases, p), &median, &n))
      wtc_json_seconds (b, g_ptr_array_index (c->phases, p), median, 0.001);
  }
  json_builder_end_object (b);
}

/* summary.json's object as b's next value (doc/campaign-json.md). */
static void
wtc_json_summary (struct wtc_collect *c, JsonBuilder *b)
{
  wtc_jb_object (b, NULL);
  wtc_jb_int (b, "version", WTC_SUMMARY_VERSION);
  wtc_jb_str (b, "dir", c->dir);
  wtc_jb_object (b, "counts");
  wtc_json_counts (&c->total, b);
  json_builder_end_object (b);
  wtc_jb_array (b, "cells");
  for (guint i = 0; i < c->results->len; i++)
    wtc_json_cell (&g_array_index (c->results, struct wtc_result, i), b);
  json_builder_end_array (b);
  wtc_json_grid (c, b);
  wtc_json_medians (c, b);
  json_builder_end_object (b);
}

/* summary.json: the top-level fields one a line. */
static void
wtc_write_json (struct wtc_collect *c, FILE *out)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  wtc_json_summary (c, b);
  struct wtc_json_out o;
  wtc_json_out_begin (&o, out);
  wtc_json_out_members (&o, b);
  wtc_json_out_end (&o);
}

static void
wtc_xml_attr (FILE *out, const char *name, const char *value)
{
  g_autofree char *esc = g_markup_escape_text (value ? value : "", -1);
  fprintf (out, " %s=\"%s\"", name, esc);
}

static void
wtc_xml_property (FILE *out, const char *indent, const char *name, const char *value)
{
  fprintf (out, "%s<property", indent);
  wtc_xml_attr (out, "name", name);
  wtc_xml_attr (out, "value", value);
  fputs ("/>\n", out);
}

static void
wtc_write_xml_case (const struct wtc_result *r, FILE *out)
{
  const struct wtc_cell *cell = r->cell;
  fputs ("    <testcase", out);
  wtc_xml_attr (out, "classname", "wtrack");
  wtc_xml_attr (out, "name", cell->id);
  fprintf (out, " time=\"%.1f\">\n      <properties>\n", r->seconds > 0 ? r->seconds : 0.0);
  g_autofree char *seed = g_strdup_printf ("%" PRIu64, cell->seed);
  g_autofree char *args = wtc_join (cell->args, " ");
  wtc_xml_property (out, "        ", "kernel", cell->kernel);
  wtc_xml_property (out, "        ", "fs", cell->fs);
  if (r->block_size) {
    g_autofree char *bs = g_strdup_printf ("%" PRIu64, r->block_size);
    wtc_xml_property (out, "        ", "block_size", bs);
  }
  wtc_xml_property (out, "        ", "variant", cell->variant ? cell->variant : "");
  wtc_xml_property (out, "        ", "workload", cell->workload);
  wtc_xml_property (out, "        ", "seed", seed);
  wtc_xml_property (out, "        ", "args", args);
  wtc_xml_property (out, "        ", "dir", r->dir);
  fputs ("      </properties>\n", out);
  if (r->status == WTC_CELL_DAMAGED) {
    g_autofree char *msg = g_strdup_printf ("%" PRIu64 " bad sectors", r->bad_sectors);
    g_autofree char *body = wtc_join (r->verdict, "\n");
    g_autofree char *esc = g_markup_escape_text (body, -1);
    fputs ("      <failure", out);
    wtc_xml_attr (out, "message", msg);
    wtc_xml_attr (out, "type", "damaged");
    fprintf (out, ">%s</failure>\n", esc);
  } else if (r->status == WTC_CELL_ERROR) {
    fputs ("      <error", out);
    wtc_xml_attr (out, "message", r->error);
    wtc_xml_attr (out, "type", "error");
    fputs ("/>\n", out);
  } else if (r->status == WTC_CELL_NOT_RUN) {
    fputs ("      <skipped", out);
    wtc_xml_attr (out, "message", "not run: --until-fail stopped the campaign");
    fputs ("/>\n", out);
  }
  fputs ("    </testcase>\n", out);
}

/* One testsuite per kernel, as xfstests writes one per test run. */
static void
wtc_write_xml (struct wtc_collect *c, FILE *out)
{
  char host[256] = "localhost", stamp[64];
  gethostname (host, sizeof host - 1);
  time_t now = time (NULL);
  strftime (stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", localtime (&now));
  fputs ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", out);
  for (guint k = 0; k < c->rows->len; k++) {
    const char *kernel = g_ptr_array_index (c->rows, k);
    struct wtc_tally t = { 0 };
    double secs = 0;
    for (guint i = 0; i < c->results->len; i++) {
      const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
      if (strcmp (r->cell->kernel, kernel) == 0) {
        t.counts[r->status]++;
        secs += MAX (r->seconds, 0);
      }
    }
    guint n = t.counts[0] + t.counts[1] + t.counts[2] + t.counts[3];
    fputs ("  <testsuite", out);
    wtc_xml_attr (out, "name", kernel);
    wtc_xml_attr (out, "hostname", host);
    wtc_xml_attr (out, "timestamp", stamp);
    fprintf (out, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%.1f\">\n",
             n, t.counts[WTC_CELL_DAMAGED], t.counts[WTC_CELL_ERROR],
             t.counts[WTC_CELL_NOT_RUN], secs);
    fputs ("    <properties>\n", out);
    wtc_xml_property (out, "      ", "kernel", kernel);
    fputs ("    </properties>\n", out);
    for (guint i = 0; i < c->results->len; i++) {
      const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
      if (strcmp (r->cell->kernel, kernel) == 0)
        wtc_write_xml_case (r, out);
    }
    fputs ("  </testsuite>\n", out);
  }
  fputs ("</testsuites>\n", out);
}

typedef void (*wtc_writer) (struct wtc_collect *c, FILE *out);

/* Written to NAME.tmp, then renamed: a reader never sees half a summary. */
static bool
wtc_write_file (struct wtc_collect *c, const char *name, wtc_writer write, GError **error)
{
  g_autofree char *path = g_build_filename (c->dir, name, NULL);
  g_autofree char *tmp = g_strdup_printf ("%s.tmp", path);
  FILE *out = fopen (tmp, "w");
  if (!out) {
    g_set_error (error, WTC_ERROR, errno, "open: %s: %s", tmp, g_strerror (errno));
    return false;
  }
  write (c, out);
  if (ferror (out) | (fclose (out) != 0) || rename (tmp, path) != 0) {
    g_set_error (error, WTC_ERROR, errno, "write: %s: %s", path, g_strerror (errno));
    return false;
  }
  return true;
}

/* summary.html: the HTML report's page with {"kind": "campaign", "summary":
 * summary.json's object}; the script draws the grid and links each failing
 * cell to its report.html (doc/report-html.md, "summary.html"). */
static bool
wtc_write_html (struct wtc_collect *c, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "kind", "campaign");
  json_builder_set_member_name (b, "summary");
  wtc_json_summary (c, b);
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *json = wtc_json_text (root);
  g_autofree char *path = g_build_filename (c->dir, "summary.html", NULL);
  g_autofree char *tmp = g_strdup_printf ("%s.tmp", path);
  g_autofree char *title = g_strdup_printf ("wtrack campaign %s", c->dir);
  if (!wtc_html_page (tmp, title, json, error))
    return false;
  if (rename (tmp, path) != 0) {
    g_set_error (error, WTC_ERROR, errno, "rename: %s: %s", path, g_strerror (errno));
    return false;
  }
  return true;
}

bool
wtc_summary_write (struct wtc_collect *c, GError **error)
{
  return wtc_write_file (c, "summary.txt", wtc_summary_text, error)
         && wtc_write_file (c, "summary.json", wtc_write_json, error)
         && wtc_write_file (c, "results.xml", wtc_write_xml, error)
         && wtc_write_html (c, error);
}
