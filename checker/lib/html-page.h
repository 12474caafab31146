/* The page of wtrack's HTML reports: no server, no network. check's
 * report.html and a campaign's summary.html are this page around their own
 * data; the script (checker/lib/html/report.js) draws what the data's
 * "kind" names. */
#ifndef WTC_LIB_HTML_PAGE_H
#define WTC_LIB_HTML_PAGE_H

#include <stdbool.h>
#include <stdio.h>

#include <glib.h>

/* The page around json: inline CSS and script, json embedded as the
 * element #wtdata; json's "kind" ("run", "campaign") says what is drawn. */
bool wtc_html_page (const char *path, const char *title, const char *json,
                    GError **error);

/* The same, with the kernel trace's script (lib/html/report-trace.js) when
 * trace: only a report with a trace carries it, so the page of a run
 * without one is the page it was before traces. */
bool wtc_html_page_trace (const char *path, const char *title, const char *json,
                          bool trace, GError **error);

/* s with <, >, & and " escaped, for HTML text and attribute values. */
void wtc_html_text (FILE *out, const char *s);

#endif
