/* wtrack dump LOG --trace FILE: the log as Chrome trace-event JSON, for
 * Perfetto (ui.perfetto.dev) and chrome://tracing. One lane (thread) per
 * NBD connection, one complete event per record, the guest's MARKs as
 * global instant events. Streams: memory does not grow with the log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "channel.h"
#include "dump/trace.h"
#include "lib/channel-read.h"
#include "lib/util.h"
#include "wtlog.h"

/* Lane of the MARKs (connections count from 1; 0 is the final CLOSE's). */
#define WTC_TRACE_MARK_TID 1000000

struct wtc_trace {
  FILE *out;
  bool notime;                  /* imported log: the seq stands for the time */
  bool first;
  GHashTable *lanes;            /* connections named so far */
};

static void
wtc_trace_sep (struct wtc_trace *t)
{
  fputs (t->first ? "\n" : ",\n", t->out);
  t->first = false;
}

/* Microseconds, as the format counts them. */
static void
wtc_trace_ts (struct wtc_trace *t, uint64_t ns, uint64_t seq)
{
  if (t->notime)
    fprintf (t->out, "%" PRIu64, seq);
  else
    fprintf (t->out, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

static void
wtc_trace_lane (struct wtc_trace *t, uint32_t tid, const char *name)
{
  if (g_hash_table_contains (t->lanes, GUINT_TO_POINTER (tid + 1)))
    return;
  g_hash_table_add (t->lanes, GUINT_TO_POINTER (tid + 1));
  wtc_trace_sep (t);
  fprintf (t->out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%" PRIu32
           ",\"args\":{\"name\":\"%s\"}}", tid, name);
}

static void
wtc_trace_record (struct wtc_trace *t, const struct wtlog_record *rec)
{
  char lane[32], fl[64], errbuf[32];
  snprintf (lane, sizeof lane, "connection %" PRIu32, rec->conn);
  wtc_trace_lane (t, rec->conn, lane);
  wtc_trace_sep (t);
  fprintf (t->out, "{\"name\":\"%s%s%s\",\"cat\":\"request\",\"ph\":\"X\",\"pid\":1,\"tid\":%" PRIu32
           ",\"ts\":", wtlog_type_name (rec->type), (rec->flags & WTLOG_F_FUA) ? " FUA" : "",
           (rec->flags & WTLOG_F_FAILED) ? " FAILED" : "", rec->conn);
  wtc_trace_ts (t, rec->t_start, rec->seq);
  fputs (",\"dur\":", t->out);
  wtc_trace_ts (t, t->notime ? 0 : rec->t_end - rec->t_start, t->notime ? 1 : 0);
  fprintf (t->out, ",\"args\":{\"seq\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"length\":%" PRIu64
           ",\"flags\":\"%s\"", rec->seq, rec->offset, rec->length,
           wtc_fmt_record_flags (rec->flags, fl, sizeof fl));
  if (rec->type == WTLOG_WRITE || rec->type == WTLOG_ZERO || rec->type == WTLOG_TRIM)
    fprintf (t->out, ",\"first_sector\":%" PRIu64 ",\"sectors\":%" PRIu64,
             rec->offset / 512, wtlog_sectors_touched (rec->offset, rec->length));
  if (rec->flags & WTLOG_F_FAILED)
    fprintf (t->out, ",\"err\":\"%s\"", wtc_errno_name (rec->err, errbuf, sizeof errbuf));
  fputs ("}}", t->out);
}

/* The guest's MARKs, placed at the CHANNEL records that carried them. */
static void
wtc_trace_marks (struct wtc_trace *t, const char *channel, const GArray *chanrecs,
                 GPtrArray *warnings)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_channel) ch = wtc_channel_read (channel, &error);
  if (!ch) {
    g_ptr_array_add (warnings, g_strdup_printf ("no MARKs in the trace: %s", error->message));
    return;
  }
  wtc_channel_place (ch, chanrecs);
  for (guint i = 0; i < ch->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK || !m->placed)
      continue;
    wtc_trace_lane (t, WTC_TRACE_MARK_TID, "MARKs (guest)");
    wtc_trace_sep (t);
    fputs ("{\"name\":", t->out);
    g_autofree char *name = g_strconcat ("MARK ", m->text ? m->text : "", NULL);
    wtc_json_str (t->out, name);
    fprintf (t->out, ",\"cat\":\"mark\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":%d,\"ts\":",
             WTC_TRACE_MARK_TID);
    wtc_trace_ts (t, m->log_t_start, m->log_seq);
    fprintf (t->out, ",\"args\":{\"seq\":%" PRIu64 ",\"message\":%" PRIu64 "}}", m->log_seq, m->number);
  }
  if (ch->error)
    g_ptr_array_add (warnings, g_strdup_printf ("%s (later MARKs are not in the trace)",
                                                ch->error));
}

static void
wtc_trace_head (struct wtc_trace *t, const char *log, const struct wtlog_header *h)
{
  char when[64];
  fputs ("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"log\":", t->out);
  wtc_json_str (t->out, log);
  fprintf (t->out, ",\"start\":\"%s\",\"disk_size\":%" PRIu64 ",\"time\":\"%s\"},\n\"traceEvents\":[",
           wtc_fmt_iso (h->start_realtime_ns, when, sizeof when), h->disk_size,
           t->notime ? "seq (the log has no times)" : "ns since the log's start");
  wtc_trace_sep (t);
  fputs ("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":", t->out);
  g_autofree char *name = g_strconcat ("wtrack ", log, NULL);
  wtc_json_str (t->out, name);
  fputs ("}}", t->out);
}

bool
wtc_dump_trace (const char *log, const char *channel, const char *path,
                GPtrArray *warnings, GError **error)
{
  char err[512];
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  bool to_stdout = strcmp (path, "-") == 0;
  struct wtc_trace t = {
    .out = to_stdout ? stdout : fopen (path, "w"),
    .notime = (h.flags & WTLOG_H_NOTIME) != 0, .first = true,
    .lanes = g_hash_table_new (g_direct_hash, g_direct_equal),
  };
  if (!t.out) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    wtlog_reader_close (r);
    g_hash_table_unref (t.lanes);
    return false;
  }
  g_autoptr (GArray) chanrecs = g_array_new (FALSE, FALSE, sizeof (struct wtc_chanrec));
  wtc_trace_head (&t, log, &h);
  while (wtlog_reader_next (r, &rec) == 0) {
    wtc_trace_record (&t, &rec);
    wtc_chanrec_note (chanrecs, &rec);
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  g_autofree char *torn = st->torn
    ? g_strdup_printf ("%s (the trace ends at seq %" PRIu64 ")", st->error, st->last_seq)
    : NULL;
  wtlog_reader_close (r);
  if (channel)
    wtc_trace_marks (&t, channel, chanrecs, warnings);
  fputs ("\n]}\n", t.out);
  g_hash_table_unref (t.lanes);
  /* stdout is checked once, at exit (wtc_cli_close_stdout). */
  if (!to_stdout && (ferror (t.out) | (fclose (t.out) != 0))) {
    g_set_error (error, WTC_ERROR, 0, "write: %s: %s", path, g_strerror (errno));
    return false;
  }
  if (torn) {
    g_set_error (error, WTC_ERROR, 0, "%s", torn);
    return false;
  }
  return true;
}
