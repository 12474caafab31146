/* A campaign file and its cells. doc/design-campaigns.md has the rules:
 * which keys are axes, which options repeat, how ids are made. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/campaign.h"
#include "lib/util.h"

#define WTC_CAMPAIGN_GROUP "campaign"
/* More cells than this is a typo in a seed range, not a campaign. */
#define WTC_MAX_CELLS 100000

/* Options wtrack-run accepts several times: their values add up (a variant
 * adds to the campaign's) instead of replacing each other. */
static const char *const wtc_repeatable[] = { "plugin-opt", "sysctl", NULL };
/* Set by the campaign itself for every cell. */
static const char *const wtc_reserved[] = { "out", "kernel", "modules", "fs", "workload",
                                            "seed", "arch", "help", NULL };
/* The fs axis's names; also the FS of a KEY.FS option. */
static const char *const wtc_fs_names[] = { "ext2", "ext3", "ext4", "xfs", "btrfs", NULL };
static const char *const wtc_releases[] = { "bullseye", "bookworm", "bookworm-backports",
                                            "trixie", NULL };
/* The architectures of share/arches; a debian: spec without one is the
 * first, amd64. */
static const char *const wtc_arches[] = { WTC_DEFAULT_ARCH, "ppc64el", "arm64", "s390x", NULL };

static bool
wtc_in_list (const char *const *list, const char *s)
{
  for (; *list; list++)
    if (strcmp (*list, s) == 0)
      return true;
  return false;
}

static void
wtc_copt_free (struct wtc_copt *o)
{
  if (!o)
    return;
  g_free (o->key);
  g_free (o->fs);
  g_ptr_array_unref (o->values);
  g_free (o);
}

static void
wtc_variant_free (struct wtc_variant *v)
{
  if (!v)
    return;
  g_free (v->name);
  g_ptr_array_unref (v->opts);
  g_clear_pointer (&v->fs, g_ptr_array_unref);
  g_free (v);
}

void
wtc_campaign_free (struct wtc_campaign *c)
{
  if (!c)
    return;
  g_clear_pointer (&c->kernels, g_ptr_array_unref);
  g_clear_pointer (&c->fs, g_ptr_array_unref);
  g_clear_pointer (&c->workloads, g_ptr_array_unref);
  g_clear_pointer (&c->seeds, g_array_unref);
  g_clear_pointer (&c->opts, g_ptr_array_unref);
  g_clear_pointer (&c->variants, g_ptr_array_unref);
  g_free (c);
}

/* Words separated by blanks, duplicates dropped (a cell appears once). */
static GPtrArray *
wtc_split_words (const char *s)
{
  GPtrArray *words = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) parts = g_strsplit_set (s, " \t\n", -1);
  for (char **p = parts; *p; p++) {
    if (!**p)
      continue;
    bool dup = false;
    for (guint i = 0; i < words->len && !dup; i++)
      dup = strcmp (g_ptr_array_index (words, i), *p) == 0;
    if (!dup)
      g_ptr_array_add (words, g_strdup (*p));
  }
  return words;
}

bool
wtc_parse_u64 (const char *s, guint64 *out)
{
  if (!*s || !g_ascii_isdigit (*s))
    return false;
  char *end;
  errno = 0;
  guint64 v = g_ascii_strtoull (s, &end, 10);
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

/* "1-50 7": every seed once, in order of first mention. */
static GArray *
wtc_parse_seeds (const char *where, const char *s, GError **error)
{
  g_autoptr (GArray) seeds = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GPtrArray) words = wtc_split_words (s);
  for (guint i = 0; i < words->len; i++) {
    const char *w = g_ptr_array_index (words, i);
    g_auto (GStrv) ends = g_strsplit (w, "-", 2);
    guint64 first, last;
    if (!wtc_parse_u64 (ends[0], &first)
        || (ends[1] ? !wtc_parse_u64 (ends[1], &last) : (last = first, false)) || last < first) {
      g_set_error (error, WTC_ERROR, 0, "%s: bad seed or range: %s (N or FIRST-LAST)", where, w);
      return NULL;
    }
    if (last - first >= WTC_MAX_CELLS) {
      g_set_error (error, WTC_ERROR, 0, "%s: %s: more than %d seeds (a campaign's cap)", where, w,
                   WTC_MAX_CELLS);
      return NULL;
    }
    for (guint64 seed = first;; seed++) {
      if (!g_hash_table_contains (seen, &seed)) {
        g_hash_table_add (seen, g_memdup2 (&seed, sizeof seed));
        g_array_append_val (seeds, seed);
      }
      if (seeds->len > WTC_MAX_CELLS) {
        g_set_error (error, WTC_ERROR, 0, "%s: more than %d seeds", where, WTC_MAX_CELLS);
        return NULL;
      }
      if (seed == last)
        break;
    }
  }
  return g_steal_pointer (&seeds);
}

static bool
wtc_valid_key (const char *key)
{
  if (!g_ascii_islower (*key))
    return false;
  for (const char *p = key; *p; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '-')
      return false;
  return true;
}

static bool
wtc_same_fs (const char *a, const char *b)
{
  return (!a && !b) || (a && b && strcmp (a, b) == 0);
}

/* KEY.FS: the option KEY for the cells of FS only (mkfs-opts.xfs = -b
 * size=1024). Sets *name to KEY and *fs to FS (NULL for a plain key). */
static bool
wtc_split_fs_key (const char *where, const char *full, char **name, char **fs, GError **error)
{
  const char *dot = strchr (full, '.');
  *name = dot ? g_strndup (full, dot - full) : g_strdup (full);
  *fs = dot ? g_strdup (dot + 1) : NULL;
  if (*fs && !wtc_in_list (wtc_fs_names, *fs)) {
    g_set_error (error, WTC_ERROR, 0,
                 "%s: %s: unknown fs after the '.' (KEY.FS, FS one of ext2, ext3, ext4, xfs, btrfs)",
                 where, full);
    return false;
  }
  return true;
}

/* One option of [campaign] or a variant: "true"/"yes" is a flag,
 * "false"/"no" leaves it out (returns NULL without error). */
static struct wtc_copt *
wtc_copt_new (const char *where, const char *full_key, const char *value, GError **error)
{
  g_autofree char *key = NULL, *fs = NULL;
  if (!wtc_split_fs_key (where, full_key, &key, &fs, error))
    return NULL;
  if (!wtc_valid_key (key)) {
    g_set_error (error, WTC_ERROR, 0,
                 "%s: bad option name: %s (a wtrack-run or workload long option without its dashes)",
                 where, key);
    return NULL;
  }
  if (wtc_in_list (wtc_reserved, key)) {
    g_set_error (error, WTC_ERROR, 0, "%s: %s is set by the campaign for each cell", where, key);
    return NULL;
  }
  g_autofree char *v = g_strstrip (g_strdup (value));
  if (!*v) {
    g_set_error (error, WTC_ERROR, 0, "%s: %s has no value (true for a flag)", where, key);
    return NULL;
  }
  if (strpbrk (v, "\t\n")) {
    g_set_error (error, WTC_ERROR, 0, "%s: %s: tabs and newlines are not allowed", where, key);
    return NULL;
  }
  if (strcmp (v, "false") == 0 || strcmp (v, "no") == 0)
    return NULL;
  struct wtc_copt *o = g_new0 (struct wtc_copt, 1);
  o->key = g_strdup (key);
  o->fs = g_steal_pointer (&fs);
  o->repeatable = wtc_in_list (wtc_repeatable, key);
  if (strcmp (v, "true") == 0 || strcmp (v, "yes") == 0)
    o->values = g_ptr_array_new_with_free_func (g_free);
  else if (o->repeatable)
    o->values = wtc_split_words (v);
  else {
    o->values = g_ptr_array_new_with_free_func (g_free);
    g_ptr_array_add (o->values, g_steal_pointer (&v));
  }
  return o;
}

/* Adds KEY[.FS]=VALUE to opts, replacing an option of that name (and fs). */
static bool
wtc_opts_set (GPtrArray *opts, const char *where, const char *full_key, const char *value,
              GError **error)
{
  g_autoptr (GError) err = NULL;
  struct wtc_copt *o = wtc_copt_new (where, full_key, value, &err);
  if (err) {
    g_propagate_error (error, g_steal_pointer (&err));
    return false;
  }
  g_autofree char *key = NULL, *fs = NULL;
  if (!wtc_split_fs_key (where, full_key, &key, &fs, error))
    return false;
  for (guint i = 0; i < opts->len; i++) {
    const struct wtc_copt *old = g_ptr_array_index (opts, i);
    if (strcmp (old->key, key) == 0 && wtc_same_fs (old->fs, fs)) {
      g_ptr_array_remove_index (opts, i);
      break;
    }
  }
  if (o)
    g_ptr_array_add (opts, o);
  return true;
}

/* debian:RELEASE[/ARCH[-SUFFIX]]: the release, the architecture (amd64
 * when none is given) and the flavour's suffix (NULL: the architecture's
 * own flavour; "64k" names linux-image-powerpc64le-64k). False for a spec
 * of another kind. */
bool
wtc_debian_spec (const char *spec, char **release, char **arch, char **suffix)
{
  if (!g_str_has_prefix (spec, "debian:"))
    return false;
  const char *rel = spec + 7, *slash = strchr (rel, '/');
  *release = slash ? g_strndup (rel, slash - rel) : g_strdup (rel);
  *suffix = NULL;
  if (!slash) {
    *arch = g_strdup (wtc_arches[0]);
    return true;
  }
  const char *dash = strchr (slash + 1, '-');
  *arch = dash ? g_strndup (slash + 1, dash - slash - 1) : g_strdup (slash + 1);
  if (dash)
    *suffix = g_strdup (dash + 1);
  return true;
}

char *
wtc_kernel_arch (const char *spec)
{
  g_autofree char *release = NULL, *suffix = NULL;
  char *arch = NULL;
  if (wtc_debian_spec (spec, &release, &arch, &suffix))
    return arch;
  return g_strdup (wtc_arches[0]);  /* build: and bzImage paths: the host's */
}

static bool
wtc_valid_suffix (const char *s)
{
  if (!*s)
    return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '-')
      return false;
  return true;
}

static bool
wtc_check_kernel (const char *where, const char *spec, GError **error)
{
  g_autofree char *release = NULL, *arch = NULL, *suffix = NULL;
  if (wtc_debian_spec (spec, &release, &arch, &suffix)) {
    if (!wtc_in_list (wtc_releases, release)) {
      g_set_error (error, WTC_ERROR, 0,
                   "%s: unknown Debian release in %s (bullseye, bookworm, bookworm-backports, trixie)",
                   where, spec);
      return false;
    }
    if (!wtc_in_list (wtc_arches, arch)) {
      g_set_error (error, WTC_ERROR, 0,
                   "%s: unknown architecture in %s (debian:RELEASE/ARCH[-FLAVOUR], ARCH one of "
                   "amd64, ppc64el, arm64, s390x)", where, spec);
      return false;
    }
    if (suffix && !wtc_valid_suffix (suffix)) {
      g_set_error (error, WTC_ERROR, 0, "%s: bad flavour in %s (lower-case letters, digits, '-')",
                   where, spec);
      return false;
    }
  } else if (g_str_has_prefix (spec, "build:")) {
    if (!spec[6] || strstr (spec, "++") || g_str_has_suffix (spec, "+")) {
      g_set_error (error, WTC_ERROR, 0, "%s: bad kernel spec %s (build:PATCH[+PATCH])", where, spec);
      return false;
    }
  } else if (!strchr (spec, '/')) {
    g_set_error (error, WTC_ERROR, 0,
                 "%s: bad kernel spec %s (debian:RELEASE, build:PATCH[+PATCH] or a path to a bzImage)",
                 where, spec);
    return false;
  }
  return true;
}

static bool
wtc_check_names (const char *where, GPtrArray *names, const char *const *allowed,
                 GError **error)
{
  for (guint i = 0; i < names->len; i++)
    if (!wtc_in_list (allowed, g_ptr_array_index (names, i))) {
      g_set_error (error, WTC_ERROR, 0, "%s: unknown value: %s", where,
                   (const char *) g_ptr_array_index (names, i));
      return false;
    }
  return true;
}

/* A variant's name becomes part of cell ids and folder names. */
static bool
wtc_valid_variant (const char *name)
{
  if (!*name)
    return false;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_' && *p != '+')
      return false;
  return true;
}

/* A group's options into opts. The axes are [campaign]'s (variant NULL);
 * a variant may narrow the fs axis with a `fs` key of its own. */
static bool
wtc_load_options (GKeyFile *kf, const char *path, const char *group, GPtrArray *opts,
                  struct wtc_variant *variant, GError **error)
{
  g_auto (GStrv) keys = g_key_file_get_keys (kf, group, NULL, error);
  if (!keys)
    return false;
  g_autofree char *where = g_strdup_printf ("%s: [%s]", path, group);
  for (char **k = keys; *k; k++) {
    bool axis = strcmp (*k, "kernels") == 0 || strcmp (*k, "fs") == 0
                || strcmp (*k, "workloads") == 0 || strcmp (*k, "seeds") == 0;
    if (axis && !variant)
      continue;
    if (strcmp (*k, "fs") == 0) {
      g_autofree char *value = g_key_file_get_value (kf, group, *k, error);
      g_autofree char *w_fs = g_strdup_printf ("%s: fs", where);
      if (!value)
        return false;
      g_clear_pointer (&variant->fs, g_ptr_array_unref);
      variant->fs = wtc_split_words (value);
      if (!wtc_check_names (w_fs, variant->fs, wtc_fs_names, error))
        return false;
      continue;
    }
    if (axis) {
      g_set_error (error, WTC_ERROR, 0, "%s: %s is an axis: only [campaign] may set it", where, *k);
      return false;
    }
    g_autofree char *value = g_key_file_get_value (kf, group, *k, error);
    if (!value || !wtc_opts_set (opts, where, *k, value, error))
      return false;
  }
  return true;
}

static char *
wtc_axis_value (GKeyFile *kf, const char *cli, const char *key, const char *fallback)
{
  if (cli)
    return g_strdup (cli);
  if (kf && g_key_file_has_key (kf, WTC_CAMPAIGN_GROUP, key, NULL))
    return g_key_file_get_value (kf, WTC_CAMPAIGN_GROUP, key, NULL);
  return g_strdup (fallback);
}

static bool
wtc_load_file (struct wtc_campaign *c, GKeyFile *kf, const char *path, GError **error)
{
  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error)) {
    g_prefix_error (error, "%s: ", path);
    return false;
  }
  if (!g_key_file_has_group (kf, WTC_CAMPAIGN_GROUP)) {
    g_set_error (error, WTC_ERROR, 0, "%s: no [campaign] group", path);
    return false;
  }
  if (!wtc_load_options (kf, path, WTC_CAMPAIGN_GROUP, c->opts, NULL, error))
    return false;
  g_auto (GStrv) groups = g_key_file_get_groups (kf, NULL);
  for (char **g = groups; *g; g++) {
    if (strcmp (*g, WTC_CAMPAIGN_GROUP) == 0)
      continue;
    if (!wtc_valid_variant (*g)) {
      g_set_error (error, WTC_ERROR, 0,
                   "%s: [%s]: a variant's name may hold letters, digits, '-', '_' and '+'", path, *g);
      return false;
    }
    struct wtc_variant *v = g_new0 (struct wtc_variant, 1);
    v->name = g_strdup (*g);
    v->opts = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_copt_free);
    g_ptr_array_add (c->variants, v);
    if (!wtc_load_options (kf, path, *g, v->opts, v, error))
      return false;
  }
  return true;
}

/* A variant with an fs key of its own runs on those fs only. */
bool
wtc_variant_has_fs (const struct wtc_variant *v, const char *fs)
{
  if (!v || !v->fs)
    return true;
  for (guint i = 0; i < v->fs->len; i++)
    if (strcmp (g_ptr_array_index (v->fs, i), fs) == 0)
      return true;
  return false;
}

struct wtc_campaign *
wtc_campaign_load (const char *path, const struct wtc_campaign_axes *axes, GError **error)
{
  static const char *const workload_names[] = { "linus2006", "torrent", "pwrite", "ops", NULL };
  g_autoptr (wtc_campaign) c = g_new0 (struct wtc_campaign, 1);
  c->opts = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_copt_free);
  c->variants = g_ptr_array_new_with_free_func ((GDestroyNotify) wtc_variant_free);
  g_autoptr (GKeyFile) kf = path ? g_key_file_new () : NULL;
  if (path && !wtc_load_file (c, kf, path, error))
    return NULL;
  for (char **s = axes->set; s && *s; s++) {
    g_auto (GStrv) kv = g_strsplit (*s, "=", 2);
    if (!kv[0] || !kv[1]) {
      g_set_error (error, WTC_ERROR, 0, "--set: expected KEY=VALUE: %s", *s);
      return NULL;
    }
    if (!wtc_opts_set (c->opts, "--set", g_strstrip (kv[0]), kv[1], error))
      return NULL;
  }
  const char *where = path ? path : "the command line";
  g_autofree char *kernels = wtc_axis_value (kf, axes->kernels, "kernels", "debian:bookworm");
  g_autofree char *fs = wtc_axis_value (kf, axes->fs, "fs", "ext4");
  g_autofree char *workloads = wtc_axis_value (kf, axes->workloads, "workloads", "linus2006");
  g_autofree char *seeds = wtc_axis_value (kf, axes->seeds, "seeds", "1");
  c->kernels = wtc_split_words (kernels);
  c->fs = wtc_split_words (fs);
  c->workloads = wtc_split_words (workloads);
  g_autofree char *w_fs = g_strdup_printf ("%s: fs", where);
  g_autofree char *w_wl = g_strdup_printf ("%s: workloads", where);
  g_autofree char *w_k = g_strdup_printf ("%s: kernels", where);
  g_autofree char *w_s = g_strdup_printf ("%s: seeds", where);
  if (!c->kernels->len || !c->fs->len || !c->workloads->len) {
    g_set_error (error, WTC_ERROR, 0, "%s: kernels, fs and workloads need a value each", where);
    return NULL;
  }
  for (guint i = 0; i < c->kernels->len; i++) {
    char **spec = (char **) &g_ptr_array_index (c->kernels, i);
    if (!wtc_check_kernel (w_k, *spec, error))
      return NULL;
    /* debian:R/amd64 is debian:R: one kernel, one id */
    g_autofree char *plain = g_strdup_printf ("/%s", wtc_arches[0]);
    if (g_str_has_prefix (*spec, "debian:") && g_str_has_suffix (*spec, plain))
      (*spec)[strlen (*spec) - strlen (plain)] = '\0';
  }
  for (guint i = 0; i < c->kernels->len; i++)
    for (guint j = i + 1; j < c->kernels->len; j++)
      if (strcmp (g_ptr_array_index (c->kernels, i), g_ptr_array_index (c->kernels, j)) == 0)
        g_ptr_array_remove_index (c->kernels, j--);
  if (!wtc_check_names (w_fs, c->fs, wtc_fs_names, error)
      || !wtc_check_names (w_wl, c->workloads, workload_names, error))
    return NULL;
  c->seeds = wtc_parse_seeds (w_s, seeds, error);
  if (!c->seeds)
    return NULL;
  if (!c->seeds->len) {
    g_set_error (error, WTC_ERROR, 0, "%s: no seed", w_s);
    return NULL;
  }
  guint64 ncells = (guint64) c->kernels->len * c->fs->len * MAX (c->variants->len, 1)
                   * c->workloads->len * c->seeds->len;
  bool any_variant_fs = !c->variants->len;
  for (guint v = 0; v < c->variants->len && !any_variant_fs; v++)
    for (guint f = 0; f < c->fs->len && !any_variant_fs; f++)
      any_variant_fs = wtc_variant_has_fs (g_ptr_array_index (c->variants, v),
                                           g_ptr_array_index (c->fs, f));
  if (!any_variant_fs) {
    g_set_error (error, WTC_ERROR, 0, "%s: no cell: no variant's fs is one of the campaign's",
                 where);
    return NULL;
  }
  if (ncells > WTC_MAX_CELLS) {
    g_set_error (error, WTC_ERROR, 0, "%s: %" PRIu64 " cells, more than %d", where, ncells,
                 WTC_MAX_CELLS);
    return NULL;
  }
  return g_steal_pointer (&c);
}
