/* What the plugin's files share: the two exports, a connection's handle
 * and the configuration.  wtrack.c is the plugin (configuration and
 * lifecycle), request.c serves the requests, store.c keeps the log as the
 * disk's store. */
#ifndef WTP_WTRACK_H
#define WTP_WTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "rangelock.h"

#pragma GCC visibility push(hidden)

struct wtp_export {
  const char *what;             /* "disk" or "channel", for messages */
  char *path;
  int fd;
  bool writable;
  uint64_t size;
  uint64_t log_id;              /* the OPEN record's offset field */
  uint16_t write_type;          /* WTLOG_WRITE or WTLOG_CHANNEL */
  struct wtp_range_lock ranges;
};

struct wtp_handle {
  struct wtp_export *exp;
  uint32_t conn;
};

/* The exports (wtrack.c): the disk "", and the channel when configured. */
extern struct wtp_export wtp_disk;
extern struct wtp_export wtp_channel;
/* The configuration (wtrack.c). */
extern char *wtp_log_path;
extern bool wtp_data;

#pragma GCC visibility pop

#endif
