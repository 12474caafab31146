/* Interchange: wtrack logs to and from other tools' write logs, for
 * `wtrack import` and `wtrack export` (their cmd-*.c parse the options and
 * call these). dm-log-writes (interchange/dmlog-format.h: Linux's
 * dm-log-writes target, QEMU's blklogwrites, xfstests' replay-log) is the
 * one format there is. Each returns the command's exit status (WT_EXIT_*)
 * and prints its own errors and, when verbose, what it wrote. */
#ifndef WTC_INTERCHANGE_H
#define WTC_INTERCHANGE_H

#include <stdbool.h>

#include <glib.h>

struct wtc_import_request {
  const char *in;        /* the dm-log-writes log */
  const char *out;       /* the wtrack log to write */
  const char *channel;   /* where MARKs go; NULL: OUT.channel.bin */
  gint64 disk_size;      /* -1: the end of the furthest range touched */
  bool verbose;
};

/* dm-log-writes IN as a wtrack log with DATA and NOTIME; its MARKs become a
 * channel's MARK messages. */
int wtc_import_dmlog (const struct wtc_import_request *req);

struct wtc_export_request {
  const char *log;       /* a wtrack log recorded with data=on */
  const char *out;       /* the dm-log-writes log to write */
  const char *channel;   /* the run's channel.bin (its MARKs); NULL: none */
  const char *base;      /* the disk before the run (unaligned requests); NULL */
  const char *final_image; /* the run's final image (IN_IMAGE writes' bytes);
                              NULL: disk.img beside the log, if there */
  bool verbose;
};

int wtc_export_dmlog (const struct wtc_export_request *req);

#endif
