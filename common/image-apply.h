/* Applying a write log's records to an image: what `wtrack replay` does, and
 * what the plugin does at unload when the log was the store (data=on).  libc
 * only, so the plugin and the host tools share one apply loop. */
#ifndef WT_IMAGE_APPLY_H
#define WT_IMAGE_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wtlog.h"

struct wt_resolve;

/* The image a log is applied to: a regular file (kept sparse: zeroed and
 * trimmed ranges become holes) or a block device (zeroed with BLKZEROOUT). */
struct wt_image {
  int fd;
  char *path;                   /* for messages */
  bool blockdev;
  uint64_t size;
  /* When set, told every range written or zeroed (wtrack crash keeps its
   * copies of the image up to date with it). */
  void (*changed) (void *data, uint64_t offset, uint64_t length);
  void *changed_data;
  /* When set, IN_IMAGE records are applied from the bytes it resolves
   * (image-resolve.h): the image is not the run's own.  When NULL they are
   * skipped, as every APPLIED record is. */
  const struct wt_resolve *resolve;
};

/* Each returns 0, or -1 with a message in err naming the image and byte. */
int wt_image_write (struct wt_image *t, uint64_t offset, const void *buf,
                    uint64_t len, char *err, size_t errlen);
/* Makes [offset, offset+len) read as zeroes, exactly that byte range. */
int wt_image_zero (struct wt_image *t, uint64_t offset, uint64_t len,
                   char *err, size_t errlen);

/* Whether wt_image_apply changes the disk for this record. */
bool wt_record_changes_disk (const struct wtlog_record *rec);
/* What a log record does to the disk: WRITE writes its data, ZERO and TRIM
 * zero their range, everything else (FLUSH, CHANNEL, OPEN, CLOSE, SAVED,
 * FAILED requests, and records flagged APPLIED: the plugin's queue wrote
 * them onto the run's image already) leaves the disk alone, except that an
 * IN_IMAGE record is written from its resolved bytes when t->resolve is
 * set.  A WRITE without data, or a range outside the image, is an error
 * naming the record's seq; so are resolved bytes that do not match the
 * record's hashes. */
int wt_image_apply (struct wt_image *t, const struct wtlog_record *rec,
                    char *err, size_t errlen);

/* Writes the bytes of the IN_IMAGE record seq ([offset, offset+length) of
 * the disk) from t->resolve, a bounded chunk at a time; hashes (the
 * record's, or NULL) check them.  0, or -1 with err set. */
int wt_image_write_in_image (struct wt_image *t, uint64_t seq, uint64_t offset,
                             uint64_t length, const uint64_t *hashes,
                             char *err, size_t errlen);

/* Where the apply loop stops: before a record (stop_before true: that record
 * is not applied) or after one.  Either may be NULL. */
struct wt_apply_hooks {
  bool (*stop_before) (void *ctx, const struct wtlog_record *rec);
  bool (*stop_after) (void *ctx, const struct wtlog_record *rec);
  void *ctx;
};

/* Applies r's records in log order to t until a hook stops it, the end of
 * the log, or a torn record (wtlog_reader_status says which).  1 when a hook
 * stopped it, 0 at the log's end, -1 with err set when a record could not be
 * applied.  *last (when not NULL) is the last record read. */
int wt_image_apply_log (struct wt_image *t, struct wtlog_reader *r,
                        const struct wt_apply_hooks *hooks,
                        struct wtlog_record *last, char *err, size_t errlen);

#endif
