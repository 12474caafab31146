/* The plugin's side of writes.wtlog: positions reserved under a mutex, each
 * record copied by its own thread into a shared mapping of the ring file
 * beside the log (LOG.ring; a small record in the reservation itself when
 * nothing before it is still being copied), a "copied up to" watermark that
 * lets a request be acknowledged only once its record and every record
 * before it are there, and a mover that copies the ring's bytes into the
 * log file. */
#ifndef WTP_LOG_H
#define WTP_LOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "wtlog.h"

/* A reserved stretch of the log; lives on the stack of its request until
 * wtp_log_commit() returns. */
struct wtp_slot {
  uint64_t start, end;
  bool copied;                  /* its record is in the ring (or the file) */
  bool waiting;                 /* its thread sleeps on cond */
  pthread_cond_t cond;
  struct wtp_slot *next;
};

/* Creates (truncates) the log and writes its header.  0, or -1 after
 * nbdkit_error. */
int wtp_log_create (const char *path, const struct wtlog_header *h);
/* Starts the mover (copies the ring into the log in the background) and
 * the helper that prefaults the ring's pages; called once nbdkit has
 * forked.  Without them requests move when the ring is full, and fault the
 * ring's pages themselves. */
void wtp_log_start_threads (void);
/* Stops and joins them (nbdkit's .cleanup); wtp_log_close() does it too
 * when .cleanup was not called. */
void wtp_log_stop_threads (void);
/* ns since the header's monotonic start. */
uint64_t wtp_log_now (void);
/* The seq last handed out: a write that vanishes under the range lock comes
 * after it and before any later write to the same sectors. */
uint64_t wtp_log_last_seq (void);
bool wtp_log_is_broken (void);
/* Whether a record of size bytes can ever be reserved: the format holds
 * it, and it fits the ring when it must go through it (every record in the
 * queue; a small one otherwise).  One that does not would wait for room
 * forever; this says why (nbdkit_error). */
bool wtp_log_record_fits (uint64_t size);
/* Assigns rec->seq and a position, allocating the file's space, and for a
 * small record, when no record before it is still being copied, copies it
 * too, in the same pass over the mutex; the record is then under the
 * watermark and wtp_log_commit() returns at once.  hashes and data are the
 * record's, as wtp_log_commit() takes them.  -1 with errno EIO when the
 * log is broken, or the allocation's error (ENOSPC, ...), which breaks
 * it. */
int wtp_log_reserve_copy (struct wtp_slot *slot, struct wtlog_record *rec,
                          const uint64_t *hashes, const void *data);
/* Copies the record to its slot and waits until every record before it is
 * copied too; nothing when the reservation copied it.  Cannot fail: the
 * slot's space was allocated by the reservation. */
void wtp_log_commit (struct wtp_slot *slot, struct wtlog_record *rec,
                     const uint64_t *hashes, const void *data);
/* wtp_log_commit in two steps, for a request that must do something
 * between the copy and the wait (mark the pending map, under the range
 * lock). */
void wtp_log_copy_record (struct wtp_slot *slot, struct wtlog_record *rec,
                          const uint64_t *hashes, const void *data);
void wtp_log_wait (struct wtp_slot *slot);
/* The end of the last record reserved whose change the mover must still
 * write onto the image (a write with its bytes, a zero, a trim): what a
 * write through waits for (wtp_log_drain_to) before it writes the image. */
uint64_t wtp_log_apply_end (void);
/* Reserve and commit in one step, for records without a range to order. */
int wtp_log_append (struct wtlog_record *rec, const uint64_t *hashes,
                    const void *data);
/* Moves every record under the watermark into the log file, so that a
 * reader of the file sees them (the apply at unload).  A failure breaks
 * the log.  0 or -1 with errno set. */
int wtp_log_settle (void);
/* wtp_log_settle, then fdatasync the log; a failure breaks it.  0 or -1
 * with errno set. */
int wtp_log_sync (void);
void wtp_log_close (void);

/* The queue (log-queue.c; stage=on): before wtp_log_create, the image the
 * mover applies each record onto; with data (data=on) the log file still
 * gets every record whole, at the ring's positions.  0, or -1 after
 * nbdkit_error. */
int wtp_log_set_queue (int image_fd, const char *image_path,
                       uint64_t image_size, bool blockdev, bool data);
bool wtp_log_is_queue (void);
/* Whether the mover writes the image (the queue, or data=on staged). */
bool wtp_log_applies_image (void);
/* Waits until every record before log position pos is moved (applied onto
 * the image), moving them itself when they are copied; returns at once,
 * without the mutex, when they are moved already.  0, or -1 with
 * errno (EIO: the log is broken). */
int wtp_log_drain_to (uint64_t pos);
/* In queue mode, fdatasync of the image (a failure breaks the log); else
 * nothing.  0, or -1 with errno. */
int wtp_log_sync_image (void);
/* After the log's close: its header without DATA and STORE (the records
 * carry no payload, and the image is the disk after the run), synced.  0,
 * or -1 after nbdkit_error. */
int wtp_log_queue_finish (const char *path);

#endif
