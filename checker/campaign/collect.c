/* wtrack campaign collect: the cells' results (DIR/plan.tsv and each
 * DIR/cells/ID/cell.ini, written by scripts/wtrack-campaign) read and
 * tallied into the grid; campaign/summary.c writes them out. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "campaign/summary.h"
#include "commands.h"
#include "lib/util.h"

/* Verdict lines of report.txt carried into a failure's text. */
#define WTC_MAX_VERDICT_LINES 20

static void
wtc_result_clear (struct wtc_result *r)
{
  g_free (r->error);
  g_free (r->why);
  g_ptr_array_unref (r->classes);
  g_ptr_array_unref (r->verdict);
  g_hash_table_unref (r->timings);
  g_free (r->dir);
  g_free (r->minimal);
}

/* A file's verdict line of report.txt ("/data/f1: 56 sectors lost in 7
 * pages; ...", "/data/f1: clean (...)"), not the headers of its page and
 * run lists that also start with the path. */
static bool
wtc_is_verdict_line (const char *line)
{
  if (g_str_has_prefix (line, "!!"))
    return true;
  const char *rest = line[0] == '/' ? strstr (line, ": ") : NULL;
  if (!rest)
    return false;
  rest += 2;
  if (g_str_has_prefix (rest, "clean ("))
    return true;
  while (g_ascii_isdigit (*rest))
    rest++;
  return g_str_has_prefix (rest, " sector") || g_str_has_prefix (rest, " bad sectors");
}

static void
wtc_read_verdict (struct wtc_result *r, const char *report)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (report, &text, NULL, NULL))
    return;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l && r->verdict->len < WTC_MAX_VERDICT_LINES; l++)
    if (wtc_is_verdict_line (*l))
      g_ptr_array_add (r->verdict, g_strdup (*l));
}

static void
wtc_read_group_numbers (GKeyFile *kf, const char *group, struct wtc_result *r, bool timings)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, NULL);
  for (char **k = keys; k && *k; k++) {
    g_autofree char *v = g_key_file_get_value (kf, group, *k, NULL);
    char *end;
    double d = v ? g_ascii_strtod (v, &end) : 0;
    if (!v || end == v || *end || !isfinite (d) || d < 0)
      continue;
    g_autofree char *key = wtc_text_safe (*k);
    if (timings)
      g_hash_table_insert (r->timings, g_steal_pointer (&key), g_memdup2 (&d, sizeof d));
    else
      g_ptr_array_add (r->classes, g_strdup_printf ("%s=%s", key, v));
  }
}

/* The plan's arguments as cell.ini's args= holds them: joined by tabs,
 * a backslash doubled and a tab written \t (GKeyFile's escapes;
 * scripts/wtrack-campaign writes the same). */
static char *
wtc_args_ini (const struct wtc_cell *cell)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < cell->args->len; i++) {
    if (i)
      g_string_append (s, "\\t");
    for (const char *p = g_ptr_array_index (cell->args, i); *p; p++)
      if (*p == '\\')
        g_string_append (s, "\\\\");
      else if (*p == '\t')
        g_string_append (s, "\\t");
      else
        g_string_append_c (s, *p);
  }
  return g_string_free (s, FALSE);
}

/* A number cell.ini must hold as a decimal: false (why set) when the key is
 * there but holds anything else, so a corrupt record is an error, never 0. */
static bool
wtc_ini_u64 (GKeyFile *kf, const char *key, guint64 *out, char **why)
{
  g_autofree char *v = g_key_file_get_value (kf, "cell", key, NULL);
  if (!v)
    return true;
  char *end;
  errno = 0;
  guint64 n = g_ascii_strtoull (v, &end, 10);
  if (!g_ascii_isdigit (*v) || *end || errno) {
    g_autofree char *safe = wtc_text_safe (v);
    *why = g_strdup_printf ("cell.ini: %s: not a number: %s", key, safe);
    return false;
  }
  *out = n;
  return true;
}

static bool
wtc_ini_seconds (GKeyFile *kf, double *out, char **why)
{
  g_autofree char *v = g_key_file_get_value (kf, "cell", "seconds", NULL);
  if (!v)
    return true;
  char *end;
  double d = g_ascii_strtod (v, &end);
  if (end == v || *end || !isfinite (d) || d < 0) {
    g_autofree char *safe = wtc_text_safe (v);
    *why = g_strdup_printf ("cell.ini: seconds: not a number: %s", safe);
    return false;
  }
  *out = d;
  return true;
}

static bool
wtc_ini_exit (GKeyFile *kf, int *out, char **why)
{
  guint64 v = 0;
  if (!g_key_file_has_key (kf, "cell", "exit", NULL))
    return true;
  g_autofree char *raw = g_key_file_get_value (kf, "cell", "exit", NULL);
  if (raw && strcmp (raw, "-1") == 0)
    return true;                /* the cell never started wtrack-run */
  if (!wtc_ini_u64 (kf, "exit", &v, why))
    return false;
  if (v > 255) {
    *why = g_strdup_printf ("cell.ini: exit: not an exit status: %" PRIu64, v);
    return false;
  }
  *out = (int) v;
  return true;
}

/* Whether cell.ini records this cell as the plan now asks for it: its id,
 * its arguments, its kernel spec and (when kernels.tsv has one) the
 * kernel file's SHA-256. Sets why (STALE) when not. */
static bool
wtc_ini_identity (GKeyFile *kf, const struct wtc_cell *cell, GHashTable *kernel_sums,
                  struct wtc_result *r)
{
  g_autofree char *id = g_key_file_get_value (kf, "cell", "id", NULL);
  g_autofree char *args = g_key_file_get_value (kf, "cell", "args", NULL);
  g_autofree char *kernel = g_key_file_get_value (kf, "cell", "kernel", NULL);
  g_autofree char *sum = g_key_file_get_value (kf, "cell", "kernel_sha256", NULL);
  g_autofree char *want_args = wtc_args_ini (cell);
  const char *want_sum = kernel_sums ? g_hash_table_lookup (kernel_sums, cell->kernel) : NULL;
  if (!id || strcmp (id, cell->id) != 0)
    r->why = g_strdup ("cell.ini is another cell's");
  else if (!args)
    r->why = g_strdup ("cell.ini records no arguments (an older wtrack's)");
  else if (strcmp (args, want_args) != 0)
    r->why = g_strdup ("ran with other arguments than the campaign's");
  else if (!kernel || strcmp (kernel, cell->kernel) != 0)
    r->why = g_strdup ("ran another kernel spec");
  else if (want_sum && (!sum || strcmp (sum, want_sum) != 0))
    r->why = g_strdup_printf ("ran another kernel file than %s now is", cell->kernel);
  return r->why == NULL;
}

/* Reads cell.ini into r; false (state and why set) when it is no
 * record of this cell as the plan now asks for it. */
static bool
wtc_read_ini (const char *ini, const struct wtc_cell *cell, GHashTable *kernel_sums,
              struct wtc_result *r)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autoptr (GError) error = NULL;
  if (!g_key_file_load_from_file (kf, ini, G_KEY_FILE_NONE, &error)) {
    g_autofree char *msg = wtc_text_safe (error->message);
    r->state = WTC_STATE_UNREADABLE;
    r->why = g_strdup_printf ("cell.ini: %s", msg);
    return false;
  }
  g_autofree char *status = g_key_file_get_value (kf, "cell", "status", NULL);
  r->error = g_key_file_get_string (kf, "cell", "error", NULL);
  if (r->error) {
    char *safe = wtc_text_safe (r->error);
    g_free (r->error);
    r->error = safe;
  }
  if (g_key_file_get_boolean (kf, "cell", "lost", NULL)) {
    r->state = WTC_STATE_LOST;
    r->why = g_strdup (r->error ? r->error : "the cell ended without a result");
    return false;
  }
  if (!status || (strcmp (status, "clean") && strcmp (status, "damaged") && strcmp (status, "error"))) {
    g_autofree char *safe = status ? wtc_text_safe (status) : NULL;
    r->state = WTC_STATE_UNREADABLE;
    r->why = g_strdup_printf ("cell.ini: status: %s", safe ? safe : "missing");
    return false;
  }
  if (!wtc_ini_exit (kf, &r->exit_status, &r->why) || !wtc_ini_seconds (kf, &r->seconds, &r->why)
      || !wtc_ini_u64 (kf, "bad_sectors", &r->bad_sectors, &r->why)
      || !wtc_ini_u64 (kf, "page_size", &r->page_size, &r->why)
      || !wtc_ini_u64 (kf, "block_size", &r->block_size, &r->why)) {
    r->state = WTC_STATE_UNREADABLE;
    return false;
  }
  if (!wtc_ini_identity (kf, cell, kernel_sums, r)) {
    r->state = WTC_STATE_STALE;
    return false;
  }
  r->status = strcmp (status, "clean") == 0     ? WTC_CELL_CLEAN
              : strcmp (status, "damaged") == 0 ? WTC_CELL_DAMAGED
                                                : WTC_CELL_ERROR;
  if (r->status == WTC_CELL_ERROR && !r->error)
    r->error = g_strdup ("status error");
  wtc_read_group_numbers (kf, "classes", r, false);
  wtc_read_group_numbers (kf, "timings", r, true);
  return true;
}

/* A cell's result, or why it has none. A cell that is not DONE counts as
 * an error (its answer is missing), except a cell --until-fail did not
 * start (no cell.ini while DIR/until-fail and DIR/stop are there): that
 * one is not_run. A cell.ini that cannot be read is an error too. */
static void
wtc_read_result (const char *dir, const struct wtc_cell *cell, GHashTable *kernel_sums,
                 struct wtc_result *r)
{
  r->cell = cell;
  r->exit_status = -1;
  r->seconds = -1;
  r->classes = g_ptr_array_new_with_free_func (g_free);
  r->verdict = g_ptr_array_new_with_free_func (g_free);
  r->timings = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  r->dir = g_build_filename ("cells", cell->id, NULL);
  g_autofree char *ini = g_build_filename (dir, r->dir, "cell.ini", NULL);
  if (!g_file_test (ini, G_FILE_TEST_EXISTS)) {
    g_autofree char *until = g_build_filename (dir, "until-fail", NULL);
    g_autofree char *stop = g_build_filename (dir, "stop", NULL);
    r->state = WTC_STATE_NO_RESULT;
    if (g_file_test (until, G_FILE_TEST_EXISTS) && g_file_test (stop, G_FILE_TEST_EXISTS)) {
      r->status = WTC_CELL_NOT_RUN;
      r->why = g_strdup ("not run: --until-fail stopped the campaign");
    } else {
      r->status = WTC_CELL_ERROR;
      r->why = g_strdup ("not run: the campaign was interrupted or the cell lost (no cell.ini)");
      r->error = g_strdup_printf ("%s; --resume runs it", r->why);
    }
    return;
  }
  if (wtc_read_ini (ini, cell, kernel_sums, r)) {
    r->state = WTC_STATE_DONE;
    g_autofree char *report = g_build_filename (dir, r->dir, "report.txt", NULL);
    wtc_read_verdict (r, report);
    /* wtrack-campaign run --minimize: the cell's minimized list */
    g_autofree char *minimal = g_build_filename (r->dir, "minimal", "summary.txt", NULL);
    g_autofree char *minimal_path = g_build_filename (dir, minimal, NULL);
    if (g_file_test (minimal_path, G_FILE_TEST_IS_REGULAR))
      r->minimal = g_steal_pointer (&minimal);
    return;
  }
  /* a record that is not this cell's answer: nothing of it is reported */
  r->status = WTC_CELL_ERROR;
  r->exit_status = -1;
  r->seconds = -1;
  r->bad_sectors = 0;
  r->page_size = 0;
  r->block_size = 0;
  g_free (r->error);
  r->error = r->state == WTC_STATE_LOST ? g_strdup (r->why)
                                         : g_strdup_printf ("%s (--resume runs it again)", r->why);
}

/* kernels.tsv's fourth column: spec -> the kernel file's SHA-256. NULL
 * without the file (a campaign not run here, or by an older wtrack). */
static GHashTable *
wtc_kernel_sums (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "kernels.tsv", NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return NULL;
  GHashTable *sums = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (char **l = lines; *l; l++) {
    g_auto (GStrv) f = g_strsplit (*l, "\t", -1);
    if (g_strv_length (f) >= 4 && *f[3])
      g_hash_table_insert (sums, g_strdup (f[0]), g_strdup (f[3]));
  }
  return sums;
}

static int
wtc_str_ptr_cmp (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
wtc_tally_all (struct wtc_collect *c)
{
  for (guint i = 0; i < c->results->len; i++) {
    const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
    wtc_row_of (c->rows, r->cell->kernel);
    wtc_column_of (c->columns, r->cell);
  }
  c->grid = g_new0 (struct wtc_tally, c->rows->len * c->columns->len + 1);
  for (guint i = 0; i < c->results->len; i++) {
    const struct wtc_result *r = &g_array_index (c->results, struct wtc_result, i);
    guint row = wtc_row_of (c->rows, r->cell->kernel), col = wtc_column_of (c->columns, r->cell);
    wtc_grid_at (c, row, col)->counts[r->status]++;
    c->total.counts[r->status]++;
    GHashTableIter it;
    gpointer phase;
    g_hash_table_iter_init (&it, r->timings);
    while (g_hash_table_iter_next (&it, &phase, NULL))
      if (!g_ptr_array_find_with_equal_func (c->phases, phase, g_str_equal, NULL))
        g_ptr_array_add (c->phases, g_strdup (phase));
  }
  g_ptr_array_sort (c->phases, wtc_str_ptr_cmp);
}

/* Every cell of DIR's plan with its result (or why it has none). */
static GArray *
wtc_read_results (const char *dir, GPtrArray *cells)
{
  g_autoptr (GHashTable) sums = wtc_kernel_sums (dir);
  GArray *results = g_array_sized_new (FALSE, TRUE, sizeof (struct wtc_result), cells->len);
  g_array_set_clear_func (results, (GDestroyNotify) wtc_result_clear);
  g_array_set_size (results, cells->len);
  for (guint i = 0; i < cells->len; i++)
    wtc_read_result (dir, g_ptr_array_index (cells, i), sums,
                     &g_array_index (results, struct wtc_result, i));
  return results;
}

bool
wtc_campaign_todo (const char *dir, FILE *out, GError **error)
{
  g_autofree char *plan_path = g_build_filename (dir, "plan.tsv", NULL);
  g_autoptr (GPtrArray) cells = wtc_plan_read (plan_path, error);
  if (!cells)
    return false;
  g_autoptr (GArray) results = wtc_read_results (dir, cells);
  for (guint i = 0; i < results->len; i++) {
    const struct wtc_result *r = &g_array_index (results, struct wtc_result, i);
    if (r->state != WTC_STATE_DONE)
      fprintf (out, "%s\t%s\n", r->cell->id, r->why);
  }
  return true;
}

bool
wtc_campaign_collect (const char *dir, FILE *print, int *status, GError **error)
{
  g_autofree char *plan_path = g_build_filename (dir, "plan.tsv", NULL);
  g_autoptr (GPtrArray) cells = wtc_plan_read (plan_path, error);
  if (!cells)
    return false;
  struct wtc_collect c = { .dir = dir };
  c.results = wtc_read_results (dir, cells);
  c.rows = g_ptr_array_new_with_free_func (g_free);
  c.columns = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_column_free);
  c.phases = g_ptr_array_new_with_free_func (g_free);
  wtc_tally_all (&c);
  bool written = wtc_summary_write (&c, error);
  if (written && print)
    wtc_summary_text (&c, print);
  *status = c.total.counts[WTC_CELL_ERROR]     ? WT_EXIT_ERROR
            : c.total.counts[WTC_CELL_DAMAGED] ? WT_EXIT_DAMAGE
                                               : WT_EXIT_OK;
  g_array_unref (c.results);
  g_ptr_array_unref (c.rows);
  g_ptr_array_unref (c.columns);
  g_ptr_array_unref (c.phases);
  g_free (c.grid);
  return written;
}
