/* wtrack dump: a log or a channel, record by record, for people and for
 * scripts (--json). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "channel.h"
#include "commands.h"
#include "dump/trace.h"
#include "lib/channel-read.h"
#include "lib/cli.h"
#include "lib/util.h"
#include "manifest.h"
#include "wtlog.h"

struct wtc_dump_opts {
  gboolean json;
  char *channel;
  char *trace_text;
  char *log;
  char *trace;
};

/* Log: text. */

static void
wtc_dump_header_text (const char *path, const struct wtlog_header *h)
{
  char id[40], when[64], flags[32] = "";
  if (h->flags & WTLOG_H_DATA)
    strcat (flags, "DATA");
  if (h->flags & WTLOG_H_NOTIME)
    strcat (flags, flags[0] ? ",NOTIME" : "NOTIME");
  if (h->flags & WTLOG_H_STORE)
    strcat (flags, flags[0] ? ",STORE" : "STORE");
  printf ("# %s\n", path);
  printf ("# wtlog v%" PRIu32 " disk=%" PRIu64 " channel=%" PRIu64 " flags=%s creator=%s run=%s start=%s\n",
          h->version, h->disk_size, h->channel_size, flags[0] ? flags : "-",
          h->creator[0] ? h->creator : "-", wtc_fmt_run_id (h->run_id, id, sizeof id),
          wtc_fmt_iso (h->start_realtime_ns, when, sizeof when));
  printf ("# %8s %12s %12s %-7s %-20s %4s %14s %10s %-16s %s\n", "seq", "t_start",
          "t_end", "type", "flags", "conn", "offset", "length", "hash", "hashes");
}

static void
wtc_dump_record_text (const struct wtlog_record *rec)
{
  char ts[32], te[32], fl[64], hash[20] = "-", errbuf[32];
  if (rec->nhashes)
    snprintf (hash, sizeof hash, "%016" PRIx64, rec->hashes[0]);
  printf ("  %8" PRIu64 " %12s %12s %-7s %-20s %4" PRIu32 " %14" PRIu64 " %10" PRIu64 " %-16s %" PRIu64,
          rec->seq, wtc_fmt_secs (rec->t_start, ts, sizeof ts),
          wtc_fmt_secs (rec->t_end, te, sizeof te), wtlog_type_name (rec->type),
          wtc_fmt_record_flags (rec->flags, fl, sizeof fl), rec->conn,
          rec->offset, rec->length, hash, rec->nhashes);
  if (rec->flags & WTLOG_F_FAILED)
    printf (" err=%s", wtc_errno_name (rec->err, errbuf, sizeof errbuf));
  if (rec->type == WTLOG_OPEN || rec->type == WTLOG_CLOSE)
    printf (" export=%s", rec->offset == WTLOG_EXPORT_CHANNEL ? "channel" : "disk");
  putchar ('\n');
}

static void
wtc_dump_end_text (const struct wtlog_status *st)
{
  if (st->torn)
    printf ("# torn tail at byte %" PRIu64 " after seq %" PRIu64 ": %s\n",
            st->bad_offset, st->last_seq, st->error);
  else if (st->closed)
    printf ("# end: closed (%" PRIu64 " records)\n", st->records);
  else if (st->zero_tail)
    printf ("# end: not closed (nbdkit did not unload cleanly; %" PRIu64
            " records, then %" PRIu64 " zero bytes it had allocated ahead)\n",
            st->records, st->zero_tail);
  else
    printf ("# end: not closed (nbdkit did not unload cleanly; %" PRIu64 " records)\n",
            st->records);
}

/* Log: JSON lines. */

static void
wtc_json_flag_list (uint16_t flags)
{
  char buf[64];
  wtc_fmt_record_flags (flags, buf, sizeof buf);
  putchar ('[');
  if (strcmp (buf, "-") != 0) {
    g_auto (GStrv) names = g_strsplit (buf, ",", -1);
    for (int i = 0; names[i]; i++)
      printf ("%s\"%s\"", i ? "," : "", names[i]);
  }
  putchar (']');
}

static void
wtc_dump_header_json (const struct wtlog_header *h)
{
  char id[40], when[64];
  printf ("{\"header\":{\"version\":%" PRIu32 ",\"disk_size\":%" PRIu64
          ",\"channel_size\":%" PRIu64 ",\"flags\":[", h->version, h->disk_size,
          h->channel_size);
  printf ("%s", (h->flags & WTLOG_H_DATA) ? "\"DATA\"" : "");
  printf ("%s", (h->flags & WTLOG_H_NOTIME)
          ? ((h->flags & WTLOG_H_DATA) ? ",\"NOTIME\"" : "\"NOTIME\"") : "");
  printf ("%s", (h->flags & WTLOG_H_STORE)
          ? ((h->flags & (WTLOG_H_DATA | WTLOG_H_NOTIME)) ? ",\"STORE\"" : "\"STORE\"") : "");
  printf ("],\"creator\":");
  wtc_json_str (stdout, h->creator);
  printf (",\"run_id\":\"%s\",\"start_realtime_ns\":%" PRIu64
          ",\"start_monotonic_ns\":%" PRIu64 ",\"start\":\"%s\"}}\n",
          wtc_fmt_run_id (h->run_id, id, sizeof id), h->start_realtime_ns,
          h->start_monotonic_ns, wtc_fmt_iso (h->start_realtime_ns, when, sizeof when));
}

static void
wtc_dump_record_json (const struct wtlog_record *rec)
{
  char errbuf[32];
  printf ("{\"seq\":%" PRIu64 ",\"type\":\"%s\",\"flags\":", rec->seq,
          wtlog_type_name (rec->type));
  wtc_json_flag_list (rec->flags);
  printf (",\"conn\":%" PRIu32 ",\"err\":%" PRIu32, rec->conn, rec->err);
  if (rec->flags & WTLOG_F_FAILED)
    printf (",\"err_name\":\"%s\"", wtc_errno_name (rec->err, errbuf, sizeof errbuf));
  printf (",\"t_start\":%" PRIu64 ",\"t_end\":%" PRIu64 ",\"offset\":%" PRIu64
          ",\"length\":%" PRIu64 ",\"log_offset\":%" PRIu64 ",\"hashes\":[",
          rec->t_start, rec->t_end, rec->offset, rec->length, rec->log_offset);
  for (uint64_t i = 0; i < rec->nhashes; i++)
    printf ("%s\"%016" PRIx64 "\"", i ? "," : "", rec->hashes[i]);
  printf ("]}\n");
}

static void
wtc_dump_end_json (const struct wtlog_status *st)
{
  printf ("{\"end\":\"%s\",\"records\":%" PRIu64 ",\"last_seq\":%" PRIu64,
          st->torn ? "torn" : st->closed ? "closed" : "unclosed", st->records,
          st->last_seq);
  if (st->zero_tail)
    printf (",\"zero_tail\":%" PRIu64, st->zero_tail);
  if (st->torn) {
    printf (",\"bad_offset\":%" PRIu64 ",\"error\":", st->bad_offset);
    wtc_json_str (stdout, st->error);
  }
  printf ("}\n");
}

static int
wtc_dump_log (const char *path, bool json)
{
  char err[512];
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (path, &h, err, sizeof err);
  if (!r) {
    wtc_cli_error ("%s", err);
    return WT_EXIT_ERROR;
  }
  if (json)
    wtc_dump_header_json (&h);
  else
    wtc_dump_header_text (path, &h);
  while (wtlog_reader_next (r, &rec) == 0) {
    if (json)
      wtc_dump_record_json (&rec);
    else
      wtc_dump_record_text (&rec);
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (json)
    wtc_dump_end_json (st);
  else
    wtc_dump_end_text (st);
  int status = st->torn ? WT_EXIT_ERROR : WT_EXIT_OK;
  if (st->torn)
    wtc_cli_error ("%s", st->error);
  wtlog_reader_close (r);
  return status;
}

/* Channel. */

/* CHANNEL records of the log, to place messages on the log's clock. */
static bool
wtc_dump_chanrecs (const char *log, GArray *chanrecs)
{
  char err[512];
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (log, NULL, err, sizeof err);
  if (!r) {
    wtc_cli_error ("%s", err);
    return false;
  }
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_chanrec_note (chanrecs, &rec);
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (st->torn)
    wtc_cli_warning ("%s (messages after seq %" PRIu64 " are not placed)",
             st->error, st->last_seq);
  wtlog_reader_close (r);
  return true;
}

/* The guest's text, a line per line, made safe for a terminal (so a guest
 * can neither send escapes to it nor forge a line). */
static void
wtc_dump_text_lines (const char *text)
{
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (int i = 0; lines[i]; i++)
    if (lines[i][0] || lines[i + 1]) {
      g_autofree char *line = wtc_text_safe (lines[i]);
      printf ("    %s\n", line);
    }
}

static void
wtc_dump_msg (const struct wtc_msg *m)
{
  char gt[32], lt[32];
  printf ("msg %" PRIu64 " guest=%s %-8s %" PRIu32 " bytes at %" PRIu64,
          m->number, wtc_fmt_secs (m->guest_ns, gt, sizeof gt),
          wtch_type_name (m->type), m->length, m->offset);
  if (m->placed)
    printf (" [log seq %" PRIu64 " t=%s]", m->log_seq,
            wtc_fmt_secs (m->log_t_start, lt, sizeof lt));
  if (m->type == WTCH_MARK) {
    g_autofree char *label = wtc_text_safe (m->text);
    printf (" \"%s\"\n", label);
  } else {
    /* a TRACE piece is the kernel's text, thousands of lines: --trace-text
     * writes it out whole */
    if (m->type == WTCH_TRACE)
      printf ("%s", (m->flags & WTCH_F_TRACE_LAST) ? " (last piece)" : "");
    putchar ('\n');
    if (m->type != WTCH_MANIFEST && m->type != WTCH_TRACE)
      wtc_dump_text_lines (m->text);
  }
}

static uint64_t
wtc_sectors_with_op (const struct wtmf_file *f)
{
  uint64_t n = 0;
  for (uint64_t i = 0; i < f->nsectors; i++)
    n += f->ops[i] != 0;
  return n;
}

static void
wtc_dump_extent (const struct wtmf_extent *e)
{
  printf ("    extent logical=%" PRIu64 " physical=%" PRIu64 " length=%" PRIu64 " flags=%s%s%s%s\n",
          e->logical, e->physical, e->length,
          e->flags ? "" : "-",
          (e->flags & WTMF_EXT_UNWRITTEN) ? "UNWRITTEN" : "",
          (e->flags & WTMF_EXT_UNMAPPABLE)
          ? ((e->flags & WTMF_EXT_UNWRITTEN) ? ",UNMAPPABLE" : "UNMAPPABLE") : "",
          (e->flags & WTMF_EXT_DELALLOC) ? ",DELALLOC" : "");
}

static void
wtc_dump_manifest (guint index, const struct wtmf_manifest *mf)
{
  printf ("manifest %u: checkpoint %" PRIu32 "%s, %" PRIu32 " files, %" PRIu32 " ops\n",
          index, mf->checkpoint, mf->checkpoint == 0 ? " (final)" : "",
          mf->nfiles, mf->nops);
  for (uint32_t i = 0; i < mf->nfiles; i++) {
    const struct wtmf_file *f = &mf->files[i];
    g_autofree char *path = wtc_text_safe (f->path);
    printf ("  file %s id=%" PRIu32 " inode=%" PRIu64 " size=%" PRIu64 " sectors=%" PRIu64
            " with_op=%" PRIu64 " extents=%" PRIu32 "\n", path, f->id, f->inode,
            f->size, f->nsectors, wtc_sectors_with_op (f), f->nextents);
    for (uint32_t e = 0; e < f->nextents; e++)
      wtc_dump_extent (&f->extents[e]);
  }
  uint64_t by_kind[WTMF_OP_KIND_MAX + 1] = { 0 };
  for (uint32_t i = 0; i < mf->nops; i++)
    by_kind[mf->ops[i].kind <= WTMF_OP_KIND_MAX ? mf->ops[i].kind : 0]++;
  printf ("  ops:");
  for (uint32_t k = 1; k <= WTMF_OP_KIND_MAX; k++)
    if (by_kind[k])
      printf (" %s=%" PRIu64, wtmf_op_kind_name (k), by_kind[k]);
  if (by_kind[0])
    printf (" unknown=%" PRIu64, by_kind[0]);
  printf ("%s\n", mf->nops ? "" : " none");
}

static int
wtc_dump_channel (const char *path, const char *log)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_channel) ch = wtc_channel_read (path, &error);
  if (!ch) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  if (log) {
    g_autoptr (GArray) chanrecs = g_array_new (FALSE, FALSE, sizeof (struct wtc_chanrec));
    if (!wtc_dump_chanrecs (log, chanrecs))
      return WT_EXIT_ERROR;
    wtc_channel_place (ch, chanrecs);
  }
  printf ("# %s: %u messages\n", path, ch->msgs->len);
  for (guint i = 0; i < ch->msgs->len; i++)
    wtc_dump_msg (&g_array_index (ch->msgs, struct wtc_msg, i));
  int status = WT_EXIT_OK;
  if (ch->error) {
    printf ("# bad message: %s\n", ch->error);
    wtc_cli_error ("%s", ch->error);
    status = WT_EXIT_ERROR;
  } else {
    printf ("# end of the stream\n");
  }
  g_autoptr (GPtrArray) manifests = NULL;
  bool parsed = wtc_manifests_parse (ch, &manifests, &error);
  for (guint i = 0; i < manifests->len; i++)
    wtc_dump_manifest (i + 1, g_ptr_array_index (manifests, i));
  if (!parsed) {
    printf ("# %s\n", error->message);
    wtc_cli_error ("%s: %s", path, error->message);
    status = WT_EXIT_ERROR;
  }
  return status;
}

/* The "# lost" line of the trace's header gets " dropped": the trace's
 * tail never reached the channel (doc/formats.md, trace.txt). */
static void
wtc_trace_mark_dropped (GString *t)
{
  const char *lost = t->len >= 7 && strncmp (t->str, "# lost ", 7) == 0 ? t->str
    : strstr (t->str, "\n# lost ");
  if (!lost) {
    g_string_append (t, "\n# lost dropped\n");
    return;
  }
  const char *nl = strchr (lost + 1, '\n');
  g_string_insert (t, nl ? (gssize) (nl - t->str) : -1, " dropped");
}

/* --trace-text FILE: the guest kernel's trace, its TRACE pieces in order,
 * into FILE (wtrack-run writes RUN_DIR/trace.txt so). */
static int
wtc_dump_trace_text (const char *path, const char *out)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_channel) ch = wtc_channel_read (path, &error);
  if (!ch) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  g_autoptr (GString) t = g_string_new (NULL);
  guint pieces = 0;
  bool last = false;
  for (guint i = 0; i < ch->msgs->len && !last; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->type != WTCH_TRACE)
      continue;
    g_string_append_len (t, m->text, m->length);
    pieces++;
    last = (m->flags & WTCH_F_TRACE_LAST) != 0;
  }
  if (!pieces) {
    wtc_cli_error ("%s: no TRACE message (the guest sent no trace)%s%s", path,
                   ch->error ? ": " : "", ch->error ? ch->error : "");
    return WT_EXIT_ERROR;
  }
  if (!last) {
    wtc_trace_mark_dropped (t);
    wtc_cli_warning ("%s: the trace's last piece is missing (%u pieces read%s%s): "
                     "its tail was dropped", path, pieces, ch->error ? ": " : "",
                     ch->error ? ch->error : "");
  }
  if (!g_file_set_contents (out, t->str, (gssize) t->len, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return WT_EXIT_OK;
}

/* --trace: LOG's MARKs come from --channel, else from RUN_DIR's channel.bin. */
static int
wtc_dump_trace_main (int argc, char **argv, const char *trace, const char *channel,
                     const char *log)
{
  if (argc != 2 || log) {
    wtc_cli_usage ("--trace: expected one LOG");
    return WT_EXIT_USAGE;
  }
  g_autofree char *dir = g_path_get_dirname (argv[1]);
  g_autofree char *beside = g_build_filename (dir, "channel.bin", NULL);
  if (!channel && g_file_test (beside, G_FILE_TEST_IS_REGULAR))
    channel = beside;
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  bool ok = wtc_dump_trace (argv[1], channel, trace, warnings, &error);
  wtc_cli_warnings (warnings);
  if (!ok) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return WT_EXIT_OK;
}

int
wt_cmd_dump (int argc, char **argv)
{
  struct wtc_dump_opts o = { 0 };
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "one JSON object a line (log only)", NULL },
    { "channel", 0, 0, G_OPTION_ARG_FILENAME, &o.channel, "dump this channel.bin instead of a log", "CHANNEL" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &o.log, "with --channel: place each message at its CHANNEL record of LOG", "LOG" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &o.trace, "write LOG as Chrome trace-event JSON to FILE (- for stdout), for Perfetto", "FILE" },
    { "trace-text", 0, 0, G_OPTION_ARG_FILENAME, &o.trace_text, "with --channel: write the guest kernel's trace (its TRACE messages) to FILE", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("LOG | --channel CHANNEL [--log LOG]");
  g_option_context_set_summary (ctx, "Print a write log record by record, or the messages and manifests of a channel.");
  g_option_context_set_description (ctx,
    "Log: a header line, one line per record (seq, t_start and t_end in seconds\n"
    "since the log's start, type, flags, NBD connection, offset, length, the\n"
    "first sector hash and the hash count; err= for FAILED records), and an end\n"
    "line: closed, not closed (with the zeroes a killed plugin left after the\n"
    "last record, if any), or the byte where a torn tail starts.\n"
    "--json prints a {\"header\":...} line, one object per record with every\n"
    "hash, and an {\"end\":...} line.\n\n"
    "Channel: every message (number, guest time, type, length; the text of\n"
    "HELLO, RESULT and TEXT; the label of MARK; a TRACE piece's size alone), then\n"
    "each manifest summarised. --trace-text FILE writes the TRACE pieces\n"
    "(wtrack-run --trace: the guest kernel's trace) to FILE instead, as\n"
    "trace.txt (doc/formats.md); a missing last piece adds \"dropped\" to its\n"
    "\"# lost\" line.\n\n"
    "--trace FILE writes the log as Chrome trace-event JSON instead: one lane\n"
    "per NBD connection, one event per record (WRITE, ZERO, TRIM, FLUSH, FUA,\n"
    "...; args seq, offset, length), and the guest's MARKs as instant events\n"
    "(from --channel CHANNEL, or the channel.bin beside LOG). Open it in\n"
    "ui.perfetto.dev (\"Open trace file\") or chrome://tracing.\n\n"
    "Exit status: 0 read to the end, 2 bad usage or damaged input (everything\n"
    "good before the damage is printed first).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return WT_EXIT_USAGE;
  g_autofree char *channel = o.channel, *log = o.log, *trace = o.trace;
  g_autofree char *trace_text = o.trace_text;
  if (trace_text) {
    if (!channel || trace || log || argc > 1) {
      wtc_cli_usage ("--trace-text: expected --channel CHANNEL alone");
      return WT_EXIT_USAGE;
    }
    return wtc_dump_trace_text (channel, trace_text);
  }
  if (trace)
    return wtc_dump_trace_main (argc, argv, trace, channel, log);
  if (channel) {
    if (argc > 2 || (argc == 2 && log)) {
      wtc_cli_usage ("too many arguments");
      return WT_EXIT_USAGE;
    }
    return wtc_dump_channel (channel, argc == 2 ? argv[1] : log);
  }
  if (argc != 2 || log) {
    wtc_cli_usage ("expected one LOG");
    return WT_EXIT_USAGE;
  }
  return wtc_dump_log (argv[1], o.json);
}
