/* wtrack replay: the disk as the log says it was, at the end or at a chosen
 * point (a seq, a flush, a MARK, a time), written from base.img. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "commands.h"
#include "lib/cli.h"
#include "lib/target.h"
#include "lib/util.h"
#include "replay/run.h"
#include "wtlog.h"

/* Below this much log the progress bar is not worth drawing. */
#define WTC_PROGRESS_MIN_LOG (64u << 20)

struct wtc_replay_opts {
  char *base;
  char *final_image;
  char *out;
  char *channel;
  gint64 to_seq;
  gint64 to_flush;
  char *to_mark;
  char *to_time;
  gboolean list_points;
  gboolean verbose;
  char **args;
};

static void
wtc_replay_opts_free (struct wtc_replay_opts *o)
{
  g_free (o->base);
  g_free (o->final_image);
  g_free (o->out);
  g_free (o->channel);
  g_free (o->to_mark);
  g_free (o->to_time);
  g_strfreev (o->args);
}

static bool
wtc_replay_parse (int argc, char **argv, struct wtc_replay_opts *o)
{
  o->to_seq = o->to_flush = -1;
  GOptionEntry entries[] = {
    { "base", 'b', 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run (base.img)", "FILE" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &o->out, "the image to write (a file, or a block device)", "IMAGE" },
    { "final-image", 0, 0, G_OPTION_ARG_FILENAME, &o->final_image, "the run's image after the run, which holds the bytes of IN_IMAGE writes (default: disk.img beside LOG, when it exists)", "FILE" },
    { "to-seq", 0, 0, G_OPTION_ARG_INT64, &o->to_seq, "stop after the record with this seq", "N" },
    { "to-flush", 0, 0, G_OPTION_ARG_INT64, &o->to_flush, "stop after the K-th successful FLUSH", "K" },
    { "to-mark", 0, 0, G_OPTION_ARG_STRING, &o->to_mark, "stop after the CHANNEL record that carried the guest's MARK LABEL (needs --channel)", "LABEL" },
    { "to-time", 0, 0, G_OPTION_ARG_STRING, &o->to_time, "stop before the first record completed after T on the log's clock (seconds, or with s, ms, us, ns)", "T" },
    { "channel", 'c', 0, G_OPTION_ARG_FILENAME, &o->channel, "the guest's channel (channel.bin), for --to-mark and the MARKs of --list-points", "FILE" },
    { "list-points", 'l', 0, G_OPTION_ARG_NONE, &o->list_points, "print every FLUSH, FUA write and MARK with its seq and time; write no image", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "say what was applied", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("LOG --base BASE --out IMAGE");
  g_option_context_set_summary (ctx,
    "Apply the WRITE, ZERO and TRIM records of a write log recorded with\n"
    "data=on, in log order, to a copy of BASE, and write the result to IMAGE\n"
    "(sparse: zeroed and trimmed ranges become holes). FAILED requests, FLUSH,\n"
    "CHANNEL, OPEN, CLOSE and SAVED records leave the disk alone. At most one\n"
    "--to-* option picks the point to stop at; without one the whole log is\n"
    "applied.\n"
    "\n"
    "A WRITE flagged IN_IMAGE (data=on wrote its bytes into the run's image\n"
    "only) is written from the SAVED records after it and the run's final\n"
    "image (--final-image, default disk.img beside LOG), checked against its\n"
    "hashes. When BASE is that final image (recovering a killed run onto its\n"
    "own image), APPLIED records, IN_IMAGE ones included, are skipped: the\n"
    "image holds them.\n"
    "\n"
    "Exit status: 0 the image was written up to the point asked for; 2 an\n"
    "error, or a torn log that ended before that point (what came before the\n"
    "tear is applied).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return false;
  if (!o->args || !o->args[0] || o->args[1]) {
    wtc_cli_usage ("expected one LOG");
    return false;
  }
  int stops = (o->to_seq >= 0) + (o->to_flush >= 0) + !!o->to_mark + !!o->to_time;
  if (stops > 1) {
    wtc_cli_usage ("--to-seq, --to-flush, --to-mark and --to-time "
                   "exclude one another");
    return false;
  }
  if (o->list_points)
    return true;
  if (!o->base || !o->out) {
    wtc_cli_usage ("--base and --out are required");
    return false;
  }
  if (o->to_mark && !o->channel) {
    wtc_cli_usage ("--to-mark needs --channel, the run's channel.bin");
    return false;
  }
  return true;
}

static bool
wtc_replay_stop_from_opts (const struct wtc_replay_opts *o, const char *log,
                           const struct wtlog_header *h, struct wtc_stop *stop,
                           GError **error)
{
  *stop = (struct wtc_stop) { WTC_STOP_END, 0 };
  if (o->to_seq >= 0)
    *stop = (struct wtc_stop) { WTC_STOP_SEQ, (uint64_t) o->to_seq };
  else if (o->to_flush >= 0)
    *stop = (struct wtc_stop) { WTC_STOP_FLUSH, (uint64_t) o->to_flush };
  else if (o->to_mark) {
    g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
    stop->kind = WTC_STOP_SEQ;
    bool found = wtc_mark_seq (log, o->channel, o->to_mark, &stop->value, warnings, error);
    wtc_cli_warnings (warnings);
    return found;
  }
  else if (o->to_time) {
    if (h->flags & WTLOG_H_NOTIME) {
      g_set_error (error, WTC_ERROR, 0, "%s has no timestamps (NOTIME: imported): "
                   "--to-time cannot be used, --to-seq can", log);
      return false;
    }
    stop->kind = WTC_STOP_TIME;
    return wtc_parse_log_time (o->to_time, &stop->value, error);
  }
  return true;
}

static const char *
wtc_stop_describe (const struct wtc_stop *stop, char *buf, size_t len)
{
  switch (stop->kind) {
  case WTC_STOP_SEQ: snprintf (buf, len, "seq %" PRIu64, stop->value); break;
  case WTC_STOP_FLUSH: snprintf (buf, len, "flush %" PRIu64, stop->value); break;
  case WTC_STOP_TIME: snprintf (buf, len, "time %" PRIu64 " ns", stop->value); break;
  default: snprintf (buf, len, "the end"); break;
  }
  return buf;
}

/* The exit status once the records are applied: a torn log, or a clean log
 * that ended before the point asked for, is an error. */
static int
wtc_replay_verdict (const char *log, const struct wtlog_status *ls,
                    const struct wtc_stop *stop, const struct wtc_replay_stats *st)
{
  char what[64];
  if (st->reached || stop->kind == WTC_STOP_END) {
    if (!st->reached && ls->torn) {
      wtc_cli_error ("%s", ls->error);
      wtc_cli_error ("applied the records up to seq %" PRIu64
                  " (the last good one); the rest of the log is lost", st->last_seq);
      return WT_EXIT_ERROR;
    }
    return WT_EXIT_OK;
  }
  if (ls->torn)
    wtc_cli_error ("%s", ls->error);
  wtc_cli_error ("%s: the log %s at seq %" PRIu64 " before %s; the "
              "image holds the state at seq %" PRIu64 "", log,
              ls->torn ? "breaks" : "ends", st->last_seq,
              wtc_stop_describe (stop, what, sizeof what), st->last_seq);
  return WT_EXIT_ERROR;
}

static void
wtc_replay_say (const struct wtc_replay_stats *st, gint64 usecs)
{
  char bytes[32];
  double secs = (double) usecs / 1e6;
  wtc_cli_error ("applied %" PRIu64 " records up to seq %" PRIu64
              ": %" PRIu64 " writes (%s), %" PRIu64 " zeroes/trims, %" PRIu64
              " flushes, in %.2f s (%.2f GB/s of data)", st->records, st->last_seq,
              st->writes, wtc_fmt_bytes (st->bytes, bytes, sizeof bytes),
              st->zeroes, st->flushes, secs,
              secs > 0 ? (double) st->bytes / secs / 1e9 : 0.0);
}

/* Where IN_IMAGE records' bytes come from: nowhere when the base is the
 * run's final image itself (a killed run's recovery: the image holds
 * them, and every APPLIED record is skipped), else the resolver. */
static bool
wtc_replay_resolver (const struct wtc_replay_opts *o, const char *log,
                     struct wt_resolve **resolve, GError **error)
{
  g_autofree char *final = wtc_final_image (log, o->final_image);
  if (final && wtc_same_file (o->base, final))
    return true;
  *resolve = wtc_resolve_open (log, o->final_image, "replay", error);
  return *resolve != NULL;
}

static int
wtc_replay_run (const struct wtc_replay_opts *o)
{
  const char *log = o->args[0];
  char err[512];
  struct wtlog_header h;
  struct wtc_stop stop;
  struct wtc_replay_stats st;
  uint64_t base_size;
  g_autoptr (GError) error = NULL;
  gint64 started = g_get_monotonic_time ();

  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    wtc_cli_error ("%s", err);
    return WT_EXIT_ERROR;
  }
  if (!wtc_log_needs_payloads (log, &h, "replay", &error)) {
    wtc_cli_error ("%s", error->message);
    wtlog_reader_close (r);
    return WT_EXIT_ERROR;
  }
  if (wtc_same_file (o->base, o->out)) {
    wtc_cli_error ("%s and %s are the same file: the output must "
                "not overwrite the base", o->base, o->out);
    wtlog_reader_close (r);
    return WT_EXIT_ERROR;
  }
  g_autoptr (wtc_resolve) resolve = NULL;
  bool ready = wtc_replay_stop_from_opts (o, log, &h, &stop, &error)
    && wtc_base_size (o->base, h.disk_size, &base_size, &error)
    && wtc_replay_resolver (o, log, &resolve, &error);
  g_autoptr (wtc_target) t = ready
    ? wtc_target_create (o->out, MAX (base_size, h.disk_size), h.disk_size, &error)
    : NULL;
  if (t)
    t->resolve = resolve;
  bool progress = isatty (STDERR_FILENO)
    && wtlog_reader_status (r)->file_size >= WTC_PROGRESS_MIN_LOG;
  if (!t || !wtc_target_copy_base (t, o->base, h.disk_size, &error)
      || !wtc_replay_apply (t, r, &stop, progress, &st, &error)
      || (t->blockdev && !wtc_target_sync (t, &error))) {
    wtc_cli_error ("%s", error->message);
    wtlog_reader_close (r);
    return WT_EXIT_ERROR;
  }
  int status = wtc_replay_verdict (log, wtlog_reader_status (r), &stop, &st);
  if (o->verbose || progress)
    wtc_replay_say (&st, g_get_monotonic_time () - started);
  wtlog_reader_close (r);
  return status;
}

/* --list-points */
static int
wtc_replay_list (const struct wtc_replay_opts *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  bool ok = wtc_list_points (o->args[0], o->channel, stdout, warnings, &error);
  wtc_cli_warnings (warnings);
  if (!ok) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return WT_EXIT_OK;
}

int
wt_cmd_replay (int argc, char **argv)
{
  struct wtc_replay_opts o = { 0 };
  int status = WT_EXIT_USAGE;
  if (wtc_replay_parse (argc, argv, &o))
    status = o.list_points ? wtc_replay_list (&o) : wtc_replay_run (&o);
  wtc_replay_opts_free (&o);
  return status;
}
