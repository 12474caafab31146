/* wtrack crash: the data its stages share. cmd-crash.c parses the options
 * and drives them; crash/walk.c makes the states from the log and has each
 * checked (crash/jobs.c runs the check command, crash/oracle.c compares the
 * checkpointed files, crash/epoch.c keeps an epoch's writes and what they
 * overwrote); crash/report.c prints the table, the summary and the JSON.
 *
 * The states: the initial one is base.img; prefix states: the disk after
 * every FLUSH and every FUA write (what was durable then). With --reorder N:
 * for every epoch between two flushes, N states made of the epoch's
 * starting disk plus a subset of the epoch's writes (CrashMonkey's idea:
 * what the device had not persisted yet may have reached the media in any
 * order). */
#ifndef WTC_CRASH_CRASH_H
#define WTC_CRASH_CRASH_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "crash/epoch.h"
#include "crash/jobs.h"
#include "crash/oracle.h"
#include "lib/target.h"
#include "wtlog.h"

struct wtc_crash_opts {
  char *check;
  char *log;
  char *base;
  char *final_image;
  char *json;
  char *channel;
  char *chunks;
  gint jobs;
  gint reorder;
  gint64 seed;
  gint max_states;
  char **args;
};

struct wtc_crash_state {
  uint64_t number;              /* 0: the initial state */
  const char *kind;             /* "initial", "prefix" or "reorder" */
  uint64_t seq;                 /* the record the state follows */
  uint64_t t_ns;
  char *writes;                 /* reorder: the seqs of the epoch's writes in it */
  guint subset_writes;          /* reorder: how many, of */
  guint epoch_writes;           /* the epoch's writes */
  int status;                   /* the check's exit status (-1: did not run) */
  bool finished;                /* the check ended */
  struct wtc_data_verdict data;
};

struct wtc_crash {
  const struct wtc_crash_opts *o;
  char *dir;                    /* RUN_DIR/crash */
  struct wt_image *scratch;
  struct wt_resolve *resolve;   /* where IN_IMAGE records' bytes are */
  char *channel;                /* the channel the oracle reads */
  struct wtc_oracle *oracle;    /* NULL: no channel */
  struct wtc_jobs *jobs;
  /* Only --reorder keeps the epoch's writes and what they overwrote; the
   * prefix states need neither. */
  GArray *epoch;                /* struct wtc_epoch_write since the last flush */
  struct wtc_undo *epoch_undo;  /* what the epoch's writes overwrote */
  struct wtc_undo *subset_undo; /* what a reordered state's subset overwrote */
  int log_fd;                   /* the log, to read an epoch's data back */
  guint epoch_writes;           /* writes since the last flush */
  GArray *states;               /* struct wtc_crash_state */
  GRand *rand;
  guint printed;                /* states whose row is out */
  guint subset_writes;          /* of the reordered state being made */
  uint64_t failed;              /* states failing the check or the data */
  uint64_t failed_check;
  uint64_t failed_data;
  bool full;                    /* --max-states reached */
  bool torn;                    /* the log is torn: states end before the tear */
  char *torn_error;             /* where and why */
  GPtrArray *warnings;          /* char *: what went wrong without harm */
};

/* crash/walk.c */
/* RUN_DIR/crash made and emptied of old state logs, the oracle read (when
 * the run has a channel), the scratch image made from base, the jobs
 * started. */
bool wtc_crash_setup (struct wtc_crash *c, const char *run_dir, const char *log,
                      const struct wtlog_header *h, const char *base, GError **error);
/* Every state the log r gives, each checked; the rows printed as the
 * checks end. A torn log is not an error here: c->torn says so. */
bool wtc_crash_walk (struct wtc_crash *c, struct wtlog_reader *r, GError **error);
void wtc_crash_free (struct wtc_crash *c);

/* crash/report.c */
/* What the oracle will check ("#" comment lines before the table). */
void wtc_crash_print_oracle (const struct wtc_crash *c);
void wtc_crash_print_header (void);
void wtc_crash_print_state (const struct wtc_crash_state *s);
void wtc_crash_summary (const struct wtc_crash *c);
bool wtc_crash_write_json (const struct wtc_crash *c, const char *path, GError **error);

#endif
