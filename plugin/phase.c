/* The exit's phases timed (phase.h). */
#include "phase.h"

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

void
wtp_phase_start (struct timespec *start)
{
  clock_gettime (CLOCK_MONOTONIC, start);
}

void
wtp_phase_done (const char *name, const struct timespec *start)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  double seconds = (double) (now.tv_sec - start->tv_sec)
                   + (double) (now.tv_nsec - start->tv_nsec) / 1e9;
  nbdkit_debug ("exit: %s took %.3f s", name, seconds);
}
