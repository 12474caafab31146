/* An export the plugin serves (the disk "", or the channel) and a
 * connection's handle: what wtrack.c opens, and request.c and store.c
 * work on. */
#ifndef WTP_EXPORT_H
#define WTP_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "rangelock.h"
#include "wtlog.h"

struct wtp_export {
  const char *what;             /* "disk" or "channel", for messages */
  char *path;
  int fd;
  bool writable;
  uint64_t size;
  uint64_t log_id;              /* the OPEN record's offset field */
  uint16_t write_type;          /* WTLOG_WRITE or WTLOG_CHANNEL */
  bool store;                   /* the log is its store (store.h): the disk's */
  struct wtp_range_lock ranges;
};

struct wtp_handle {
  struct wtp_export *exp;
  uint32_t conn;
};

/* The disk, not the channel: ZERO, TRIM and FLUSH records, and faults,
 * describe the disk. */
static inline bool
wtp_is_disk (const struct wtp_export *e)
{
  return e->log_id == WTLOG_EXPORT_DISK;
}

#endif
