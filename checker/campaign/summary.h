/* A campaign's results as collect.c reads and tallies them, and the
 * summaries summary.c writes from them: summary.txt, summary.json
 * (doc/campaign-json.md), results.xml (the JUnit shape xfstests writes)
 * and summary.html. */
#ifndef WTC_CAMPAIGN_SUMMARY_H
#define WTC_CAMPAIGN_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include <glib.h>

#include "campaign/campaign.h"

enum wtc_cell_status { WTC_CELL_NOT_RUN, WTC_CELL_CLEAN, WTC_CELL_DAMAGED, WTC_CELL_ERROR };

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
  char *minimal;        /* its minimized list's summary.txt (wtrack-minimize),
                           relative to the campaign folder; NULL: none */
  guint64 page_size;    /* the guest's (report.json), 0: unknown */
  guint64 block_size;   /* the file system's (report.json), 0: unknown */
};

/* One column of the grid: fs, variant and workload. */
struct wtc_column {
  char *fs, *variant, *workload, *label;
};

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

static inline struct wtc_tally *
wtc_grid_at (struct wtc_collect *c, guint row, guint col)
{
  return &c->grid[row * c->columns->len + col];
}

/* The index of the cell's column (fs, variant, workload) and of a kernel's
 * row, each added when new. */
guint wtc_column_of (GPtrArray *columns, const struct wtc_cell *cell);
guint wtc_row_of (GPtrArray *rows, const char *kernel);
void wtc_column_free (struct wtc_column *col);

/* The strings of a GPtrArray joined by sep. */
char *wtc_join (GPtrArray *strings, const char *sep);

/* summary.txt, summary.json, results.xml and summary.html in c->dir, each
 * written whole to NAME.tmp and renamed. */
bool wtc_summary_write (struct wtc_collect *c, GError **error);

/* summary.txt's text. */
void wtc_summary_text (struct wtc_collect *c, FILE *out);

#endif
