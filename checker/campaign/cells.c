/* A campaign's cells (campaign.h): each kernel x fs x variant x workload x
 * seed with its stable id and its wtrack-run arguments, the options of
 * the campaign and of its variant merged by rank; and plan.tsv, the cells
 * as scripts/wtrack-campaign reads them. plan.c loads the campaign. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "campaign/campaign.h"
#include "lib/util.h"

void
wtc_cell_free (struct wtc_cell *cell)
{
  if (!cell)
    return;
  g_free (cell->id);
  g_free (cell->kernel);
  g_free (cell->fs);
  g_free (cell->variant);
  g_free (cell->workload);
  g_ptr_array_unref (cell->args);
  g_free (cell);
}

/* The kernel's part of a cell id: the release for debian:R (amd64), R-ARCH
 * or R-ARCH-FLAVOUR for another architecture's (debian:R/ARCH-FLAVOUR),
 * else a short hash of the spec (paths and patch names can be long and
 * hold anything). */
static char *
wtc_kernel_slug (const char *spec)
{
  if (g_str_has_prefix (spec, "debian:"))
    return g_strdelimit (g_strdup (spec + 7), "/", '-');
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, spec, -1);
  if (g_str_has_prefix (spec, "build:"))
    return g_strdup_printf ("build-%.8s", sum);
  g_autofree char *base = g_path_get_basename (spec);
  for (char *p = base; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_' && *p != '+')
      *p = '_';
  return g_strdup_printf ("%.24s-%.8s", base, sum);
}

static void
wtc_args_add_opts (GPtrArray *args, GPtrArray *opts)
{
  for (guint i = 0; i < opts->len; i++) {
    const struct wtc_copt *o = g_ptr_array_index (opts, i);
    if (!o->values->len)
      g_ptr_array_add (args, g_strdup_printf ("--%s", o->key));
    for (guint j = 0; j < o->values->len; j++) {
      g_ptr_array_add (args, g_strdup_printf ("--%s", o->key));
      g_ptr_array_add (args, g_strdup (g_ptr_array_index (o->values, j)));
    }
  }
}

/* How strongly an option of a group holds for a cell: a variant's over the
 * campaign's, and within a group KEY.FS over KEY. */
static int
wtc_copt_rank (const struct wtc_copt *o, bool in_variant)
{
  return (in_variant ? 2 : 0) + (o->fs ? 1 : 0);
}

static bool
wtc_copt_applies (const struct wtc_copt *o, const char *fs)
{
  return !o->fs || strcmp (o->fs, fs) == 0;
}

/* Whether an option of the same name that outranks o applies to the cell
 * (then o does not; repeatable ones add up instead). */
static bool
wtc_copt_outranked (const struct wtc_copt *o, int rank, const struct wtc_campaign *c,
                    const struct wtc_variant *v, const char *fs)
{
  if (o->repeatable)
    return false;
  GPtrArray *groups[2] = { c->opts, v ? v->opts : NULL };
  for (int g = 0; g < 2; g++)
    for (guint i = 0; groups[g] && i < groups[g]->len; i++) {
      const struct wtc_copt *p = g_ptr_array_index (groups[g], i);
      if (p != o && strcmp (p->key, o->key) == 0 && wtc_copt_applies (p, fs)
          && wtc_copt_rank (p, g == 1) > rank)
        return true;
    }
  return false;
}

/* The options of a cell of fs: the campaign's, then the variant's, each
 * one that applies to fs and is not outranked by one of the same name
 * (repeatable ones add up). */
static GPtrArray *
wtc_merged_opts (const struct wtc_campaign *c, const struct wtc_variant *v, const char *fs)
{
  GPtrArray *opts = g_ptr_array_new ();
  GPtrArray *groups[2] = { c->opts, v ? v->opts : NULL };
  for (int g = 0; g < 2; g++)
    for (guint i = 0; groups[g] && i < groups[g]->len; i++) {
      struct wtc_copt *o = g_ptr_array_index (groups[g], i);
      if (wtc_copt_applies (o, fs) && !wtc_copt_outranked (o, wtc_copt_rank (o, g == 1), c, v, fs))
        g_ptr_array_add (opts, o);
    }
  return opts;
}

static struct wtc_cell *
wtc_cell_new (const struct wtc_campaign *c, const char *kernel, const char *fs,
              const struct wtc_variant *v, const char *workload, guint64 seed)
{
  struct wtc_cell *cell = g_new0 (struct wtc_cell, 1);
  cell->kernel = g_strdup (kernel);
  cell->fs = g_strdup (fs);
  cell->variant = v ? g_strdup (v->name) : NULL;
  cell->workload = g_strdup (workload);
  cell->seed = seed;
  g_autofree char *slug = wtc_kernel_slug (kernel);
  cell->id = v ? g_strdup_printf ("%s.%s.%s.%s.s%" PRIu64, slug, fs, v->name, workload, seed)
               : g_strdup_printf ("%s.%s.%s.s%" PRIu64, slug, fs, workload, seed);
  cell->args = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (cell->args, g_strdup ("--fs"));
  g_ptr_array_add (cell->args, g_strdup (fs));
  g_ptr_array_add (cell->args, g_strdup ("--workload"));
  g_ptr_array_add (cell->args, g_strdup (workload));
  g_ptr_array_add (cell->args, g_strdup ("--seed"));
  g_ptr_array_add (cell->args, g_strdup_printf ("%" PRIu64, seed));
  g_autofree char *arch = wtc_kernel_arch (kernel);
  if (strcmp (arch, WTC_DEFAULT_ARCH) != 0) {
    g_ptr_array_add (cell->args, g_strdup ("--arch"));
    g_ptr_array_add (cell->args, g_strdup (arch));
  }
  g_autoptr (GPtrArray) opts = wtc_merged_opts (c, v, fs);
  wtc_args_add_opts (cell->args, opts);
  return cell;
}

GPtrArray *
wtc_campaign_cells (const struct wtc_campaign *c)
{
  GPtrArray *cells = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_cell_free);
  guint nvariants = MAX (c->variants->len, 1);
  for (guint k = 0; k < c->kernels->len; k++)
    for (guint f = 0; f < c->fs->len; f++)
      for (guint v = 0; v < nvariants; v++) {
        const char *fs = g_ptr_array_index (c->fs, f);
        const struct wtc_variant *var = c->variants->len ? g_ptr_array_index (c->variants, v) : NULL;
        if (!wtc_variant_has_fs (var, fs))
          continue;
        for (guint w = 0; w < c->workloads->len; w++)
          for (guint s = 0; s < c->seeds->len; s++)
            g_ptr_array_add (cells, wtc_cell_new (c, g_ptr_array_index (c->kernels, k), fs, var,
                                                  g_ptr_array_index (c->workloads, w),
                                                  g_array_index (c->seeds, guint64, s)));
      }
  return cells;
}

bool
wtc_plan_write (GPtrArray *cells, const char *path, GError **error)
{
  g_autoptr (GString) s = g_string_new (NULL);
  for (guint i = 0; i < cells->len; i++) {
    const struct wtc_cell *cell = g_ptr_array_index (cells, i);
    g_string_append_printf (s, "%s\t%s\t%s\t%s\t%s\t%" PRIu64, cell->id, cell->kernel, cell->fs,
                            cell->variant ? cell->variant : "-", cell->workload, cell->seed);
    for (guint j = 0; j < cell->args->len; j++)
      g_string_append_printf (s, "\t%s", (const char *) g_ptr_array_index (cell->args, j));
    g_string_append_c (s, '\n');
  }
  if (strcmp (path, "-") == 0)
    return fwrite (s->str, 1, s->len, stdout) == s->len;
  return g_file_set_contents (path, s->str, s->len, error);
}

/* A cell id names its folder under cells/: one path component, nothing
 * that would reach outside the campaign folder or break a line of a report. */
static bool
wtc_id_is_folder_name (const char *id)
{
  if (!*id || strcmp (id, ".") == 0 || strcmp (id, "..") == 0)
    return false;
  for (const char *p = id; *p; p++)
    if (*p == '/' || g_ascii_iscntrl (*p))
      return false;
  return true;
}

GPtrArray *
wtc_plan_read (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  g_autoptr (GPtrArray) cells = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_cell_free);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint lineno = 0;
  for (char **l = lines; *l; l++) {
    lineno++;
    if (!**l)
      continue;
    g_auto (GStrv) f = g_strsplit (*l, "\t", -1);
    guint n = g_strv_length (f);
    guint64 seed;
    if (n < 6 || !*f[0] || !wtc_parse_u64 (f[5], &seed)) {
      g_set_error (error, WTC_ERROR, 0, "%s: line %u: not a cell (id, kernel, fs, variant, "
                   "workload, seed, arguments, separated by tabs)", path, lineno);
      return NULL;
    }
    if (!wtc_id_is_folder_name (f[0])) {
      g_autofree char *shown = g_strescape (f[0], NULL);
      g_set_error (error, WTC_ERROR, 0, "%s: line %u: cell id \"%s\" is not a folder name "
                   "(empty, . or .., or with / or a control character)", path, lineno, shown);
      return NULL;
    }
    struct wtc_cell *cell = g_new0 (struct wtc_cell, 1);
    cell->id = g_strdup (f[0]);
    cell->kernel = g_strdup (f[1]);
    cell->fs = g_strdup (f[2]);
    cell->variant = strcmp (f[3], "-") ? g_strdup (f[3]) : NULL;
    cell->workload = g_strdup (f[4]);
    cell->seed = seed;
    cell->args = g_ptr_array_new_with_free_func (g_free);
    for (guint j = 6; j < n; j++)
      g_ptr_array_add (cell->args, g_strdup (f[j]));
    g_ptr_array_add (cells, cell);
  }
  return g_steal_pointer (&cells);
}
