/* Fault injection: fault=KIND:key=value:... rules, decided per write to the
 * disk export, and the ground-truth file faults=FILE. */
#ifndef WTP_FAULTS_H
#define WTP_FAULTS_H

#include <stdbool.h>
#include <stdint.h>

enum wtp_fault_kind {
  WTP_FAULT_NONE = 0,
  WTP_FAULT_VANISH,             /* acknowledge, do not store, do not log */
  WTP_FAULT_LIE,                /* acknowledge and log, do not store */
  WTP_FAULT_TEAR,               /* store some sectors, log all */
  WTP_FAULT_EIO,                /* fail with EIO, logged FAILED */
};

struct wtp_fault {
  enum wtp_fault_kind kind;
  uint64_t req;                 /* number of the write request, from 1 */
  uint64_t first_sector;
  uint64_t nsectors;
  bool *stored;                 /* TEAR: which sectors are stored (malloc) */
  uint64_t after_seq;           /* VANISH: the last seq logged before it */
};

/* Parses one fault= value; 0, or -1 after nbdkit_error naming it. */
int wtp_faults_add_rule (const char *spec);
bool wtp_faults_any (void);
/* Creates the ground-truth file; 0 or -1 after nbdkit_error. */
int wtp_faults_open (const char *path);
/* Counts a write request to the disk export and decides its fault.
 * now_ns is on the log's clock.  0, or -1 with errno set (ENOMEM). */
int wtp_faults_decide (uint64_t offset, uint64_t count, uint64_t now_ns,
                       struct wtp_fault *f);
/* Appends the ground-truth line for an injected fault; seq 0 means not
 * logged.  Frees f->stored. */
void wtp_faults_record (struct wtp_fault *f, uint64_t seq, uint64_t offset,
                        uint64_t count);
/* Makes the ground truth durable (at flush and close). */
void wtp_faults_sync (void);
void wtp_faults_close (void);

#endif
