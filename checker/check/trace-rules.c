/* The finding for one bad page from its story (check/trace.h, doc/design.md
 * "The kernel's account"): a small set of rules, tried in order, each
 * stated from the events it rests on. A rule that rests on an absence
 * (never marked dirty, never written back) needs the event to have been
 * traced and no event lost: otherwise the finding says the trace cannot
 * say, and why. */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "check/trace-rules.h"
#include "search.h"

/* A write the log holds this long before a bio's time (clocks tied by the
 * MARKs, interpolated) is still taken as the bio's write. */
#define WTC_TR_SLACK_NS 10000000ull

const char *
wtc_tr_rule_name (unsigned rule)
{
  static const char *const names[WTC_NRULES] = {
    "cannot_say", "store_not_seen", "dirty_dropped", "deleted_while_dirty",
    "bio_missed", "device_lost", "bio_reached", "not_issued",
  };
  return rule < WTC_NRULES ? names[rule] : "?";
}

char *
wtc_tr_fmt_time (const struct wtc_trace_join *j, uint64_t trace_ns, char *buf, size_t len)
{
  char t[32];
  uint64_t log_ns;
  if (wtc_trace_to_log (j, trace_ns, &log_ns))
    g_snprintf (buf, len, "t=%s", wtc_fmt_secs (log_ns, t, sizeof t));
  else
    g_snprintf (buf, len, "trace time %s", wtc_fmt_secs (trace_ns, t, sizeof t));
  return buf;
}

/* What the story holds, found in one pass. */
struct wtc_tr_facts {
  uint64_t t0;                      /* the last op's trace time, 0: unknown */
  bool t0_known;
  const struct wtc_tr_event *bio;   /* the last write bio of a bad sector after t0 */
  guint bio_at;
  const struct wtc_tr_event *dirty; /* the dirtying the page had at or after t0 */
  guint dirty_at;
  const struct wtc_tr_event *wb;    /* the first writeback of it after dirty */
  guint wb_at;
  const struct wtc_tr_event *del;   /* deleted from the page cache while dirty */
  guint del_at;
  const struct wtc_tr_event *range; /* a range op on or next to it while dirty */
};

static const struct wtc_tr_event *
wtc_tr_ev (const struct wtc_trace_join *j, const struct wtc_story *s, guint k)
{
  return &g_array_index (j->trace->events, struct wtc_tr_event,
                         g_array_index (s->events, guint, k));
}

/* The last op's trace time: its own MARK when the trace has it, else its
 * guest time through the MARKs. */
static void
wtc_tr_op_time (const struct wtc_trace_join *j, const struct wtc_check *c,
                const struct wtc_story *s, struct wtc_tr_facts *f)
{
  if (!s->op || s->op > c->mf->nops)
    return;
  g_autofree char *prefix = g_strdup_printf ("op %" PRIu32 " ", s->op);
  for (guint k = 0; k < s->events->len; k++) {
    const struct wtc_tr_event *e = wtc_tr_ev (j, s, k);
    if (e->kind == WTC_TR_MARK && strncmp (e->fields, prefix, strlen (prefix)) == 0) {
      f->t0 = e->ts_ns;
      f->t0_known = true;
      return;
    }
  }
  f->t0_known = wtc_trace_from_guest (j, c->mf->ops[s->op - 1].guest_ns, &f->t0);
}

static void
wtc_tr_gather (const struct wtc_trace_join *j, const struct wtc_story *s,
               struct wtc_tr_facts *f)
{
  const struct wtc_tr_event *dirty_before = NULL;
  guint dirty_before_at = 0;
  for (guint k = 0; k < s->events->len; k++) {
    const struct wtc_tr_event *e = wtc_tr_ev (j, s, k);
    bool after = e->ts_ns >= f->t0;
    if (e->kind == WTC_TR_BIO && e->write && !after)
      dirty_before = NULL;      /* written out before the op: clean again */
    else if (e->kind == WTC_TR_BIO && e->write)
      f->bio = e, f->bio_at = k;  /* the last: the write whose data should be there */
    else if (e->kind == WTC_TR_DIRTY && !after)
      dirty_before = e, dirty_before_at = k;
    else if (e->kind == WTC_TR_DIRTY && !f->dirty)
      f->dirty = e, f->dirty_at = k;
  }
  if (dirty_before)             /* still dirty when the op wrote it */
    f->dirty = dirty_before, f->dirty_at = dirty_before_at;
  for (guint k = f->dirty ? f->dirty_at + 1 : s->events->len; k < s->events->len; k++) {
    const struct wtc_tr_event *e = wtc_tr_ev (j, s, k);
    if (!f->wb && (e->kind == WTC_TR_WB_INODE || e->kind == WTC_TR_WRITEPAGES))
      f->wb = e, f->wb_at = k;
    if (!f->wb && !f->del && e->kind == WTC_TR_PC_DEL)
      f->del = e, f->del_at = k;
    if (!f->wb && !f->range && e->kind == WTC_TR_RANGE_OP)
      f->range = e;
  }
}

/* The page's first bad sector inside the bio's sectors. */
static const struct wtc_bad *
wtc_tr_bad_in (const struct wtc_check *c, const struct wtc_tr_page *pg,
               const struct wtc_tr_event *bio)
{
  for (guint i = pg->first_bad; i < pg->bad_end; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->disk_sector != WTC_NO_SECTOR && b->disk_sector >= bio->first
        && b->disk_sector <= bio->last)
      return b;
  }
  return &g_array_index (c->bad, struct wtc_bad, pg->first_bad);
}

static void
wtc_tr_say (struct wtc_story *s, unsigned rule, guint evidence, const char *fmt, ...)
  G_GNUC_PRINTF (4, 5);
static void
wtc_tr_say (struct wtc_story *s, unsigned rule, guint evidence, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  s->rule = (uint8_t) rule;
  s->evidence = evidence;
  g_free (s->finding);
  s->finding = g_strdup_vprintf (fmt, ap);
  va_end (ap);
}

/* What the device answered for sector z after the bio (block_rq_complete),
 * as a clause of the finding: ", completed ... but" or ",". */
static char *
wtc_tr_completion (const struct wtc_trace_join *j, const struct wtc_story *s, guint from,
                   uint64_t z)
{
  char when[48];
  for (guint k = from + 1; k < s->events->len; k++) {
    const struct wtc_tr_event *e = wtc_tr_ev (j, s, k);
    if (e->kind != WTC_TR_RQ_DONE || !e->write || z < e->first || z > e->last)
      continue;
    wtc_tr_fmt_time (j, e->ts_ns, when, sizeof when);
    return e->error ? g_strdup_printf (", failed by the device at %s (error %" PRId32 "), and",
                                       when, e->error)
      : g_strdup_printf (", completed by the device at %s without error, but", when);
  }
  return g_strdup (",");
}

/* A bio covered a bad sector after the op: did a write of it reach the log? */
static void
wtc_tr_rule_bio (const struct wtc_trace_join *j, const struct wtc_check *c,
                 const struct wtc_tr_page *pg, const struct wtc_tr_facts *f,
                 struct wtc_story *s)
{
  char when[48], t[32];
  const struct wtc_bad *b = wtc_tr_bad_in (c, pg, f->bio);
  uint64_t bio_log;
  wtc_tr_fmt_time (j, f->bio->ts_ns, when, sizeof when);
  g_autofree char *done = wtc_tr_completion (j, s, f->bio_at, b->disk_sector);
  if (!b->last_seq)
    wtc_tr_say (s, WTC_RULE_DEVICE_LOST, f->bio_at, "bio for disk sector %" PRIu64
                " issued at %s (block_bio_queue, line %" PRIu32 ")%s no write of it ever"
                " reached the disk: the device lost it", b->disk_sector, when, f->bio->line,
                done);
  else if (!wtc_trace_to_log (j, f->bio->ts_ns, &bio_log))
    wtc_tr_say (s, WTC_RULE_CANNOT_SAY, f->bio_at, "the trace cannot say: a bio for disk"
                " sector %" PRIu64 " was issued at %s, but no MARK ties the trace's clock"
                " to the log's, so whether write seq %" PRIu64 " was it is unknown",
                b->disk_sector, when, b->last_seq);
  else if (b->last_t + WTC_TR_SLACK_NS < bio_log)
    wtc_tr_say (s, WTC_RULE_DEVICE_LOST, f->bio_at, "bio for disk sector %" PRIu64
                " issued at %s (block_bio_queue, line %" PRIu32 ")%s no write of it reached"
                " the disk after that (the log's last, seq %" PRIu64 ", was at t=%s):"
                " the device lost it", b->disk_sector, when, f->bio->line, done, b->last_seq,
                wtc_fmt_secs (b->last_t, t, sizeof t));
  else
    wtc_tr_say (s, WTC_RULE_BIO_REACHED, f->bio_at, "bio for disk sector %" PRIu64
                " issued at %s reached the disk as write seq %" PRIu64 " (t=%s); the disk"
                " does not hold the expected content (%s)", b->disk_sector, when,
                b->last_seq, wtc_fmt_secs (b->last_t, t, sizeof t), wtc_class_name (b->cls));
}

static uint64_t
wtc_tr_segment_first (size_t i, const void *mapped)
{
  return g_array_index ((const GArray *) mapped, struct wtc_segment, i).disk_first;
}

/* Whether disk sectors [first, last] hold some of file fi (c->mapped). */
static bool
wtc_tr_in_file (const struct wtc_check *c, uint32_t fi, uint64_t first, uint64_t last)
{
  if (last == UINT64_MAX)
    return false;
  size_t n = wt_lower_bound (0, c->mapped->len, last + 1, wtc_tr_segment_first, c->mapped);
  if (n == 0)
    return false;
  const struct wtc_segment *sg = &g_array_index (c->mapped, struct wtc_segment, n - 1);
  return sg->file == fi && sg->disk_first + sg->count > first;
}

/* The write bio of file fi after ts nearest disk sector z, or NULL. */
static const struct wtc_tr_event *
wtc_tr_nearest_bio (const struct wtc_trace_join *j, const struct wtc_check *c, uint32_t fi,
                    uint64_t ts, uint64_t z)
{
  const struct wtc_tr_event *best = NULL;
  uint64_t best_d = UINT64_MAX;
  const GArray *ev = j->trace->events;
  for (guint k = 0; k < j->write_bios->len; k++) {
    const struct wtc_tr_event *e =
      &g_array_index (ev, struct wtc_tr_event, g_array_index (j->write_bios, guint, k));
    if (e->ts_ns < ts || !wtc_tr_in_file (c, fi, e->first, e->last))
      continue;
    uint64_t d = z < e->first ? e->first - z : z > e->last ? z - e->last : 0;
    if (d < best_d)
      best = e, best_d = d;
  }
  return best;
}

/* Dirty, written back, no bio of the bad sectors. */
static void
wtc_tr_rule_missed (const struct wtc_trace_join *j, const struct wtc_check *c,
                    const struct wtc_tr_page *pg, const struct wtc_tr_facts *f,
                    const char *dirtied, struct wtc_story *s)
{
  char when[48];
  wtc_tr_fmt_time (j, f->wb->ts_ns, when, sizeof when);
  if (!pg->has_disk) {
    wtc_tr_say (s, WTC_RULE_BIO_MISSED, f->wb_at, "%s, a writeback of the file covered it at %s (%s), but the page"
                " has no disk block: no bio could cover it", dirtied, when, f->wb->name);
    return;
  }
  const struct wtc_tr_event *near = wtc_tr_nearest_bio (j, c, pg->file, f->dirty->ts_ns,
                                                        pg->disk_first);
  if (near)
    wtc_tr_say (s, WTC_RULE_BIO_MISSED, f->wb_at, "%s, a writeback of the file covered it at %s (%s), but the bio"
                " covered disk sectors %" PRIu64 "-%" PRIu64 " (line %" PRIu32 "), not %"
                PRIu64, dirtied, when, f->wb->name, near->first, near->last, near->line,
                pg->disk_first);
  else
    wtc_tr_say (s, WTC_RULE_BIO_MISSED, f->wb_at, "%s, a writeback of the file covered it at %s (%s), but no bio"
                " of the file followed: none covered disk sector %" PRIu64, dirtied, when,
                f->wb->name, pg->disk_first);
}

/* Why an absence cannot be trusted, or NULL. */
static char *
wtc_tr_absence_doubt (const struct wtc_trace_join *j, const struct wtc_tr_page *pg)
{
  const struct wtc_trace *t = j->trace;
  if (t->clock && strcmp (t->clock, "none") == 0)
    return g_strdup ("the guest kernel has no tracefs: nothing was traced");
  if (t->lost_total)
    return g_strdup_printf ("the trace lost %" PRIu64 " events, so an event it lacks may"
                            " have happened", t->lost_total);
  if (t->dropped)
    return g_strdup ("the trace's last piece never reached the host, so its end is missing");
  if (t->truncated || t->over_limit)
    return g_strdup ("the trace was cut to fit its bound, so an event it lacks may have"
                     " happened");
  if (!pg->ino)
    return g_strdup ("the page's inode is unknown (no inode in the manifest or the trace's"
                     " header)");
  if (!wtc_trace_has_event (t, "writeback:writeback_dirty_folio")
      && !wtc_trace_has_event (t, "writeback:writeback_dirty_page"))
    return g_strdup ("this trace has no writeback:writeback_dirty_folio or _page event");
  if (!wtc_trace_has_event (t, "block:block_bio_queue"))
    return g_strdup ("this trace has no block:block_bio_queue event");
  if (!t->has_disk)
    return g_strdup ("the trace's header names no disk, so its bios cannot be placed");
  return NULL;
}

/* The rules that rest on what the trace lacks. */
static void
wtc_tr_rule_absence (const struct wtc_trace_join *j, const struct wtc_check *c,
                     const struct wtc_tr_page *pg, const struct wtc_tr_facts *f,
                     struct wtc_story *s)
{
  char when[48], dirtied[320], opname[96] = "";
  const struct wtmf_op *op = s->op && s->op <= c->mf->nops ? &c->mf->ops[s->op - 1] : NULL;
  if (op)
    g_snprintf (opname, sizeof opname, " op %" PRIu32 " (%s)", s->op,
                wtmf_op_kind_name (op->kind));
  if (op && op->kind == WTMF_OP_DIRECT_WRITE) {
    wtc_tr_say (s, WTC_RULE_NOT_ISSUED, G_MAXUINT, "written with O_DIRECT by%s, no bio"
                " covered its disk sectors: the kernel did not issue the write", opname);
    return;
  }
  if (!f->dirty) {
    wtc_tr_say (s, WTC_RULE_STORE_NOT_SEEN, G_MAXUINT, "written %s%s, never marked dirty %s:"
                " the kernel did not see the store",
                op && op->kind == WTMF_OP_MMAP_STORE ? "through a mapping by" : "by",
                op ? opname : " the workload", f->t0_known ? "after it" : "in the trace");
    return;
  }
  wtc_tr_fmt_time (j, f->dirty->ts_ns, when, sizeof when);
  g_snprintf (dirtied, sizeof dirtied, "marked dirty at %s%s%s%s", when,
              !op ? "" : !f->t0_known ? " (last written by" : f->dirty->ts_ns < f->t0
              ? ", still dirty at" : " after", opname, op && !f->t0_known ? ")" : "");
  if (f->range) {               /* what may have cleaned it: name it */
    size_t n = strlen (dirtied);
    g_snprintf (dirtied + n, sizeof dirtied - n, ", then %s on or next to it at %s",
                f->range->name, wtc_tr_fmt_time (j, f->range->ts_ns, when, sizeof when));
  }
  if (f->del) {
    wtc_tr_say (s, WTC_RULE_DELETED_DIRTY, f->del_at, "%s, deleted from the page cache at %s"
                " before any writeback: the kernel dropped the dirty page", dirtied,
                wtc_tr_fmt_time (j, f->del->ts_ns, when, sizeof when));
    return;
  }
  if (f->wb) {
    wtc_tr_rule_missed (j, c, pg, f, dirtied, s);
    return;
  }
  wtc_tr_say (s, WTC_RULE_DIRTY_DROPPED, f->dirty_at, "%s, never written back (no writepages"
              " or bio covered it): the kernel dropped the dirty page", dirtied);
}

void
wtc_tr_judge (const struct wtc_trace_join *j, const struct wtc_check *c,
              const struct wtc_tr_page *pg, struct wtc_story *s)
{
  struct wtc_tr_facts f = { 0 };
  wtc_tr_op_time (j, c, s, &f);
  s->op_ns = f.t0_known ? f.t0 : 0;
  /* An op that moves data (insert, collapse) or shares it (clone, dedupe)
   * wrote none of it: the data's bios came before it, its dirtying
   * happened at another page. */
  const struct wtmf_op *op = s->op && s->op <= c->mf->nops ? &c->mf->ops[s->op - 1] : NULL;
  bool moved = op && (op->kind == WTMF_OP_INSERT || op->kind == WTMF_OP_COLLAPSE
                      || op->kind == WTMF_OP_CLONE || op->kind == WTMF_OP_DEDUPE);
  if (moved)
    f.t0 = 0, f.t0_known = true;
  wtc_tr_gather (j, s, &f);
  if (f.bio) {
    wtc_tr_rule_bio (j, c, pg, &f, s);
    return;
  }
  if (moved) {
    wtc_tr_say (s, WTC_RULE_CANNOT_SAY, G_MAXUINT, "the trace cannot say: op %" PRIu32
                " (%s) moved or shared this page's data, written at another page whose"
                " events this story does not follow, and no bio covered its sectors",
                s->op, wtmf_op_kind_name (op->kind));
    return;
  }
  g_autofree char *doubt = wtc_tr_absence_doubt (j, pg);
  if (doubt) {
    wtc_tr_say (s, WTC_RULE_CANNOT_SAY, G_MAXUINT, "the trace cannot say: %s", doubt);
    return;
  }
  wtc_tr_rule_absence (j, c, pg, &f, s);
  if (!f.t0_known && s->op) {
    g_autofree char *old = s->finding;
    s->finding = g_strconcat (old, " (the op's time is unknown: no MARK ties the trace's"
                              " clock to the guest's; the whole trace was read)", NULL);
  }
}
