/* The checkpoint oracle of wtrack crash. After the guest fsynced every file
 * it sends MARK "checkpoint K" and a manifest with checkpoint K: from that
 * MARK on, whatever the crash, the files must hold their checkpoint-K
 * contents. Sectors the workload rewrote before the next manifest are left
 * out (a crash may leave them old or new); the others are read through
 * checkpoint K's extents from the state's image and their hashes compared. */
#ifndef WTC_CRASH_ORACLE_H
#define WTC_CRASH_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "lib/target.h"

struct wtc_oracle;

/* A stretch of sectors that do not hold their checkpoint contents:
 * contiguous in the file and on the disk. */
struct wtc_data_run {
  const char *path;             /* owned by the oracle */
  uint64_t file_sector;
  uint64_t disk_sector;
  uint64_t count;
};

struct wtc_data_verdict {
  uint32_t checkpoint;          /* 0: no checkpoint before the state */
  uint64_t checked;             /* sectors compared */
  uint64_t bad;                 /* of them, not as checkpointed */
  GArray *runs;                 /* struct wtc_data_run, by disk sector */
};

/* Reads the channel's checkpoint manifests and places their MARKs in log.
 * A run without checkpoints gives an oracle that checks nothing. Problems
 * that leave some checkpoints unusable (a broken manifest stream, a MARK
 * without its CHANNEL record) become warnings, printed by the caller.
 * chunks (lib/btrfs-chunks.h, or NULL) turns a btrfs run's FIEMAP addresses
 * into disk offsets; disk_size bounds the extents. NULL with error when channel or log cannot
 * be read at all. */
struct wtc_oracle *wtc_oracle_new (const char *log, const char *channel,
                                   const GArray *chunks, uint64_t disk_size,
                                   GError **error);
void wtc_oracle_free (struct wtc_oracle *o);
typedef struct wtc_oracle wtc_oracle;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_oracle, wtc_oracle_free)

/* "checkpoint 3 at seq 812: 4093 of 8192 sectors to check" lines, and
 * warnings (char *, owned by the oracle). */
const GPtrArray *wtc_oracle_describe (const struct wtc_oracle *o);
const GPtrArray *wtc_oracle_warnings (const struct wtc_oracle *o);
guint wtc_oracle_checkpoints (const struct wtc_oracle *o);

/* Checks img as a crash state that follows the record seq: against the
 * last checkpoint whose MARK is at or before seq (none with o NULL: the
 * verdict's checkpoint is 0). v->runs is allocated here; release with
 * wtc_data_verdict_clear. */
bool wtc_oracle_check (const struct wtc_oracle *o, struct wt_image *img,
                       uint64_t seq, struct wtc_data_verdict *v, GError **error);
void wtc_data_verdict_clear (struct wtc_data_verdict *v);

#endif
