/* The page of wtrack's HTML reports (lib/html-page.h). */
#include "lib/html-page.h"

#include <errno.h>
#include <stdio.h>

#include "lib/util.h"

/* lib/html-assets.c: lib/html/report.css, report.js and report-trace.js,
 * NUL-terminated. */
extern const char wtc_html_css[], wtc_html_js[], wtc_html_trace_js[];

void
wtc_html_text (FILE *out, const char *s)
{
  for (; *s; s++) {
    switch (*s) {
    case '<': fputs ("&lt;", out); break;
    case '>': fputs ("&gt;", out); break;
    case '&': fputs ("&amp;", out); break;
    case '"': fputs ("&quot;", out); break;
    default: putc (*s, out);
    }
  }
}

bool
wtc_html_page (const char *path, const char *title, const char *json, GError **error)
{
  return wtc_html_page_trace (path, title, json, false, error);
}

bool
wtc_html_page_trace (const char *path, const char *title, const char *json, bool trace,
                     GError **error)
{
  FILE *out = fopen (path, "w");
  if (!out) {
    g_set_error (error, WTC_ERROR, errno, "open: %s: %s", path, g_strerror (errno));
    return false;
  }
  fputs ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width\">\n<title>", out);
  wtc_html_text (out, title);
  fprintf (out, "</title>\n<style>\n%s</style>\n</head><body>\n"
           "<noscript>This report is drawn by JavaScript; report.txt and report.json hold the same findings.</noscript>\n"
           "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"wtdata\">", wtc_html_css);
  /* JSON has '<' only inside strings, where \u003c means the same: the
   * data can never close the script element. */
  for (const char *p = json; *p; p++) {
    if (*p == '<')
      fputs ("\\u003c", out);
    else
      putc (*p, out);
  }
  fprintf (out, "</script>\n<script>\n%s</script>\n", wtc_html_js);
  if (trace)
    fprintf (out, "<script>\n%s</script>\n", wtc_html_trace_js);
  fputs ("</body></html>\n", out);
  if (ferror (out) | (fclose (out) != 0)) {
    g_set_error (error, WTC_ERROR, errno, "write: %s: %s", path, g_strerror (errno));
    return false;
  }
  return true;
}

