/* The image a replay writes: a regular file (kept sparse: zeroed and trimmed
 * ranges become holes) or a block device (zeroed with BLKZEROOUT). Shared by
 * replay, export and crash. */
#ifndef WTC_LIB_TARGET_H
#define WTC_LIB_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include <glib.h>

#include "image-apply.h"
#include "image-resolve.h"
#include "wtlog.h"

/* The image is common/image-apply.h's struct wt_image: its apply code is
 * the plugin's too. */

/* Whether the log whose header is h carries its writes' bytes, which every
 * command that rebuilds a disk from it needs; false with an error naming
 * the log and what (who) needed them when it does not.  (In a log with
 * DATA, an IN_IMAGE record's bytes are elsewhere: wtc_resolve_open finds
 * them, and wtc_target_apply writes them.) */
bool wtc_log_needs_payloads (const char *log, const struct wtlog_header *h,
                             const char *who, GError **error);

/* The run's final image for log: final when given (--final-image), else
 * disk.img in the log's directory when it exists, else NULL.  g_free it. */
char *wtc_final_image (const char *log, const char *final);

/* Where the bytes of log's IN_IMAGE records are, for a command (who) that
 * rebuilds the disk onto another image than the run's own: final as for
 * wtc_final_image.  NULL with an error when the log or the final image
 * cannot be read, or when some IN_IMAGE record has bytes only the final
 * image holds and there is none (naming its seq and --final-image). */
struct wt_resolve *wtc_resolve_open (const char *log, const char *final,
                                     const char *who, GError **error);
typedef struct wt_resolve wtc_resolve;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_resolve, wt_resolve_close)

/* Whether a and b name the same file or device (the output must never be
 * the base: creating it would truncate the base). */
bool wtc_same_file (const char *a, const char *b);

/* Opens path for writing: a block device as it is (it must hold at least
 * min_size bytes), a file created or truncated to size bytes. */
struct wt_image *wtc_target_create (const char *path, uint64_t size,
                                      uint64_t min_size, GError **error);
/* Opens an existing file or device read-write without changing its size. */
struct wt_image *wtc_target_open (const char *path, GError **error);
void wtc_target_close (struct wt_image *t);
typedef struct wt_image wtc_target;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (wtc_target, wtc_target_close)

/* Copies the first len bytes of the file src_fd into t, skipping the
 * source's holes (they become holes in a file, zeroes on a device). */
bool wtc_target_copy_from (struct wt_image *t, int src_fd, const char *src_name,
                           uint64_t len, GError **error);
/* Copies base (a file or a device) into t; base must not be smaller than
 * min_size. */
bool wtc_target_copy_base (struct wt_image *t, const char *base,
                           uint64_t min_size, GError **error);

/* The size of a file, or of a block device. */
bool wtc_file_size (const char *path, uint64_t *size, GError **error);
/* The size of base, which must not be smaller than min_size (the error
 * says so). Callers check the base this way before they create or truncate
 * their output, so a refused base leaves the output as it was. */
bool wtc_base_size (const char *base, uint64_t min_size, uint64_t *size,
                    GError **error);

bool wtc_target_write (struct wt_image *t, uint64_t offset, const void *buf,
                       uint64_t len, GError **error);
/* Makes [offset, offset+len) read as zeroes, exactly that byte range. */
bool wtc_target_zero (struct wt_image *t, uint64_t offset, uint64_t len,
                      GError **error);
bool wtc_target_read (struct wt_image *t, uint64_t offset, void *buf,
                      uint64_t len, GError **error);
bool wtc_target_sync (struct wt_image *t, GError **error);

/* What a log record does to the disk, applied to t: WRITE writes its data
 * (an IN_IMAGE one its bytes resolved through t->resolve), ZERO and TRIM
 * zero their range, everything else (FLUSH, CHANNEL, OPEN, CLOSE, SAVED,
 * FAILED requests) leaves the disk alone. A WRITE without data, an
 * IN_IMAGE one without t->resolve and another APPLIED change are errors
 * naming the seq. */
bool wtc_target_apply (struct wt_image *t, const struct wtlog_record *rec,
                       GError **error);
/* Whether wtc_target_apply changes the disk for this record. */
bool wtc_record_changes_disk (const struct wtlog_record *rec);

#endif
