/* The last hash the log gives each disk sector it touched, and the sectors
 * of the image that differ from it (verify, check --no-manifest).
 * Memory: WRITE sectors take one 32-byte slot each in an open-addressing
 * table (up to twice that while it grows): no more than the log's own
 * hashes. ZERO and TRIM records are kept as ranges (sorted, split where a
 * later one overlaps), a few nodes a record whatever its length, so a
 * 4 GiB TRIM costs what a 4 KiB one does. Each sector's last write is the
 * newer of its WRITE slot and the range over it. */
#ifndef WTC_LIB_LASTWRITE_H
#define WTC_LIB_LASTWRITE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "lib/util.h"
#include "wtlog.h"

struct wtc_last {
  uint64_t sector;
  uint64_t hash;                /* as the sector reads after seq */
  uint64_t seq;
  uint32_t known;               /* 0: a partial ZERO/TRIM left it unknown */
  uint32_t type;                /* WTLOG_WRITE, WTLOG_ZERO, WTLOG_TRIM */
};

struct wtc_lastmap;
typedef struct wtc_lastmap wtc_lastmap;
struct wtc_lastmap *wtc_lastmap_new (void);
void wtc_lastmap_free (struct wtc_lastmap *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_lastmap, wtc_lastmap_free)

/* Applies one good record: WRITE sets its hashes, ZERO and TRIM the zero
 * sector's; FAILED, CHANNEL and the rest change nothing. */
void wtc_lastmap_apply (struct wtc_lastmap *m, const struct wtlog_record *rec);

/* The whole log applied; *st receives the reader's status (torn or not).
 * NULL with error when the log cannot be opened. */
struct wtc_lastmap *wtc_lastmap_from_log (const char *path,
                                          struct wtlog_header *h,
                                          struct wtlog_status *st,
                                          GArray *chanrecs, GError **error);

struct wtc_diff {
  uint64_t sector;
  uint64_t image_hash;
  uint64_t logged_hash;
  uint64_t seq;
  uint32_t type;
};

/* Compares each known touched sector with the image, in sector order.
 * Returns the sectors that differ (struct wtc_diff, in sector order), or
 * NULL with error when the image cannot be read there. *touched counts the
 * sectors the log touched, *compared those compared (the others were left
 * unknown by a partial ZERO/TRIM). */
GArray *wtc_lastmap_compare (const struct wtc_lastmap *m, struct wtc_image *img,
                             uint64_t *touched, uint64_t *compared, GError **error);

/* Whether image holds what log describes, as far as the log can say. A log
 * recorded as the store (header flag STORE) and not closed means the plugin
 * died before it applied the log, so the run's disk is as it was at the
 * start (or part way through the apply): such a log is taken only with an
 * image every logged sector of which holds its last logged content (the
 * log replayed, as `wtrack replay` makes it); else false, with an error
 * saying how to make that image. */
bool wtc_store_log_applied (const char *log, const char *image, GError **error);

#endif
