/* wtrack dump --trace: the log as Chrome trace-event JSON. */
#ifndef WTC_DUMP_TRACE_H
#define WTC_DUMP_TRACE_H

#include <stdbool.h>

#include <glib.h>

/* Writes log's trace to path ("-": stdout), with the MARKs of channel
 * (NULL: none). False with error when the log is torn (the trace holds the
 * records before the tear) or cannot be read, or path cannot be written;
 * a channel that cannot be read, in full or at all, is a warning added to
 * warnings (char *). */
bool wtc_dump_trace (const char *log, const char *channel, const char *path,
                     GPtrArray *warnings, GError **error);

#endif
