/* The kernel trace's part of report.txt and report.json (report-trace.c). */
#ifndef WTC_REPORT_TRACE_H
#define WTC_REPORT_TRACE_H

#include <stdio.h>

#include "check/check.h"
#include "lib/json.h"

/* Nothing when the check has no trace. */
void wtc_report_text_trace (const struct wtc_check *c, int max_pages, FILE *out);
void wtc_report_json_trace (const struct wtc_check *c, struct wtc_json_out *o);
/* report.html's "trace" member (doc/report-html.md): the stories, bounded;
 * x_is_seq: the timeline's x is the record number, not a log time. */
void wtc_report_html_trace (const struct wtc_check *c, bool x_is_seq, JsonBuilder *b);

#endif
