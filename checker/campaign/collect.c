/* wtrack campaign collect: the cells' results (DIR/plan.tsv and each
 * DIR/cells/ID/cell.ini, written by scripts/wtrack-campaign) become
 * summary.txt, summary.json (doc/campaign-json.md) and results.xml (the
 * JUnit shape xfstests writes). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "campaign/campaign.h"
#include "commands.h"
#include "lib/html-page.h"
#include "lib/util.h"

#define WTC_SUMMARY_VERSION 1
/* Verdict lines of report.txt carried into a failure's text. */
#define WTC_MAX_VERDICT_LINES 20

enum wtc_cell_status { WTC_CELL_NOT_RUN, WTC_CELL_CLEAN, WTC_CELL_DAMAGED, WTC_CELL_ERROR };
static const char *const wtc_status_names[] = { "not_run", "clean", "damaged", "error" };

/* What a cell's folder holds against what plan.tsv now asks: only a DONE
 * cell's result is the campaign's answer; --resume (re)runs the others. */
enum wtc_cell_state {
  WTC_STATE_DONE,       /* cell.ini readable, its arguments and kernel the plan's */
  WTC_STATE_NO_RESULT,  /* no cell.ini */
  WTC_STATE_LOST,       /* cell.ini written for a cell that ended without a result */
  WTC_STATE_UNREADABLE, /* cell.ini that is not a cell's record */
  WTC_STATE_STALE,      /* ran with other arguments or another kernel */
};

struct wtc_result {
  const struct wtc_cell *cell;
  enum wtc_cell_status status;
  enum wtc_cell_state state;
  char *why;            /* the state's reason, fit for a terminal (NULL: DONE) */
  int exit_status;      /* -1: unknown */
  double seconds;       /* -1: unknown */
  guint64 bad_sectors;
  char *error;          /* why it could not run */
  GPtrArray *classes;   /* "name=count" */
  GPtrArray *verdict;   /* report.txt's verdict lines */
  GHashTable *timings;  /* phase -> double * */
  char *dir;            /* relative to the campaign folder */
  guint64 page_size;    /* the guest's (report.json), 0: unknown */
  guint64 block_size;   /* the file system's (report.json), 0: unknown */
};

/* One column of the grid: fs, variant and workload. */
struct wtc_column {
  char *fs, *variant, *workload, *label;
};

/* The strings of a GPtrArray joined by sep (pdata has no NULL end). */
static char *
wtc_join (GPtrArray *strings, const char *sep)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < strings->len; i++)
    g_string_append_printf (s, "%s%s", i ? sep : "", (const char *) g_ptr_array_index (strings, i));
  return g_string_free (s, FALSE);
}

static void
wtc_result_clear (struct wtc_result *r)
{
  g_free (r->error);
  g_free (r->why);
  g_ptr_array_unref (r->classes);
  g_ptr_array_unref (r->verdict);
  g_hash_table_unref (r->timings);
  g_free (r->dir);
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

static void
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

static guint
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

static guint
wtc_row_of (GPtrArray *rows, const char *kernel)
{
  for (guint i = 0; i < rows->len; i++)
    if (strcmp (g_ptr_array_index (rows, i), kernel) == 0)
      return i;
  g_ptr_array_add (rows, g_strdup (kernel));
  return rows->len - 1;
}

struct wtc_tally {
  guint counts[4]; /* by enum wtc_cell_status */
};

struct wtc_collect {
  const char *dir;
  GArray *results;   /* struct wtc_result */
  GPtrArray *rows;   /* kernel specs */
  GPtrArray *columns;
  struct wtc_tally *grid; /* rows x columns */
  struct wtc_tally total;
  GPtrArray *phases; /* phase names, sorted */
};

static struct wtc_tally *
wtc_grid_at (struct wtc_collect *c, guint row, guint col)
{
  return &c->grid[row * c->columns->len + col];
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

static void
wtc_write_text (struct wtc_collect *c, FILE *out)
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
wtc_json_kv (FILE *out, const char *key, const char *value, const char *sep)
{
  fprintf (out, "\"%s\": ", key);
  if (value)
    wtc_json_str (out, value);
  else
    fputs ("null", out);
  fputs (sep, out);
}

/* "KEY": N, or null for 0 (unknown: no report, or an older guest's). */
static void
wtc_json_size (FILE *out, const char *key, guint64 n)
{
  if (n)
    fprintf (out, "\"%s\": %" PRIu64 ", ", key, n);
  else
    fprintf (out, "\"%s\": null, ", key);
}

static void
wtc_write_json_cell (const struct wtc_result *r, FILE *out)
{
  const struct wtc_cell *cell = r->cell;
  fputs ("    {", out);
  wtc_json_kv (out, "id", cell->id, ", ");
  wtc_json_kv (out, "kernel", cell->kernel, ", ");
  g_autofree char *arch = wtc_kernel_arch (cell->kernel);
  wtc_json_kv (out, "arch", arch, ", ");
  wtc_json_size (out, "page_size", r->page_size);
  wtc_json_kv (out, "fs", cell->fs, ", ");
  wtc_json_size (out, "block_size", r->block_size);
  wtc_json_kv (out, "variant", cell->variant, ", ");
  wtc_json_kv (out, "workload", cell->workload, ", ");
  fprintf (out, "\"seed\": %" PRIu64 ", ", cell->seed);
  wtc_json_kv (out, "status", wtc_status_names[r->status], ", ");
  if (r->exit_status >= 0)
    fprintf (out, "\"exit\": %d, ", r->exit_status);
  else
    fputs ("\"exit\": null, ", out);
  if (r->seconds >= 0)
    fprintf (out, "\"seconds\": %.1f, ", r->seconds);
  else
    fputs ("\"seconds\": null, ", out);
  fprintf (out, "\"bad_sectors\": %" PRIu64 ", \"by_class\": {", r->bad_sectors);
  for (guint i = 0; i < r->classes->len; i++) {
    g_auto (GStrv) kv = g_strsplit (g_ptr_array_index (r->classes, i), "=", 2);
    fprintf (out, "%s", i ? ", " : "");
    wtc_json_str (out, kv[0]);
    fprintf (out, ": %s", kv[1]);
  }
  fputs ("}, ", out);
  wtc_json_kv (out, "error", r->error, ", ");
  wtc_json_kv (out, "dir", r->dir, ", ");
  fputs ("\"args\": [", out);
  for (guint i = 0; i < cell->args->len; i++) {
    fputs (i ? ", " : "", out);
    wtc_json_str (out, g_ptr_array_index (cell->args, i));
  }
  fputs ("]}", out);
}

static void
wtc_write_json (struct wtc_collect *c, FILE *out)
{
  const struct wtc_tally *t = &c->total;
  fprintf (out, "{\n  \"version\": %d,\n  ", WTC_SUMMARY_VERSION);
  wtc_json_kv (out, "dir", c->dir, ",\n");
  fprintf (out, "  \"counts\": {\"cells\": %u, \"clean\": %u, \"damaged\": %u, \"error\": %u, "
                "\"not_run\": %u},\n  \"cells\": [\n", c->results->len,
           t->counts[WTC_CELL_CLEAN], t->counts[WTC_CELL_DAMAGED], t->counts[WTC_CELL_ERROR],
           t->counts[WTC_CELL_NOT_RUN]);
  for (guint i = 0; i < c->results->len; i++) {
    wtc_write_json_cell (&g_array_index (c->results, struct wtc_result, i), out);
    fputs (i + 1 < c->results->len ? ",\n" : "\n", out);
  }
  fputs ("  ],\n  \"grid\": [\n", out);
  bool first = true;
  for (guint i = 0; i < c->rows->len; i++)
    for (guint j = 0; j < c->columns->len; j++) {
      const struct wtc_column *col = g_ptr_array_index (c->columns, j);
      const struct wtc_tally *g = wtc_grid_at (c, i, j);
      guint n = g->counts[0] + g->counts[1] + g->counts[2] + g->counts[3];
      if (!n)
        continue;
      fputs (first ? "    {" : ",\n    {", out);
      first = false;
      wtc_json_kv (out, "kernel", g_ptr_array_index (c->rows, i), ", ");
      g_autofree char *arch = wtc_kernel_arch (g_ptr_array_index (c->rows, i));
      wtc_json_kv (out, "arch", arch, ", ");
      wtc_json_kv (out, "fs", col->fs, ", ");
      wtc_json_size (out, "block_size", wtc_block_size_at (c, i, j));
      wtc_json_kv (out, "variant", col->variant, ", ");
      wtc_json_kv (out, "workload", col->workload, ", ");
      fprintf (out, "\"cells\": %u, \"clean\": %u, \"damaged\": %u, \"error\": %u, "
                    "\"not_run\": %u}", n, g->counts[WTC_CELL_CLEAN],
               g->counts[WTC_CELL_DAMAGED], g->counts[WTC_CELL_ERROR],
               g->counts[WTC_CELL_NOT_RUN]);
    }
  fputs ("\n  ],\n  \"timings_median\": {", out);
  for (guint p = 0, shown = 0; p < c->phases->len; p++) {
    double median;
    guint n;
    if (!wtc_phase_median (c, g_ptr_array_index (c->phases, p), &median, &n))
      continue;
    fputs (shown++ ? ", " : "", out);
    wtc_json_str (out, g_ptr_array_index (c->phases, p));
    fprintf (out, ": %.3f", median);
  }
  fputs ("}\n}\n", out);
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
  char *json = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&json, &len);
  if (!mem) {
    g_set_error (error, WTC_ERROR, errno, "open_memstream: %s", g_strerror (errno));
    return false;
  }
  fputs ("{\"kind\": \"campaign\", \"summary\": ", mem);
  wtc_write_json (c, mem);
  fputs ("}\n", mem);
  if (fclose (mem) != 0) {
    free (json);
    g_set_error (error, WTC_ERROR, errno, "summary.html: %s", g_strerror (errno));
    return false;
  }
  g_autofree char *path = g_build_filename (c->dir, "summary.html", NULL);
  g_autofree char *tmp = g_strdup_printf ("%s.tmp", path);
  g_autofree char *title = g_strdup_printf ("wtrack campaign %s", c->dir);
  bool ok = wtc_html_page (tmp, title, json, error);
  free (json);
  if (ok && rename (tmp, path) != 0) {
    g_set_error (error, WTC_ERROR, errno, "rename: %s: %s", path, g_strerror (errno));
    ok = false;
  }
  return ok;
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
  bool written = wtc_write_file (&c, "summary.txt", wtc_write_text, error)
                 && wtc_write_file (&c, "summary.json", wtc_write_json, error)
                 && wtc_write_file (&c, "results.xml", wtc_write_xml, error)
                 && wtc_write_html (&c, error);
  if (written && print)
    wtc_write_text (&c, print);
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
