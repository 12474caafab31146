/* The kernel trace's part of the reports (check/trace.h): in report.txt a
 * few lines a bad page (the finding, then its first events), in report.json
 * all of it (doc/report-json.md "trace"). A check without a trace prints
 * nothing here, so its reports are those of a check before traces. */
#include <inttypes.h>
#include <string.h>

#include "check/check.h"
#include "check/report-trace.h"
#include "check/trace-rules.h"
#include "lib/json.h"

#define WTC_TEXT_STORY_EVENTS 8         /* events a page shows in report.txt */

static const struct wtc_tr_event *
wtc_story_event (const struct wtc_trace_join *j, const struct wtc_story *s, guint k)
{
  return &g_array_index (j->trace->events, struct wtc_tr_event,
                         g_array_index (s->events, guint, k));
}

/* The trace's own state: what it holds, what it lost, how the clocks tie. */
static void
wtc_text_trace_head (const struct wtc_trace_join *j, FILE *out)
{
  const struct wtc_trace *t = j->trace;
  g_autofree char *path = wtc_text_safe (t->path);
  g_autofree char *kernel = wtc_text_safe (t->kernel ? t->kernel : "?");
  fprintf (out, "kernel trace %s (kernel %s): %u events, %" PRIu64 " of %" PRIu64
           " MARKs found in the channel%s\n", path, kernel, t->events->len, j->marks_matched,
           j->marks, wtc_trace_clocks_tied (j) ? "" : ": the trace's clock is not tied to the log's");
  if (t->lost_total)
    fprintf (out, "!! the trace lost %" PRIu64 " events: findings that rest on an absent event cannot say\n",
             t->lost_total);
  if (t->missing->len) {
    fprintf (out, "!! events this kernel lacks:");
    for (guint i = 0; i < t->missing->len; i++) {
      g_autofree char *e = wtc_text_safe (g_ptr_array_index (t->missing, i));
      fprintf (out, " %s", e);
    }
    fputc ('\n', out);
  }
  if (t->truncated || t->over_limit)
    fprintf (out, "!! the trace was cut to fit its bound (%" PRIu64 " bytes, %" PRIu64
             " events past the checker's limit)\n", t->truncated_bytes, t->over_limit);
  if (t->malformed)
    fprintf (out, "!! %" PRIu64 " lines of the trace are not events, skipped (the first: line %"
             PRIu32 ")\n", t->malformed, t->first_malformed);
}

static void
wtc_text_story (const struct wtc_check *c, const struct wtc_trace_join *j,
                const struct wtc_story *s, FILE *out)
{
  g_autofree char *path = wtc_text_safe (c->mf->files[s->file].path);
  g_autofree char *finding = wtc_text_safe (s->finding);
  fprintf (out, "  page %" PRIu64 " of %s: %s\n", s->page, path, finding);
  /* From the event before the last op's time: what led to the finding. */
  guint from = 0;
  while (s->op_ns && from < s->events->len && wtc_story_event (j, s, from)->ts_ns < s->op_ns)
    from++;
  from = from ? from - 1 : 0;
  if (s->evidence < from)
    from = s->evidence;
  if (from)
    fprintf (out, "    ... %u earlier events\n", from);
  guint shown = MIN (s->events->len - from, WTC_TEXT_STORY_EVENTS);
  for (guint k = from; k < from + shown; k++) {
    const struct wtc_tr_event *e = wtc_story_event (j, s, k);
    char when[48];
    g_autofree char *fields = wtc_text_safe (e->fields);
    fprintf (out, "    %s%s %s: %s\n", k == s->evidence ? "> " : "",
             wtc_tr_fmt_time (j, e->ts_ns, when, sizeof when), e->name, fields);
  }
  guint more = s->events->len - from - shown + s->events_more;
  if (more)
    fprintf (out, "    ... %u more events (the JSON report has %u)\n", more,
             s->events->len - from - shown);
}

void
wtc_report_text_trace (const struct wtc_check *c, int max_pages, FILE *out)
{
  const struct wtc_trace_join *j = c->trace;
  if (!j)
    return;
  fputc ('\n', out);
  wtc_text_trace_head (j, out);
  if (j->stories->len)
    fprintf (out, "the kernel's account of each bad page (> the event the finding rests on):\n");
  for (guint i = 0; i < j->stories->len && (int) i < max_pages; i++)
    wtc_text_story (c, j, &g_array_index (j->stories, struct wtc_story, i), out);
  guint more = j->stories->len > (guint) max_pages ? j->stories->len - (guint) max_pages : 0;
  if (more + j->stories_more)
    fprintf (out, "  ... %u more pages (%u in the JSON report; %u past the checker's limit of %u)\n",
             more + j->stories_more, more, j->stories_more, j->max_stories);
}

static void
wtc_json_trace_head (const struct wtc_trace_join *j, JsonBuilder *b)
{
  const struct wtc_trace *t = j->trace;
  wtc_jb_object (b, "trace");
  wtc_jb_str (b, "file", t->path);
  wtc_jb_str (b, "kernel", t->kernel);
  if (t->has_disk) {
    g_autofree char *disk = g_strdup_printf ("%u,%u", t->disk_dev >> 20, t->disk_dev & 0xfffff);
    wtc_jb_str (b, "disk", disk);
  } else
    wtc_jb_null (b, "disk");
  wtc_jb_strings (b, "enabled", t->enabled);
  wtc_jb_strings (b, "missing", t->missing);
  wtc_jb_u64 (b, "lost_events", t->lost_total);
  wtc_jb_array (b, "lost");
  for (guint i = 0; i < t->lost->len; i++) {
    const struct wtc_tr_lost *l = &g_array_index (t->lost, struct wtc_tr_lost, i);
    wtc_jb_object (b, NULL);
    wtc_jb_u64 (b, "cpu", l->cpu);
    wtc_jb_u64 (b, "events", l->events);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  wtc_jb_bool (b, "truncated", t->truncated || t->over_limit);
  wtc_jb_u64 (b, "events", t->events->len);
  wtc_jb_u64 (b, "events_over_limit", t->over_limit);
  wtc_jb_u64 (b, "malformed_lines", t->malformed);
  wtc_jb_u64 (b, "first_malformed_line", t->first_malformed);
  wtc_jb_u64 (b, "marks", j->marks);
  wtc_jb_u64 (b, "marks_matched", j->marks_matched);
  wtc_jb_bool (b, "clocks_tied", wtc_trace_clocks_tied (j));
  wtc_jb_u64 (b, "pages_left_out", j->stories_more);
  json_builder_end_object (b);
}

static void
wtc_json_story_event (const struct wtc_trace_join *j, const struct wtc_tr_event *e,
                      bool evidence, JsonBuilder *b)
{
  uint64_t log_ns;
  wtc_jb_object (b, NULL);
  wtc_jb_u64 (b, "line", e->line);
  wtc_jb_u64 (b, "trace_ns", e->ts_ns);
  if (wtc_trace_to_log (j, e->ts_ns, &log_ns))
    wtc_jb_u64 (b, "log_ns", log_ns);
  else
    wtc_jb_null (b, "log_ns");
  wtc_jb_u64 (b, "cpu", e->cpu);
  wtc_jb_str (b, "event", e->name);
  wtc_jb_str (b, "kind", wtc_tr_kind_name (e->kind));
  wtc_jb_str (b, "fields", e->fields);
  wtc_jb_bool (b, "evidence", evidence);
  json_builder_end_object (b);
}

static void
wtc_json_story (const struct wtc_check *c, const struct wtc_trace_join *j,
                const struct wtc_story *s, JsonBuilder *b)
{
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "path", c->mf->files[s->file].path);
  wtc_jb_u64 (b, "page", s->page);
  wtc_jb_u64 (b, "inode", s->ino);
  wtc_jb_u64 (b, "op", s->op);
  wtc_jb_str (b, "rule", wtc_tr_rule_name (s->rule));
  wtc_jb_str (b, "finding", s->finding);
  wtc_jb_array (b, "events");
  for (guint k = 0; k < s->events->len; k++)
    wtc_json_story_event (j, wtc_story_event (j, s, k), k == s->evidence, b);
  json_builder_end_array (b);
  wtc_jb_u64 (b, "events_left_out", s->events_more);
  json_builder_end_object (b);
}

void
wtc_report_json_trace (const struct wtc_check *c, struct wtc_json_out *o)
{
  const struct wtc_trace_join *j = c->trace;
  if (!j)
    return;
  {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    wtc_jb_object (b, NULL);
    wtc_json_trace_head (j, b);
    json_builder_end_object (b);
    wtc_json_out_members (o, b);
  }
  wtc_json_out_array_begin (o, "trace_pages");
  for (guint i = 0; i < j->stories->len; i++) {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    wtc_json_story (c, j, &g_array_index (j->stories, struct wtc_story, i), b);
    wtc_json_out_item (o, b);
  }
  wtc_json_out_array_end (o);
}

#define WTC_HTML_MAX_STORIES 200
#define WTC_HTML_STORY_EVENTS 40

/* One event: [x on the timeline or null, kind, name, fields, evidence]. */
static void
wtc_html_story_event (const struct wtc_trace_join *j, const struct wtc_tr_event *e,
                      bool x_is_seq, bool evidence, JsonBuilder *b)
{
  uint64_t log_ns;
  wtc_jb_array (b, NULL);
  if (!x_is_seq && wtc_trace_to_log (j, e->ts_ns, &log_ns))
    wtc_jb_u64 (b, NULL, log_ns);
  else
    wtc_jb_null (b, NULL);
  wtc_jb_str (b, NULL, wtc_tr_kind_name (e->kind));
  wtc_jb_str (b, NULL, e->name);
  wtc_jb_str (b, NULL, e->fields);
  wtc_jb_bool (b, NULL, evidence);
  json_builder_end_array (b);
}

static void
wtc_html_story (const struct wtc_check *c, const struct wtc_trace_join *j,
                const struct wtc_story *s, bool x_is_seq, JsonBuilder *b)
{
  const struct wtc_bad *fb = &g_array_index (c->bad, struct wtc_bad, s->first_bad);
  wtc_jb_object (b, NULL);
  wtc_jb_u64 (b, "f", s->file);
  wtc_jb_u64 (b, "page", s->page);
  wtc_jb_str (b, "rule", wtc_tr_rule_name (s->rule));
  wtc_jb_str (b, "finding", s->finding);
  if (fb->disk_sector != WTC_NO_SECTOR)
    wtc_jb_u64 (b, "ds", fb->disk_sector);
  else
    wtc_jb_null (b, "ds");
  wtc_jb_array (b, "ev");
  guint shown = MIN (s->events->len, WTC_HTML_STORY_EVENTS);
  for (guint k = 0; k < shown; k++)
    wtc_html_story_event (j, wtc_story_event (j, s, k), x_is_seq, k == s->evidence, b);
  json_builder_end_array (b);
  wtc_jb_u64 (b, "more", s->events->len - shown + s->events_more);
  json_builder_end_object (b);
}

void
wtc_report_html_trace (const struct wtc_check *c, bool x_is_seq, JsonBuilder *b)
{
  const struct wtc_trace_join *j = c->trace;
  const struct wtc_trace *t = j->trace;
  wtc_jb_object (b, "trace");
  wtc_jb_str (b, "kernel", t->kernel);
  wtc_jb_u64 (b, "events", t->events->len);
  wtc_jb_u64 (b, "lost_events", t->lost_total);
  wtc_jb_u64 (b, "malformed_lines", t->malformed);
  wtc_jb_u64 (b, "marks", j->marks);
  wtc_jb_u64 (b, "marks_matched", j->marks_matched);
  wtc_jb_bool (b, "clocks_tied", !x_is_seq && wtc_trace_clocks_tied (j));
  wtc_jb_u64 (b, "pages_total", j->stories->len + j->stories_more);
  wtc_jb_array (b, "pages");
  for (guint i = 0; i < j->stories->len && i < WTC_HTML_MAX_STORIES; i++)
    wtc_html_story (c, j, &g_array_index (j->stories, struct wtc_story, i), x_is_seq, b);
  json_builder_end_array (b);
  json_builder_end_object (b);
}
