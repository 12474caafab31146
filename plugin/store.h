/* stage=on without faults: the log is the disk's store (store.c).  The
 * disk's writes go into the log's ring, with their bytes, and the mover
 * writes them onto the image behind the requests (log-queue.c); the
 * pending map says which stretches of the disk the image does not hold
 * yet, and a read of one waits for the mover.  With data=off the log file
 * gets the records without their bytes (the queue). */
#ifndef WTP_STORE_H
#define WTP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wtlog.h"
#include "export.h"

#pragma GCC visibility push(hidden)

/* Set once, by wtp_store_choose: whether the log is the disk's store, and
 * data=on. */
extern bool wtp_store_mode;
extern bool wtp_store_data;

/* Whether the log is e's store (only the disk's: the channel, small and read
 * by the host after the run, is written through to its file). */
static inline bool
wtp_is_store (const struct wtp_export *e)
{
  return e->store;
}

/* WTLOG_F_DATA when writes carry their bytes in the log: with data=on, and
 * while the log is the disk's store (whatever data says: the strip at
 * unload takes them out again with data=off).  The channel's writes follow
 * the disk's, so that every record obeys the header's DATA flag. */
static inline uint16_t
wtp_data_flag (void)
{
  return wtp_store_data || wtp_store_mode ? WTLOG_F_DATA : 0;
}

/* Chooses whether the log is the disk's store (stage=on without faults, on a
 * writable image), once the disk is open.  data is data=on. */
void wtp_store_choose (struct wtp_export *disk, bool stage, bool data);
/* With data=off, the queue (log-queue.c): the log told the image it writes
 * behind the requests.  Before the log is created.  0, or -1 after
 * nbdkit_error. */
int wtp_store_queue_setup (void);
/* Writes through: their request writes them onto the image, once every
 * change queued before them is, and logs them without their bytes
 * (APPLIED).  With data=off every write (the queue then holds zeroes and
 * trims only); with data=on those of this size or more with their bytes,
 * of whole sectors, whose bytes the log then does not keep (IN_IMAGE:
 * owners.h): a copy into the ring and the mover's write would cost more. */
#define WTP_STORE_THROUGH_MIN (64u << 10)
/* Whether rec is such a write. */
bool wtp_store_through (const struct wtlog_record *rec);
/* Its flags then: APPLIED, no DATA, and with data=on IN_IMAGE. */
void wtp_store_mark_through (struct wtlog_record *rec);
/* Such a write under its range lock, before its record is reserved: waits
 * until the mover has written every change queued so far onto the image
 * (moving them itself when they are copied; none queued: no wait), then
 * writes buf onto the image.  0, or an errno (said): the write fails. */
int wtp_store_write_through (const struct wtlog_record *rec, const void *buf);
/* The pending map of the disk, when the log is the store.  0, or -1 after
 * nbdkit_error. */
int wtp_store_open (void);
/* rec's change, whose record is copied into the ring at [.., until), is in
 * the image once the mover passes until.  Called under the range lock. */
void wtp_store_mark (const struct wtlog_record *rec, uint64_t until);
/* What the export holds at [offset, offset+count).  0 or errno. */
int wtp_read_current (struct wtp_export *e, void *buf, size_t count,
                      uint64_t offset);
/* At unload: the log applied onto the image, made durable.  true when done. */
bool wtp_store_apply (const char *log_path);
/* At unload, after the final CLOSE with data=off: the payloads leave the
 * log. */
void wtp_store_strip (const char *log_path);
void wtp_store_close (void);

#pragma GCC visibility pop

#endif
