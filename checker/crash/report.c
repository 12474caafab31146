/* What wtrack crash prints: the table of states (a row as each state's
 * check ends, in state order), the oracle's comment lines, the summary,
 * and the JSON (crash/crash.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crash/crash.h"
#include "lib/json.h"
#include "lib/util.h"

/* Shown at most for each state's data verdict; the JSON has them all. */
#define WTC_CRASH_RUNS_SHOWN 8
/* The table shows the first seqs of a reordered state's writes; the JSON
 * has them all. */
#define WTC_CRASH_WRITES_SHOWN 72

static void
wtc_crash_print_data (const struct wtc_crash_state *s)
{
  const struct wtc_data_verdict *v = &s->data;
  for (guint i = 0; i < v->runs->len && i < WTC_CRASH_RUNS_SHOWN; i++) {
    const struct wtc_data_run *r = &g_array_index (v->runs, struct wtc_data_run, i);
    printf ("#      state %" PRIu64 ": checkpoint %" PRIu32 ": %s: file sectors %"
            PRIu64 "-%" PRIu64 " (%" PRIu64 ") not as checkpointed, disk sectors %"
            PRIu64 "-%" PRIu64 "\n", s->number, v->checkpoint, r->path, r->file_sector,
            r->file_sector + r->count - 1, r->count, r->disk_sector,
            r->disk_sector + r->count - 1);
  }
  if (v->runs->len > WTC_CRASH_RUNS_SHOWN)
    printf ("#      state %" PRIu64 ": ... and %u more runs (see --json)\n", s->number,
            v->runs->len - WTC_CRASH_RUNS_SHOWN);
}

static void
wtc_crash_print_writes (const struct wtc_crash_state *s)
{
  const char *writes = s->writes ? s->writes : "";
  size_t cut = strlen (writes);
  if (cut > WTC_CRASH_WRITES_SHOWN) {
    cut = WTC_CRASH_WRITES_SHOWN;
    while (cut > 0 && writes[cut] != ',')
      cut--;
  }
  printf ("%.*s%s", (int) cut, writes, writes[cut] ? ",..." : "");
  if (s->epoch_writes)
    printf (" (%u of %u)", s->subset_writes, s->epoch_writes);
  printf ("\n");
}

void
wtc_crash_print_state (const struct wtc_crash_state *s)
{
  char t[32], data[32];
  if (s->data.checkpoint == 0)
    g_strlcpy (data, "-", sizeof data);
  else if (s->data.bad == 0)
    g_strlcpy (data, "ok", sizeof data);
  else
    snprintf (data, sizeof data, "BAD %" PRIu64, s->data.bad);
  printf ("%6" PRIu64 " %-8s %10" PRIu64 " %14s %6d %-6s %-10s ", s->number, s->kind,
          s->seq, wtc_fmt_secs (s->t_ns, t, sizeof t), s->status,
          s->status == 0 ? "ok" : "FAILED", data);
  wtc_crash_print_writes (s);
  if (s->data.bad)
    wtc_crash_print_data (s);
  fflush (stdout);
}

void
wtc_crash_print_oracle (const struct wtc_crash *c)
{
  if (!c->oracle) {
    printf ("# no %s: no data verdicts\n", c->channel);
    return;
  }
  const GPtrArray *lines = wtc_oracle_describe (c->oracle);
  for (guint i = 0; i < lines->len; i++)
    printf ("# %s\n", (const char *) g_ptr_array_index (lines, i));
  if (wtc_oracle_checkpoints (c->oracle) == 0)
    printf ("# no checkpoints in %s (the guest's --checkpoint): no data verdicts\n",
            c->channel);
}

void
wtc_crash_print_header (void)
{
  printf ("# %4s %-8s %10s %14s %6s %-6s %-10s %s\n", "state", "kind", "seq", "time",
          "status", "check", "data", "writes of the epoch in it");
}

static void
wtc_crash_json_data (JsonBuilder *b, const struct wtc_data_verdict *v)
{
  wtc_jb_str (b, "data", v->checkpoint == 0 ? "none" : v->bad ? "bad" : "ok");
  wtc_jb_u64 (b, "checkpoint", v->checkpoint);
  wtc_jb_u64 (b, "data_checked", v->checked);
  wtc_jb_u64 (b, "data_bad_sectors", v->bad);
  wtc_jb_array (b, "data_bad");
  for (guint i = 0; i < v->runs->len; i++) {
    const struct wtc_data_run *r = &g_array_index (v->runs, struct wtc_data_run, i);
    wtc_jb_object (b, NULL);
    wtc_jb_str (b, "path", r->path);
    wtc_jb_u64 (b, "file_sector", r->file_sector);
    wtc_jb_u64 (b, "disk_sector", r->disk_sector);
    wtc_jb_u64 (b, "sectors", r->count);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
}

static void
wtc_crash_json_state (JsonBuilder *b, const struct wtc_crash_state *s)
{
  wtc_jb_object (b, NULL);
  wtc_jb_u64 (b, "state", s->number);
  wtc_jb_str (b, "kind", s->kind);
  wtc_jb_u64 (b, "seq", s->seq);
  wtc_jb_u64 (b, "t_ns", s->t_ns);
  wtc_jb_int (b, "status", s->status);
  wtc_jb_str (b, "writes", s->writes ? s->writes : "");
  wtc_jb_u64 (b, "subset_writes", s->subset_writes);
  wtc_jb_u64 (b, "epoch_writes", s->epoch_writes);
  wtc_crash_json_data (b, &s->data);
  json_builder_end_object (b);
}

/* crash.json: one compact line (json-glib's compact form is the one it had). */
bool
wtc_crash_write_json (const struct wtc_crash *c, const char *path, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  wtc_jb_object (b, NULL);
  wtc_jb_int (b, "version", 1);
  wtc_jb_u64 (b, "checkpoints", c->oracle ? wtc_oracle_checkpoints (c->oracle) : 0);
  wtc_jb_array (b, "states");
  for (guint i = 0; i < c->states->len; i++)
    wtc_crash_json_state (b, &g_array_index (c->states, struct wtc_crash_state, i));
  json_builder_end_array (b);
  wtc_jb_u64 (b, "failed", c->failed);
  wtc_jb_u64 (b, "failed_check", c->failed_check);
  wtc_jb_u64 (b, "failed_data", c->failed_data);
  wtc_jb_bool (b, "complete", !(c->full || c->torn));
  json_builder_end_object (b);
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = wtc_json_text (root);
  FILE *f = fopen (path, "w");
  if (!f) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    return false;
  }
  fputs (text, f);
  fputc ('\n', f);
  if (ferror (f) | (fclose (f) != 0)) {
    g_set_error (error, WTC_ERROR, 0, "write: %s: %s", path, g_strerror (errno));
    return false;
  }
  return true;
}

void
wtc_crash_summary (const struct wtc_crash *c)
{
  printf ("# %u states, %" PRIu64 " failed the check", c->states->len, c->failed_check);
  if (c->oracle && wtc_oracle_checkpoints (c->oracle))
    printf (", %" PRIu64 " failed the data of a checkpoint", c->failed_data);
  printf ("%s%s\n", c->full ? " (stopped at --max-states)" : "",
          c->torn ? " (the log is torn: only the states before the tear)" : "");
}
