/* wtrack dump --trace: the log as Chrome trace-event JSON. */
#ifndef WTC_DUMP_TRACE_H
#define WTC_DUMP_TRACE_H

/* Writes log's trace to path ("-": stdout), with the MARKs of channel
 * (NULL: none). Returns the exit status: 0, or 2 (torn log, I/O error). */
int wtc_dump_trace (const char *log, const char *channel, const char *path);

#endif
