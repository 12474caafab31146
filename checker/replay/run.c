/* Replaying a log up to a point (replay/run.h). */
#include "replay/run.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "lib/channel-read.h"
#include "lib/util.h"

/* The bar is redrawn at most this often (microseconds). */
#define WTC_PROGRESS_EVERY_US 200000
#define WTC_PROGRESS_WIDTH 40

struct wtc_progress {
  bool on;
  uint64_t total;
  gint64 started;
  gint64 drawn;
};

static void
wtc_progress_draw (struct wtc_progress *p, uint64_t done, bool last)
{
  gint64 now = g_get_monotonic_time ();
  if (!p->on || (!last && now - p->drawn < WTC_PROGRESS_EVERY_US))
    return;
  p->drawn = now;
  double frac = p->total ? (double) done / (double) p->total : 1.0;
  if (frac > 1.0)
    frac = 1.0;
  int filled = (int) (frac * WTC_PROGRESS_WIDTH);
  double secs = (double) (now - p->started) / 1e6;
  char bar[WTC_PROGRESS_WIDTH + 1];
  memset (bar, '#', (size_t) filled);
  memset (bar + filled, '.', (size_t) (WTC_PROGRESS_WIDTH - filled));
  bar[WTC_PROGRESS_WIDTH] = '\0';
  fprintf (stderr, "\rreplay [%s] %3.0f%% %.1f MB/s", bar, frac * 100,
           secs > 0 ? (double) done / secs / 1e6 : 0.0);
  if (last)
    fputc ('\n', stderr);
}

static bool
wtc_stop_after (const struct wtc_stop *stop, const struct wtlog_record *rec,
                const struct wtc_replay_stats *st)
{
  switch (stop->kind) {
  case WTC_STOP_SEQ:
    return rec->seq >= stop->value;
  case WTC_STOP_FLUSH:
    return st->flushes >= stop->value;
  default:
    return false;
  }
}

static void
wtc_stats_note (struct wtc_replay_stats *st, const struct wtlog_record *rec)
{
  st->records++;
  st->last_seq = rec->seq;
  if (rec->flags & WTLOG_F_FAILED)
    return;
  if (rec->type == WTLOG_FLUSH)
    st->flushes++;
  else if (rec->type == WTLOG_WRITE) {
    st->writes++;
    st->bytes += rec->length;
  }
  else if (rec->type == WTLOG_ZERO || rec->type == WTLOG_TRIM)
    st->zeroes++;
}

struct wtc_replay_loop {
  const struct wtc_stop *stop;
  struct wtc_replay_stats *st;
  struct wtc_progress *bar;
};

static bool
wtc_replay_stop_before (void *ctx, const struct wtlog_record *rec)
{
  struct wtc_replay_loop *l = ctx;
  return l->stop->kind == WTC_STOP_TIME && rec->t_end > l->stop->value;
}

static bool
wtc_replay_stop_after (void *ctx, const struct wtlog_record *rec)
{
  struct wtc_replay_loop *l = ctx;
  wtc_stats_note (l->st, rec);
  if ((l->st->records & 63) == 0)
    wtc_progress_draw (l->bar, rec->log_offset, false);
  return wtc_stop_after (l->stop, rec, l->st);
}

bool
wtc_replay_apply (struct wt_image *t, struct wtlog_reader *r,
                  const struct wtc_stop *stop, bool progress,
                  struct wtc_replay_stats *st, GError **error)
{
  struct wtlog_record rec = { 0 };
  char err[1024];
  struct wtc_progress bar = {
    .on = progress, .total = wtlog_reader_status (r)->file_size,
    .started = g_get_monotonic_time (),
  };
  struct wtc_replay_loop loop = { stop, st, &bar };
  struct wt_apply_hooks hooks = {
    wtc_replay_stop_before, wtc_replay_stop_after, &loop,
  };
  bar.drawn = bar.started;
  memset (st, 0, sizeof *st);
  if (stop->kind == WTC_STOP_SEQ && stop->value == 0) {
    st->reached = true;
    return true;
  }
  int status = wt_image_apply_log (t, r, &hooks, &rec, err, sizeof err);
  if (status == -1) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  st->reached = status == 1;
  wtc_progress_draw (&bar, st->reached ? rec.log_offset + rec.size
                     : wtlog_reader_status (r)->file_size, true);
  /* A time past the end of a whole log is its final state. */
  if (stop->kind == WTC_STOP_TIME && !wtlog_reader_status (r)->torn)
    st->reached = true;
  return true;
}

/* Times. */

static bool
wtc_time_unit (const char *unit, double *scale)
{
  static const struct { const char *name; double scale; } units[] = {
    { "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS (units); i++)
    if (strcmp (unit, units[i].name) == 0) {
      *scale = units[i].scale;
      return true;
    }
  return false;
}

bool
wtc_parse_log_time (const char *text, uint64_t *ns, GError **error)
{
  char *end;
  double scale;
  errno = 0;
  double v = g_ascii_strtod (text, &end);
  if (end == text || errno || !isfinite (v) || v < 0 || !wtc_time_unit (end, &scale)
      || v * scale >= 1.8e19) {
    g_set_error (error, WTC_ERROR, 0, "bad time: %s (seconds, or a number with "
                 "the unit s, ms, us or ns)", text);
    return false;
  }
  *ns = (uint64_t) llround (v * scale);
  return true;
}

/* Marks. */

bool
wtc_mark_seq (const char *log, const char *channel, const char *label,
              uint64_t *seq, GPtrArray *warnings, GError **error)
{
  g_autoptr (wtc_channel) ch = wtc_channel_read_placed (log, channel, warnings, error);
  if (!ch)
    return false;
  for (guint i = 0; i < ch->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (!wtc_mark_is (m, label))
      continue;
    if (!m->placed) {
      g_set_error (error, WTC_ERROR, 0, "MARK \"%s\" (message %" PRIu64
                   " at channel byte %" PRIu64 ") has no CHANNEL record in %s",
                   label, m->number, m->offset, log);
      return false;
    }
    *seq = m->log_seq;
    return true;
  }
  g_set_error (error, WTC_ERROR, 0, "no MARK \"%s\" in %s (wtrack replay "
               "--list-points names them)", label, channel);
  return false;
}

/* Points. */

enum wtc_point_kind { WTC_POINT_FLUSH, WTC_POINT_FUA, WTC_POINT_MARK };

struct wtc_point {
  uint64_t seq;
  uint64_t t_end;
  enum wtc_point_kind kind;
  uint64_t flush_number;        /* FLUSH: its K for --to-flush */
  uint16_t type;                /* FUA: the request's type */
  uint64_t offset, length;
  const char *label;            /* MARK: owned by the channel */
};

static int
wtc_point_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_point *x = a, *y = b;
  if (x->seq != y->seq)
    return x->seq < y->seq ? -1 : 1;
  return (int) x->kind - (int) y->kind;
}

static void
wtc_point_note (GArray *points, const struct wtlog_record *rec, uint64_t *flushes)
{
  if (rec->flags & WTLOG_F_FAILED)
    return;
  struct wtc_point p = {
    .seq = rec->seq, .t_end = rec->t_end, .type = rec->type,
    .offset = rec->offset, .length = rec->length,
  };
  if (rec->type == WTLOG_FLUSH) {
    p.kind = WTC_POINT_FLUSH;
    p.flush_number = ++*flushes;
  }
  else if ((rec->flags & WTLOG_F_FUA) && wtc_record_changes_disk (rec))
    p.kind = WTC_POINT_FUA;
  else
    return;
  g_array_append_val (points, p);
}

static bool
wtc_label_unique (const struct wtc_channel *ch, const char *label)
{
  int n = 0;
  for (guint i = 0; i < ch->msgs->len; i++)
    n += wtc_mark_is (&g_array_index (ch->msgs, struct wtc_msg, i), label);
  return n == 1;
}

static void
wtc_mark_points (GArray *points, const struct wtc_channel *ch, uint64_t tie)
{
  for (guint i = 0; i < ch->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK || !m->placed || !m->text)
      continue;
    struct wtc_point p = {
      .seq = m->log_seq, .t_end = m->log_t_end, .kind = WTC_POINT_MARK,
      .label = m->text, .flush_number = wtc_label_unique (ch, m->text) ? 0 : tie,
    };
    g_array_append_val (points, p);
  }
}

static void
wtc_point_print (FILE *out, const struct wtc_point *p, bool notime)
{
  char t[32] = "-", opt[96];
  if (!notime)
    wtc_fmt_secs (p->t_end, t, sizeof t);
  if (p->kind == WTC_POINT_FLUSH) {
    snprintf (opt, sizeof opt, "--to-flush %" PRIu64, p->flush_number);
    fprintf (out, "%10" PRIu64 " %14s %-5s %-24s\n", p->seq, t, "FLUSH", opt);
  }
  else if (p->kind == WTC_POINT_FUA) {
    snprintf (opt, sizeof opt, "--to-seq %" PRIu64, p->seq);
    fprintf (out, "%10" PRIu64 " %14s %-5s %-24s %s %" PRIu64 "+%" PRIu64 "\n",
             p->seq, t, "FUA", opt, wtlog_type_name (p->type), p->offset, p->length);
  }
  else {
    g_autofree char *chomped = g_strchomp (g_strdup (p->label));
    g_autofree char *label = g_strescape (chomped, NULL);
    g_autofree char *quoted = g_shell_quote (label);
    fprintf (out, "%10" PRIu64 " %14s %-5s ", p->seq, t, "MARK");
    if (p->flush_number == 0)
      fprintf (out, "--to-mark %s\n", quoted);
    else
      fprintf (out, "--to-seq %-15" PRIu64 " %s (label not unique)\n", p->seq, quoted);
  }
}

bool
wtc_list_points (const char *log, const char *channel, FILE *out,
                 GPtrArray *warnings, GError **error)
{
  char err[512];
  struct wtlog_header h;
  struct wtlog_record rec;
  uint64_t flushes = 0;
  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  g_autoptr (GArray) points = g_array_new (false, false, sizeof (struct wtc_point));
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_point_note (points, &rec, &flushes);
  const struct wtlog_status *st = wtlog_reader_status (r);
  g_autofree char *torn = st->torn ? g_strdup (st->error) : NULL;
  wtlog_reader_close (r);

  g_autoptr (wtc_channel) ch = NULL;
  if (channel) {
    ch = wtc_channel_read_placed (log, channel, warnings, error);
    if (!ch) {
      if (torn)
        g_prefix_error (error, "%s; ", torn);
      return false;
    }
    wtc_mark_points (points, ch, 1);
  }
  g_array_sort (points, wtc_point_cmp);
  fprintf (out, "# %8s %14s %-5s %s\n", "seq", "time", "point", "replay option");
  for (guint i = 0; i < points->len; i++)
    wtc_point_print (out, &g_array_index (points, struct wtc_point, i),
                     h.flags & WTLOG_H_NOTIME);
  if (torn) {
    g_set_error (error, WTC_ERROR, 0, "%s", torn);
    return false;
  }
  return true;
}
