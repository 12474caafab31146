/* Small helpers: clock, errors, sizes, whole reads and writes. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

uint64_t
wtg_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Record the first failure (the one RESULT reports), print every one on the
 * console, and tell the other threads to stop. Always returns -1. */
int
wtg_fail (struct wtg_run *run, const char *fmt, ...)
{
  int saved = errno;
  char what[sizeof run->error];
  va_list ap;
  va_start (ap, fmt);
  errno = saved;
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  fprintf (stderr, "wtrack-guest: %s\n", what);
  pthread_mutex_lock (&run->error_lock);
  if (!run->error[0])
    snprintf (run->error, sizeof run->error, "%s", what);
  run->stop = 1;
  pthread_mutex_unlock (&run->error_lock);
  errno = saved;
  return -1;
}

/* One more key=value line for RESULT. */
void
wtg_extra (struct wtg_run *run, const char *fmt, ...)
{
  size_t used = strlen (run->extra);
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (run->extra + used, sizeof run->extra - used, fmt, ap);
  va_end (ap);
  used = strlen (run->extra);
  if (used + 1 < sizeof run->extra) {
    run->extra[used] = '\n';
    run->extra[used + 1] = '\0';
  }
}

/* "4096", "64K", "16M", "1G", "2T", "8MiB": binary multiples. */
int
wtg_parse_size (const char *s, uint64_t *out)
{
  if (!isdigit ((unsigned char) *s))
    return -1;
  uint64_t v = 0;
  for (; isdigit ((unsigned char) *s); s++) {
    if (v > (UINT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (uint64_t) (*s - '0');
  }
  unsigned shift = 0;
  switch (toupper ((unsigned char) *s)) {
  case 'K': shift = 10; break;
  case 'M': shift = 20; break;
  case 'G': shift = 30; break;
  case 'T': shift = 40; break;
  case '\0': break;
  default: return -1;
  }
  if (shift) {
    s++;
    if (strcmp (s, "iB") == 0 || strcmp (s, "B") == 0)
      s += strlen (s);
  }
  if (*s || (shift && v > (UINT64_MAX >> shift)))
    return -1;
  *out = v << shift;
  return 0;
}
