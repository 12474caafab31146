/* What wtrack crash prints: the table of states (a row as each state's
 * check ends, in state order), the oracle's comment lines, the summary,
 * and the JSON (crash/crash.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crash/crash.h"
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
wtc_crash_json_data (FILE *f, const struct wtc_data_verdict *v)
{
  fprintf (f, ",\"data\":\"%s\",\"checkpoint\":%" PRIu32 ",\"data_checked\":%" PRIu64
           ",\"data_bad_sectors\":%" PRIu64 ",\"data_bad\":[",
           v->checkpoint == 0 ? "none" : v->bad ? "bad" : "ok", v->checkpoint,
           v->checked, v->bad);
  for (guint i = 0; i < v->runs->len; i++) {
    const struct wtc_data_run *r = &g_array_index (v->runs, struct wtc_data_run, i);
    fprintf (f, "%s{\"path\":", i ? "," : "");
    wtc_json_str (f, r->path);
    fprintf (f, ",\"file_sector\":%" PRIu64 ",\"disk_sector\":%" PRIu64
             ",\"sectors\":%" PRIu64 "}", r->file_sector, r->disk_sector, r->count);
  }
  fprintf (f, "]");
}

bool
wtc_crash_write_json (const struct wtc_crash *c, const char *path, GError **error)
{
  FILE *f = fopen (path, "w");
  if (!f) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    return false;
  }
  fprintf (f, "{\"version\":1,\"checkpoints\":%u,\"states\":[",
           c->oracle ? wtc_oracle_checkpoints (c->oracle) : 0);
  for (guint i = 0; i < c->states->len; i++) {
    const struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, i);
    fprintf (f, "%s{\"state\":%" PRIu64 ",\"kind\":\"%s\",\"seq\":%" PRIu64
             ",\"t_ns\":%" PRIu64 ",\"status\":%d,\"writes\":", i ? "," : "",
             s->number, s->kind, s->seq, s->t_ns, s->status);
    wtc_json_str (f, s->writes ? s->writes : "");
    fprintf (f, ",\"subset_writes\":%u,\"epoch_writes\":%u", s->subset_writes,
             s->epoch_writes);
    wtc_crash_json_data (f, &s->data);
    fprintf (f, "}");
  }
  fprintf (f, "],\"failed\":%" PRIu64 ",\"failed_check\":%" PRIu64
           ",\"failed_data\":%" PRIu64 ",\"complete\":%s}\n", c->failed,
           c->failed_check, c->failed_data, c->full || c->torn ? "false" : "true");
  if (fclose (f) != 0) {
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
