/* The join (check/trace.h): the trace's clock tied to the log's by the
 * MARKs both hold, then for each bad page the events that concern it, in
 * time order: the ops that wrote it (their MARKs), dirtying, writeback and
 * range ops of its inode, page-cache insertions and deletions, and the
 * bios and completions of its disk sectors. trace-rules.c judges them. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "check/trace-rules.h"

#define WTC_PAGE_SECTORS 8
#define WTC_PAGE_BYTES 4096u

/* other of x on a line through the anchors a, b (x in trace ns). */
static uint64_t
wtc_tr_interpolate (const struct wtc_tr_anchor *a, const struct wtc_tr_anchor *b, uint64_t x)
{
  if (b->trace_ns == a->trace_ns)
    return a->other_ns;
  double f = ((double) x - (double) a->trace_ns) / ((double) b->trace_ns - (double) a->trace_ns);
  double t = (double) a->other_ns + f * ((double) b->other_ns - (double) a->other_ns);
  return t <= 0 ? 0 : t >= 1.8e19 ? UINT64_MAX : (uint64_t) t;
}

/* Through the anchors from one column to the other (by_trace: trace ns to
 * the other clock); outside them both clocks run at the same rate. */
static bool
wtc_tr_convert (const GArray *anchors, uint64_t x, bool by_trace, uint64_t *out)
{
  if (!anchors->len)
    return false;
  guint lo = 0, hi = anchors->len;
  while (lo < hi) {             /* the first anchor at or after x */
    guint mid = lo + (hi - lo) / 2;
    const struct wtc_tr_anchor *m = &g_array_index (anchors, struct wtc_tr_anchor, mid);
    if ((by_trace ? m->trace_ns : m->other_ns) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  guint i = lo == 0 ? 0 : lo == anchors->len ? lo - 1 : lo;
  const struct wtc_tr_anchor *a = &g_array_index (anchors, struct wtc_tr_anchor, i);
  if (lo > 0 && lo < anchors->len) {
    const struct wtc_tr_anchor *p = &g_array_index (anchors, struct wtc_tr_anchor, lo - 1);
    if (by_trace)
      *out = wtc_tr_interpolate (p, a, x);
    else {
      struct wtc_tr_anchor q = { p->other_ns, p->trace_ns }, r = { a->other_ns, a->trace_ns };
      *out = wtc_tr_interpolate (&q, &r, x);
    }
    return true;
  }
  int64_t from = (int64_t) (by_trace ? a->trace_ns : a->other_ns);
  int64_t to = (int64_t) (by_trace ? a->other_ns : a->trace_ns);
  int64_t t = to + ((int64_t) x - from);
  *out = t < 0 ? 0 : (uint64_t) t;
  return true;
}

/* A mono trace's clock is the guest's: without a MARK in the trace, the
 * channel's MARKs still tie it to the log. */
bool
wtc_trace_to_log (const struct wtc_trace_join *j, uint64_t trace_ns, uint64_t *log_ns)
{
  bool approx;
  if (wtc_tr_convert (j->to_log, trace_ns, true, log_ns))
    return true;
  return j->trace->clock_mono && wtc_guest_to_log (j->check, trace_ns, log_ns, &approx);
}

bool
wtc_trace_clocks_tied (const struct wtc_trace_join *j)
{
  return j->to_log->len > 0 || (j->trace->clock_mono && j->check->marks->len > 0);
}

bool
wtc_trace_from_guest (const struct wtc_trace_join *j, uint64_t guest_ns, uint64_t *trace_ns)
{
  if (j->trace->clock_mono) {
    *trace_ns = guest_ns;
    return true;
  }
  return wtc_tr_convert (j->to_guest, guest_ns, false, trace_ns);
}

/* Keeps an anchor only when both clocks rise past the last one kept (a
 * hostile or reordered MARK cannot fold the line back). */
static void
wtc_tr_anchor_add (GArray *anchors, uint64_t trace_ns, uint64_t other_ns)
{
  if (anchors->len) {
    const struct wtc_tr_anchor *last =
      &g_array_index (anchors, struct wtc_tr_anchor, anchors->len - 1);
    if (trace_ns <= last->trace_ns || other_ns < last->other_ns)
      return;
  }
  struct wtc_tr_anchor a = { trace_ns, other_ns };
  g_array_append_val (anchors, a);
}

/* Each trace MARK tied to the channel's next unused MARK of the same text. */
static void
wtc_tr_anchors (struct wtc_trace_join *j, const struct wtc_check *c)
{
  g_autoptr (GHashTable) by_text = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                          (GDestroyNotify) g_queue_free);
  for (guint i = 0; c->channel && i < c->channel->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (c->channel->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK)
      continue;
    char *label = wtc_mark_label (m);
    GQueue *q = g_hash_table_lookup (by_text, label);
    if (!q)
      g_hash_table_insert (by_text, g_strdup (label), q = g_queue_new ());
    g_queue_push_tail (q, (gpointer) m);
    g_free (label);
  }
  const GArray *ev = j->trace->events;
  for (guint i = 0; i < ev->len; i++) {
    const struct wtc_tr_event *e = &g_array_index (ev, struct wtc_tr_event, i);
    if (e->kind != WTC_TR_MARK)
      continue;
    j->marks++;
    GQueue *q = g_hash_table_lookup (by_text, e->fields);
    const struct wtc_msg *m = q ? g_queue_pop_head (q) : NULL;
    if (!m)
      continue;
    j->marks_matched++;
    wtc_tr_anchor_add (j->to_guest, e->ts_ns, m->guest_ns);
    if (m->placed)
      wtc_tr_anchor_add (j->to_log, e->ts_ns, m->log_t_start);
  }
}

/* The inode of file fi: the manifest's, else the trace header's. */
static uint64_t
wtc_tr_file_ino (const struct wtc_check *c, const struct wtc_trace *t, uint32_t fi)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  return f->inode ? f->inode : wtc_trace_file_ino (t, f->path);
}

/* "op N ..." MARK text: N, or 0. */
static uint32_t
wtc_tr_mark_op (const char *text)
{
  if (strncmp (text, "op ", 3) != 0 || text[3] < '1' || text[3] > '9')
    return 0;
  char *end;
  unsigned long n = strtoul (text + 3, &end, 10);
  return (*end == ' ' || *end == '\0') && n <= UINT32_MAX ? (uint32_t) n : 0;
}

static bool
wtc_tr_overlaps (uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
  return a0 <= b1 && b0 <= a1;
}

/* Whether event e concerns page pg (its inode's bytes, its disk sectors). */
static bool
wtc_tr_concerns (const struct wtc_check *c, const struct wtc_trace *t,
                 const struct wtc_tr_page *pg, const struct wtc_tr_event *e)
{
  uint64_t p0 = pg->page * WTC_PAGE_BYTES, p1 = p0 + WTC_PAGE_BYTES - 1;
  switch (e->kind) {
  case WTC_TR_MARK: {
    uint32_t op = wtc_tr_mark_op (e->fields);
    if (!op || op > c->mf->nops)
      return false;
    const struct wtmf_op *o = &c->mf->ops[op - 1];
    return o->file_id == c->mf->files[pg->file].id && o->length
      && wtc_tr_overlaps (o->offset, o->offset + o->length - 1, p0, p1);
  }
  case WTC_TR_BIO:
  case WTC_TR_RQ_DONE:
    return pg->has_disk && t->has_disk && e->dev == t->disk_dev
      && wtc_tr_overlaps (e->first, e->last, pg->disk_first, pg->disk_last);
  case WTC_TR_OTHER:
    return false;
  case WTC_TR_RANGE_OP:         /* on the page, or ending in the page before it */
    return pg->ino && e->has_ino && e->ino == pg->ino
      && (!e->has_range || wtc_tr_overlaps (e->first, e->last,
                                            p0 >= WTC_PAGE_BYTES ? p0 - WTC_PAGE_BYTES : 0, p1));
  default:
    return pg->ino && e->has_ino && e->ino == pg->ino
      && (!e->has_range || wtc_tr_overlaps (e->first, e->last, p0, p1));
  }
}

/* The bad page whose first bad sector is c->bad[first]: its file, page,
 * bad disk sectors and last op; returns the next page's first. */
static guint
wtc_tr_page_of (const struct wtc_check *c, const struct wtc_trace *t, guint first,
                struct wtc_tr_page *pg)
{
  const struct wtc_bad *fb = &g_array_index (c->bad, struct wtc_bad, first);
  *pg = (struct wtc_tr_page) { .file = fb->file, .first_bad = first,
                               .page = fb->file_sector / WTC_PAGE_SECTORS };
  guint i = first;
  for (; i < c->bad->len; i++) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    if (b->file != fb->file || b->file_sector / WTC_PAGE_SECTORS != pg->page)
      break;
    uint32_t op = c->mf->files[b->file].ops[b->file_sector];
    pg->op = MAX (pg->op, op);
    if (b->disk_sector == WTC_NO_SECTOR)
      continue;
    if (!pg->has_disk || b->disk_sector < pg->disk_first)
      pg->disk_first = b->disk_sector;
    if (!pg->has_disk || b->disk_sector > pg->disk_last)
      pg->disk_last = b->disk_sector;
    pg->has_disk = true;
  }
  pg->ino = wtc_tr_file_ino (c, t, pg->file);
  pg->bad_end = i;
  return i;
}

static gint
wtc_tr_by_time (gconstpointer a, gconstpointer b, gpointer events)
{
  const GArray *ev = events;
  guint x = *(const guint *) a, y = *(const guint *) b;
  uint64_t tx = g_array_index (ev, struct wtc_tr_event, x).ts_ns;
  uint64_t ty = g_array_index (ev, struct wtc_tr_event, y).ts_ns;
  return tx < ty ? -1 : tx > ty ? 1 : x < y ? -1 : x > y;
}

static void
wtc_tr_story (struct wtc_trace_join *j, const struct wtc_check *c,
              const struct wtc_tr_page *pg)
{
  const GArray *ev = j->trace->events;
  struct wtc_story s = {
    .file = pg->file, .page = pg->page, .first_bad = pg->first_bad, .ino = pg->ino,
    .op = pg->op, .evidence = G_MAXUINT, .events = g_array_new (FALSE, FALSE, sizeof (guint)),
  };
  for (guint k = 0; k < j->candidates->len; k++) {
    guint i = g_array_index (j->candidates, guint, k);
    if (!wtc_tr_concerns (c, j->trace, pg, &g_array_index (ev, struct wtc_tr_event, i)))
      continue;
    if (s.events->len < WTC_STORY_MAX_EVENTS)
      g_array_append_val (s.events, i);
    else
      s.events_more++;
  }
  g_array_sort_with_data (s.events, wtc_tr_by_time, (gpointer) ev);
  wtc_tr_judge (j, c, pg, &s);
  g_array_append_val (j->stories, s);
}

/* The events that can concern a bad page, once: a page is then compared
 * with these only (and with the write bios, for the nearest one). */
static void
wtc_tr_candidates (struct wtc_trace_join *j, const struct wtc_check *c)
{
  g_autoptr (GHashTable) inodes = g_hash_table_new (g_int64_hash, g_int64_equal);
  uint64_t *inos = g_new0 (uint64_t, c->mf ? c->mf->nfiles : 0);
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++)
    if (c->files[fi].bad && (inos[fi] = wtc_tr_file_ino (c, j->trace, fi)))
      g_hash_table_add (inodes, &inos[fi]);
  const struct wtc_trace *t = j->trace;
  for (guint i = 0; i < t->events->len; i++) {
    const struct wtc_tr_event *e = &g_array_index (t->events, struct wtc_tr_event, i);
    bool block = (e->kind == WTC_TR_BIO || e->kind == WTC_TR_RQ_DONE) && t->has_disk
      && e->dev == t->disk_dev;
    if (block && e->kind == WTC_TR_BIO && e->write)
      g_array_append_val (j->write_bios, i);
    if (block || (e->kind == WTC_TR_MARK && wtc_tr_mark_op (e->fields))
        || (e->has_ino && g_hash_table_contains (inodes, &e->ino)))
      g_array_append_val (j->candidates, i);
  }
  g_free (inos);
  uint64_t per_page = j->candidates->len + j->write_bios->len + 1;
  j->max_stories = (guint) MIN ((uint64_t) WTC_MAX_STORIES, MAX (10, WTC_TRACE_MAX_WORK / per_page));
}

struct wtc_trace_join *
wtc_trace_join (const struct wtc_check *c, struct wtc_trace *t)
{
  struct wtc_trace_join *j = g_new0 (struct wtc_trace_join, 1);
  j->trace = t;
  j->check = c;
  j->to_log = g_array_new (FALSE, FALSE, sizeof (struct wtc_tr_anchor));
  j->to_guest = g_array_new (FALSE, FALSE, sizeof (struct wtc_tr_anchor));
  j->stories = g_array_new (FALSE, FALSE, sizeof (struct wtc_story));
  j->candidates = g_array_new (FALSE, FALSE, sizeof (guint));
  j->write_bios = g_array_new (FALSE, FALSE, sizeof (guint));
  wtc_tr_anchors (j, c);
  wtc_tr_candidates (j, c);
  for (guint i = 0; c->mf && i < c->bad->len;) {
    struct wtc_tr_page pg;
    i = wtc_tr_page_of (c, t, i, &pg);
    if (j->stories->len < j->max_stories)
      wtc_tr_story (j, c, &pg);
    else
      j->stories_more++;
  }
  return j;
}

void
wtc_trace_join_free (struct wtc_trace_join *j)
{
  if (!j)
    return;
  for (guint i = 0; i < j->stories->len; i++) {
    struct wtc_story *s = &g_array_index (j->stories, struct wtc_story, i);
    g_free (s->finding);
    g_array_unref (s->events);
  }
  g_array_unref (j->stories);
  g_array_unref (j->candidates);
  g_array_unref (j->write_bios);
  g_array_unref (j->to_log);
  g_array_unref (j->to_guest);
  wtc_trace_free (j->trace);
  g_free (j);
}
