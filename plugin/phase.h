/* The exit's phases timed (phase.c): each phase of the unload (the apply
 * onto the image, the image's sync, the log's close, the strip, the
 * directory's sync) prints "exit: NAME took S s" in nbdkit's debug output
 * (nbdkit -v), which scripts/bench reads to report where the exit goes. */
#ifndef WTP_PHASE_H
#define WTP_PHASE_H

#include <time.h>

#pragma GCC visibility push(hidden)

/* The start of a phase: now, on the monotonic clock. */
void wtp_phase_start (struct timespec *start);

/* nbdkit_debug ("exit: NAME took S s"), S the seconds since start. */
void wtp_phase_done (const char *name, const struct timespec *start);

#pragma GCC visibility pop

#endif
