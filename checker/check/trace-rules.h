/* The join's inner parts (trace-join.c, trace-rules.c): one bad page as the
 * rules see it, and the finding for it. */
#ifndef WTC_TRACE_RULES_H
#define WTC_TRACE_RULES_H

#include "check/check.h"

struct wtc_tr_page {
  uint32_t file;
  uint64_t page;
  guint first_bad, bad_end;         /* its bad sectors in c->bad */
  uint64_t ino;                     /* 0: unknown */
  uint32_t op;                      /* the last op that wrote it, 0: none */
  bool has_disk;                    /* some bad sector has a disk sector */
  uint64_t disk_first, disk_last;   /* the bad sectors' disk sectors */
};

/* The trace time of a guest time (the MARKs' other clock). */
bool wtc_trace_from_guest (const struct wtc_trace_join *j, uint64_t guest_ns,
                           uint64_t *trace_ns);
/* Sets s->rule, s->finding and s->evidence from s->events. */
void wtc_tr_judge (const struct wtc_trace_join *j, const struct wtc_check *c,
                   const struct wtc_tr_page *pg, struct wtc_story *s);
/* "t=1.234567" (the log's clock) or "trace time 12.345678". */
char *wtc_tr_fmt_time (const struct wtc_trace_join *j, uint64_t trace_ns, char *buf,
                       size_t len);

#endif
