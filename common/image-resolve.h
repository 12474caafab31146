/* Where the bytes of a data=on log's IN_IMAGE records are (doc/formats.md,
 * "One copy of large writes"): the plugin wrote such a WRITE straight into
 * the run's image and logged it without its bytes.  For each byte of its
 * range, the first SAVED record after it that covers the byte holds it;
 * where none does, the run's final image does.
 *
 * wt_resolve_open makes one pass over the log with an owner map of the
 * ranges whose current bytes are an IN_IMAGE record's (a later IN_IMAGE
 * write owns its range, any other change of the disk ends the ownership
 * of its range, a SAVED record resolves the owned bytes it covers to its
 * payload), and keeps, for each IN_IMAGE record, the pieces of its range
 * and where their bytes are.  Memory grows with the IN_IMAGE records and
 * their pieces, not with the disk.  wt_resolve_read then reads a record's
 * bytes and checks them against its sector hashes.  libc only. */
#ifndef WT_IMAGE_RESOLVE_H
#define WT_IMAGE_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wtlog.h"

struct wt_resolve;

/* Whether rec is an IN_IMAGE record whose bytes a replay needs (a FAILED
 * one changes nothing). */
bool wt_record_in_image (const struct wtlog_record *rec);

/* One pass over the log at log_path (opened as every reader opens it: a
 * killed plugin's ring is put into the log first).  final_image: the run's
 * final image, or NULL when there is none (reading bytes it holds is then
 * an error).  A torn log is no error here: the records before the tear are
 * resolved, as the readers apply only those.  NULL with err set when the
 * log or the final image cannot be opened. */
struct wt_resolve *wt_resolve_open (const char *log_path, const char *final_image,
                                    char *err, size_t errlen);
void wt_resolve_close (struct wt_resolve *r);

/* The number of IN_IMAGE records resolved, and the seq of the first (0:
 * none). */
uint64_t wt_resolve_records (const struct wt_resolve *r);
uint64_t wt_resolve_first_seq (const struct wt_resolve *r);
/* The seq of the first IN_IMAGE record some of whose bytes only the final
 * image holds (0: none): a log that has one needs a final image. */
uint64_t wt_resolve_first_final_seq (const struct wt_resolve *r);
/* Whether a final image was given. */
bool wt_resolve_has_final (const struct wt_resolve *r);

/* Reads len bytes of the IN_IMAGE record seq, from byte at of its range
 * (at and len multiples of 512), into buf.  When hashes is not NULL (the
 * record's sector hashes, hashes[0] the first sector of its range), every
 * sector read is checked against its hash.  0, or -1 with err naming the
 * seq and what is wrong: no such record, bytes no SAVED record kept before
 * a change overwrote them, no final image, a read error, or a hash
 * mismatch (naming the final image or the SAVED record, and the sector). */
int wt_resolve_read (const struct wt_resolve *r, uint64_t seq, uint64_t at,
                     uint64_t len, void *buf, const uint64_t *hashes,
                     char *err, size_t errlen);

#endif
