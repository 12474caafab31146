/* Replaying a log onto an image up to a point: the stop conditions of
 * `wtrack replay --to-*`, the apply loop with its progress bar, and the
 * points a replay can stop at (--list-points). */
#ifndef WTC_REPLAY_RUN_H
#define WTC_REPLAY_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <glib.h>

#include "lib/target.h"
#include "wtlog.h"

enum wtc_stop_kind {
  WTC_STOP_END,                 /* the whole log */
  WTC_STOP_SEQ,                 /* after the record with this seq */
  WTC_STOP_FLUSH,               /* after the value-th successful FLUSH */
  WTC_STOP_TIME,                /* before the first record that ended later */
};

struct wtc_stop {
  enum wtc_stop_kind kind;
  uint64_t value;               /* seq, flush count, or log ns */
};

struct wtc_replay_stats {
  uint64_t records;             /* records read and handled */
  uint64_t writes, zeroes;      /* records that changed the disk */
  uint64_t bytes;               /* bytes of logged data written */
  uint64_t flushes;
  uint64_t last_seq;            /* the last record handled */
  bool reached;                 /* the stop point was reached */
};

/* Applies the reader's records to t until the stop point, the end of the
 * log, or a torn record. Returns false on an error applying a record; a
 * torn log is not an error here (the reader's status says so). */
bool wtc_replay_apply (struct wt_image *t, struct wtlog_reader *r,
                       const struct wtc_stop *stop, bool progress,
                       struct wtc_replay_stats *st, GError **error);

/* "12", "1.5" (seconds), "1500000000ns", "1500ms", "1.5s", "2us" into
 * log nanoseconds. */
bool wtc_parse_log_time (const char *text, uint64_t *ns, GError **error);

/* The seq of the CHANNEL record that carried the first MARK labelled
 * label in the channel file. */
bool wtc_mark_seq (const char *log, const char *channel, const char *label,
                   uint64_t *seq, GPtrArray *warnings, GError **error);

/* Prints every FLUSH, FUA request and MARK (when channel is not NULL) with
 * its seq, time, and the option that stops a replay there. False with error
 * when the log or the channel cannot be read, or the log is torn (the
 * points before the tear are printed); a channel that breaks part way adds
 * a warning to warnings (char *). */
bool wtc_list_points (const char *log, const char *channel, FILE *out,
                      GPtrArray *warnings, GError **error);

#endif
