/* Campaigns: many runs over kernels x filesystems x variants x workloads x
 * seeds. plan.c reads a campaign (a key file and command-line axes),
 * cells.c expands it into cells with stable ids and writes and reads
 * plan.tsv; collect.c reads what
 * the cells left and summary.c writes summary.txt, summary.json,
 * results.xml and summary.html from it.
 * scripts/wtrack-campaign runs the cells. */
#ifndef WTC_CAMPAIGN_H
#define WTC_CAMPAIGN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

/* One option given to wtrack-run: --key, then each value (none for a flag;
 * a repeatable option with several values is given once per value). */
struct wtc_copt {
  char *key;
  char *fs;          /* KEY.FS: only for that fs's cells; NULL: every cell */
  GPtrArray *values; /* char *, may be empty */
  bool repeatable;
};

struct wtc_variant {
  char *name;
  GPtrArray *opts; /* struct wtc_copt * */
  GPtrArray *fs;   /* char *: the variant's own fs (its `fs` key); NULL: all */
};

typedef struct wtc_campaign wtc_campaign;
struct wtc_campaign {
  GPtrArray *kernels, *fs, *workloads; /* char * */
  GArray *seeds;                       /* guint64 */
  GPtrArray *opts;                     /* struct wtc_copt *, every cell */
  GPtrArray *variants;                 /* struct wtc_variant *, maybe empty */
};

/* Axes and options from the command line; each replaces the file's. */
struct wtc_campaign_axes {
  char *kernels, *fs, *workloads, *seeds;
  char **set; /* KEY=VALUE, for [campaign] */
};

struct wtc_cell {
  char *id, *kernel, *fs, *variant, *workload; /* variant NULL without variants */
  guint64 seed;
  GPtrArray *args; /* the wtrack-run arguments (without --out, --kernel) */
};

struct wtc_campaign *wtc_campaign_load (const char *path,
                                        const struct wtc_campaign_axes *axes,
                                        GError **error);
void wtc_campaign_free (struct wtc_campaign *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_campaign, wtc_campaign_free)

/* The cells in axis order: kernels, fs, variants, workloads, seeds. */
GPtrArray *wtc_campaign_cells (const struct wtc_campaign *c);
void wtc_cell_free (struct wtc_cell *cell);

/* plan.c's rules, which the cells (cells.c) follow too. */
/* A debian: kernel spec without an architecture is this one's; its cells
 * get no --arch. */
#define WTC_DEFAULT_ARCH "amd64"
/* debian:RELEASE[/ARCH[-SUFFIX]]: the release, the architecture (amd64
 * when none is given) and the flavour's suffix (NULL: the architecture's
 * own); false for a spec of another kind. */
bool wtc_debian_spec (const char *spec, char **release, char **arch, char **suffix);
/* A variant with an fs key of its own runs on those fs only. */
bool wtc_variant_has_fs (const struct wtc_variant *v, const char *fs);
/* A decimal number, the whole string. */
bool wtc_parse_u64 (const char *s, guint64 *out);

/* The architecture of a kernel spec: ARCH of debian:R/ARCH[-FLAVOUR],
 * else amd64 (debian:R, build: and bzImage paths). */
char *wtc_kernel_arch (const char *spec);

/* The plan file: one cell a line, tab-separated: id, kernel, fs, variant
 * ("-" for none), workload, seed, then the wtrack-run arguments. */
bool wtc_plan_write (GPtrArray *cells, const char *path, GError **error);
GPtrArray *wtc_plan_read (const char *path, GError **error);

/* collect: writes DIR's summary.txt, summary.json, results.xml and
 * summary.html, prints summary.txt to print (NULL: not) and sets status to
 * the campaign's exit status (0 clean, 1 damage, 2 a cell in error). False
 * when DIR's plan cannot be read or a summary cannot be written. */
bool wtc_campaign_collect (const char *dir, FILE *print, int *status, GError **error);

/* todo: prints "ID\tWHY" for each cell of DIR's plan that has no result
 * made as the plan now asks (none, lost, an unreadable cell.ini, other
 * arguments or another kernel): what --resume runs. */
bool wtc_campaign_todo (const char *dir, FILE *out, GError **error);

/* cell-facts: from a cell's report.json, what its cell.ini keeps:
 * verdict=, bad_sectors=, page_size= and block_size= (when known), then
 * "[classes]" with each class that occurred and "[timings]" with each
 * phase's seconds, one KEY=VALUE a line. False when REPORT cannot be read
 * or is not a JSON object. */
bool wtc_campaign_cell_facts (const char *report, FILE *out, GError **error);

#endif
