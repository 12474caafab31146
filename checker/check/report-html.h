/* The HTML report: a page that needs no server and no network. */
#ifndef WTC_REPORT_HTML_H
#define WTC_REPORT_HTML_H

#include <stdbool.h>

#include <glib.h>

#include "check/check.h"

/* wtrack check --html FILE: the run's report (one more pass over the log
 * for its pictures; doc/report-html.md). */
bool wtc_report_html (const struct wtc_check *c, const char *path, GError **error);

#endif
