/* The writes of one epoch (between two flushes), and an undo stack, so
 * crash states are made by changing only what differs from the state
 * before. Neither holds the bytes in memory: an epoch's write names where
 * its data lies in the log, and an undo stack keeps the old bytes in an
 * unlinked file, so memory grows with the number of writes, not with their
 * size (a 2 GiB ZERO costs a few KiB). */
#ifndef WTC_CRASH_EPOCH_H
#define WTC_CRASH_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "lib/target.h"
#include "wtlog.h"

struct wtc_epoch_write {
  uint64_t seq;
  uint64_t offset, length;
  uint64_t data_at;             /* byte of its data in the log; 0: zeroes */
  bool in_image;                /* IN_IMAGE: its bytes come from t->resolve */
};

/* GArray of struct wtc_epoch_write. */
GArray *wtc_epoch_new (void);
/* rec must change the disk (wtc_record_changes_disk) and, if a WRITE,
 * carry its data or be IN_IMAGE (applied through the image's resolver). */
void wtc_epoch_add (GArray *epoch, const struct wtlog_record *rec);

struct wtc_undo;
/* An undo stack whose bytes go to an unlinked file made in dir. What goes
 * wrong without harm (the file's space not given back) is added to
 * warnings (char *; NULL: dropped), which must outlive the stack. */
struct wtc_undo *wtc_undo_new (const char *dir, GPtrArray *warnings, GError **error);
void wtc_undo_free (struct wtc_undo *u);
typedef struct wtc_undo wtc_undo;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_undo, wtc_undo_free)
/* How many writes it undoes. */
guint wtc_undo_writes (const struct wtc_undo *u);

/* Pushes the old bytes of [offset, offset+length) of t. */
bool wtc_undo_save (struct wtc_undo *u, struct wt_image *t, uint64_t offset,
                    uint64_t length, GError **error);
/* Applies w to t, its data read from log_fd (the log's file) in bounded
 * chunks, first pushing what it overwrites onto undo (if not NULL). */
bool wtc_epoch_apply (struct wt_image *t, int log_fd, const struct wtc_epoch_write *w,
                      struct wtc_undo *undo, GError **error);
/* Puts every range of undo back, newest first, and empties it. */
bool wtc_undo_all (struct wt_image *t, struct wtc_undo *undo, GError **error);
/* Forgets what undo holds (the epoch is over). */
void wtc_undo_clear (struct wtc_undo *u);

#endif
