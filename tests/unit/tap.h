/* Minimal TAP for the C unit tests: plan, ok, done. */
#ifndef WT_TAP_H
#define WT_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static inline void
tap_plan (int n)
{
  printf ("1..%d\n", n);
}

__attribute__ ((format (printf, 2, 3)))
static inline int
tap_ok (int cond, const char *fmt, ...)
{
  va_list ap;
  tap_count++;
  if (!cond)
    tap_failed++;
  printf ("%sok %d - ", cond ? "" : "not ", tap_count);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  return cond;
}

static inline int
tap_done (void)
{
  if (tap_failed)
    fprintf (stderr, "# %d of %d failed\n", tap_failed, tap_count);
  return tap_failed ? 1 : 0;
}

#endif
