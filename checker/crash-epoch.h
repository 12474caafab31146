/* The writes of one epoch (between two flushes) kept in memory, and an undo
 * stack, so crash states are made by changing only what differs from the
 * state before. */
#ifndef WTC_CRASH_EPOCH_H
#define WTC_CRASH_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "replay-target.h"
#include "wtlog.h"

struct wtc_epoch_write {
  uint64_t seq;
  uint64_t offset, length;
  unsigned char *data;          /* NULL: zeroes (ZERO, TRIM) */
};

/* The old bytes of a range, to put back. */
struct wtc_undo {
  uint64_t offset, length;
  unsigned char *old;
};

/* GArray of struct wtc_epoch_write / struct wtc_undo, freeing their bytes. */
GArray *wtc_epoch_new (void);
GArray *wtc_undo_new (void);
void wtc_epoch_add (GArray *epoch, const struct wtlog_record *rec);

/* Applies w to t, first pushing what it overwrites onto undo (if not NULL). */
bool wtc_epoch_apply (struct wt_image *t, const struct wtc_epoch_write *w,
                      GArray *undo, GError **error);
/* Puts every range of undo back, newest first, and empties it. */
bool wtc_undo_all (struct wt_image *t, GArray *undo, GError **error);

#endif
