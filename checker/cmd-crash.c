/* wtrack crash: the disks a power cut could have left, each checked by a
 * command and by the checkpoint oracle (crash/oracle.h). The initial state
 * is base.img; prefix states: the disk after every FLUSH and every FUA
 * write (what was durable then). With --reorder N: for every epoch between
 * two flushes, N states made of the epoch's starting disk plus a subset of
 * the epoch's writes (CrashMonkey's idea: what the device had not persisted
 * yet may have reached the media in any order). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "commands.h"
#include "crash/epoch.h"
#include "crash/jobs.h"
#include "crash/oracle.h"
#include "fileio.h"
#include "lib/target.h"
#include "lib/util.h"
#include "wtlog.h"

struct wtc_crash_opts {
  char *check;
  char *log;
  char *base;
  char *json;
  char *channel;
  gint jobs;
  gint reorder;
  gint64 seed;
  gint max_states;
  char **args;
};

/* Shown at most for each state's data verdict; the JSON has them all. */
#define WTC_CRASH_RUNS_SHOWN 8

struct wtc_crash_state {
  uint64_t number;              /* 0: the initial state */
  const char *kind;             /* "initial", "prefix" or "reorder" */
  uint64_t seq;                 /* the record the state follows */
  uint64_t t_ns;
  char *writes;                 /* reorder: the seqs of the epoch's writes in it */
  guint subset_writes;          /* reorder: how many, of */
  guint epoch_writes;           /* the epoch's writes */
  int status;                   /* the check's exit status (-1: did not run) */
  bool finished;                /* the check ended */
  struct wtc_data_verdict data;
};

struct wtc_crash {
  const struct wtc_crash_opts *o;
  char *dir;                    /* RUN_DIR/crash */
  struct wtc_target *scratch;
  struct wtc_oracle *oracle;    /* NULL: no channel */
  struct wtc_jobs *jobs;
  /* Only --reorder keeps the epoch's writes and what they overwrote; the
   * prefix states need neither. */
  GArray *epoch;                /* struct wtc_epoch_write since the last flush */
  struct wtc_undo *epoch_undo;  /* what the epoch's writes overwrote */
  struct wtc_undo *subset_undo; /* what a reordered state's subset overwrote */
  int log_fd;                   /* the log, to read an epoch's data back */
  guint epoch_writes;           /* writes since the last flush */
  GArray *states;               /* struct wtc_crash_state */
  GRand *rand;
  guint printed;                /* states whose row is out */
  guint subset_writes;          /* of the reordered state being made */
  uint64_t failed;              /* states failing the check or the data */
  uint64_t failed_check;
  uint64_t failed_data;
  bool full;                    /* --max-states reached */
  bool torn;                    /* the log is torn: states end before the tear */
  char *torn_error;             /* where and why */
};

static void
wtc_crash_opts_free (struct wtc_crash_opts *o)
{
  g_free (o->check);
  g_free (o->log);
  g_free (o->base);
  g_free (o->json);
  g_free (o->channel);
  g_strfreev (o->args);
}

static bool
wtc_crash_parse (int argc, char **argv, struct wtc_crash_opts *o)
{
  o->seed = 1;
  o->jobs = 1;
  GOptionEntry entries[] = {
    { "check", 'c', 0, G_OPTION_ARG_STRING, &o->check, "the command run on every state through /bin/sh -c, {} replaced by the image's path; it must not change the image", "CMD" },
    { "reorder", 'r', 0, G_OPTION_ARG_INT, &o->reorder, "N states per epoch with a random subset of its writes (all subsets when there are no more than N)", "N" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &o->seed, "seed of the subsets (default 1)", "S" },
    { "max-states", 'm', 0, G_OPTION_ARG_INT, &o->max_states, "stop after N states", "N" },
    { "jobs", 'J', 0, G_OPTION_ARG_INT, &o->jobs, "run up to N checks at once, each on a copy of its own (0: one per CPU; default 1)", "N" },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "write the states and their verdicts as JSON to FILE", "FILE" },
    { "channel", 0, 0, G_OPTION_ARG_FILENAME, &o->channel, "the guest's channel, for the checkpoint oracle (default RUN_DIR/channel.bin when it exists)", "FILE" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log, "the write log (default RUN_DIR/writes.wtlog)", "LOG" },
    { "base", 0, 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run (default RUN_DIR/base.img)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN_DIR --check CMD");
  g_autoptr (GError) error = NULL;
  g_option_context_set_summary (ctx,
    "Make every disk a crash could have left from the run's log (recorded\n"
    "with data=on) and base.img, one after the other in RUN_DIR/crash/scratch.img,\n"
    "changing only what differs from the state before, and run CMD on each\n"
    "(with --jobs N, on copies RUN_DIR/crash/scratch-J.img, N at a time).\n"
    "Its output goes to RUN_DIR/crash/state-N.log. Every {} in CMD becomes the\n"
    "image's path as one shell word, quoted by wtrack: write {} bare, or inside\n"
    "\"...\" or '...' (the quotes are closed around the path and reopened).\n"
    "\n"
    "States: the initial one (base.img), a prefix after every FLUSH and FUA\n"
    "write, the end of the log, and with --reorder subsets of each epoch.\n"
    "\n"
    "The checkpoint oracle (runs with the guest's --checkpoint): in every\n"
    "state at or after MARK \"checkpoint K\", the files fsynced by then must\n"
    "hold their checkpoint-K contents. Each sector the workload did not rewrite\n"
    "before the next manifest is read through checkpoint K's extents and its\n"
    "hash compared; the sectors that differ are named.\n"
    "\n"
    "Prints a table: state, kind, the seq and time it follows, the check's\n"
    "status, and the data verdict (-: no checkpoint yet, ok, BAD N sectors).\n"
    "Memory does not grow with the size of a write or of an epoch: --reorder\n"
    "reads an epoch's data back from the log and keeps the bytes it must undo\n"
    "in an unlinked file in RUN_DIR/crash.\n"
    "Exit status: 0 every state passed both, 1 some failed, 2 an error, or a\n"
    "torn log (the states before the tear are still made, checked and listed;\n"
    "the JSON says \"complete\": false).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("wtrack crash: %s\n", error->message);
    return false;
  }
  if (!o->args || !o->args[0] || o->args[1] || !o->check) {
    g_printerr ("wtrack crash: expected RUN_DIR and --check CMD (see wtrack crash --help)\n");
    return false;
  }
  if (o->reorder < 0 || o->max_states < 0 || o->jobs < 0) {
    g_printerr ("wtrack crash: --reorder, --max-states and --jobs take a count from 0\n");
    return false;
  }
  if (o->jobs == 0)
    o->jobs = (gint) g_get_num_processors ();
  return true;
}

/* States. */

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

/* The table shows the first seqs of a reordered state's writes; the JSON
 * has them all. */
#define WTC_CRASH_WRITES_SHOWN 72

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

static void
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

/* The rows come out in state order, whatever order the checks end in. */
static void
wtc_crash_check_done (void *data, guint index, int status)
{
  struct wtc_crash *c = data;
  struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, index);
  s->status = status;
  s->finished = true;
  if (status != 0) {
    c->failed_check++;
    if (s->data.bad == 0)
      c->failed++;
  }
  while (c->printed < c->states->len
         && g_array_index (c->states, struct wtc_crash_state, c->printed).finished)
    wtc_crash_print_state (&g_array_index (c->states, struct wtc_crash_state, c->printed++));
}

/* The scratch image holds a new state: the oracle reads it now, the check
 * runs on it (or on a copy) as soon as a job is free. */
static bool
wtc_crash_check (struct wtc_crash *c, const char *kind, uint64_t seq,
                 uint64_t t_ns, char *writes, GError **error)
{
  if (c->full) {
    g_free (writes);
    return true;
  }
  struct wtc_crash_state s = {
    .number = c->states->len, .kind = kind, .seq = seq, .t_ns = t_ns,
    .writes = writes, .status = -1, .subset_writes = c->subset_writes,
    .epoch_writes = c->subset_writes ? c->epoch_writes : 0,
  };
  bool ok = wtc_oracle_check (c->oracle, c->scratch, seq, &s.data, error);
  if (s.data.bad) {
    c->failed_data++;
    c->failed++;
  }
  g_array_append_val (c->states, s);
  if (c->o->max_states && c->states->len >= (guint) c->o->max_states)
    c->full = true;
  if (!ok)
    return false;
  g_autofree char *log_path = g_strdup_printf ("%s/state-%" PRIu64 ".log", c->dir,
                                               s.number);
  return wtc_jobs_start (c->jobs, c->states->len - 1, log_path, error);
}

/* Reordered states. */

/* Subset number k of the epoch's writes into in[] (in[i]: write i is in
 * it). Few writes: every proper, non-empty subset in turn (bit i of k + 1);
 * more: random ones, each write in with probability 1/2. */
static void
wtc_crash_subset (struct wtc_crash *c, guint nwrites, guint k, guint8 *in)
{
  if (nwrites < 64 && ((uint64_t) 1 << nwrites) - 2 <= (uint64_t) c->o->reorder) {
    for (guint i = 0; i < nwrites; i++)
      in[i] = ((uint64_t) (k + 1) >> i) & 1;
    return;
  }
  guint count;
  do {
    count = 0;
    for (guint i = 0; i < nwrites; i++)
      count += in[i] = g_rand_boolean (c->rand);
  } while (count == 0 || count == nwrites);
}

static guint
wtc_crash_samples (const struct wtc_crash *c, guint nwrites)
{
  if (nwrites < 2)
    return 0;
  if (nwrites < 64 && ((uint64_t) 1 << nwrites) - 2 < (uint64_t) c->o->reorder)
    return (guint) (((uint64_t) 1 << nwrites) - 2);
  return (guint) c->o->reorder;
}

/* Applies the subset (on the epoch's starting disk), checks, undoes it. */
static bool
wtc_crash_reorder_one (struct wtc_crash *c, const guint8 *in, uint64_t seq,
                       uint64_t t_ns, GError **error)
{
  struct wtc_undo *undo = c->subset_undo;
  GString *writes = g_string_new ("writes");
  for (guint i = 0; i < c->epoch->len; i++) {
    if (!in[i])
      continue;
    const struct wtc_epoch_write *w = &g_array_index (c->epoch, struct wtc_epoch_write, i);
    g_string_append_printf (writes, "%s%" PRIu64, writes->len > 6 ? "," : " ", w->seq);
    if (!wtc_epoch_apply (c->scratch, c->log_fd, w, undo, error)) {
      g_string_free (writes, true);
      return false;
    }
  }
  c->subset_writes = wtc_undo_writes (undo);
  bool ok = wtc_crash_check (c, "reorder", seq, t_ns, g_string_free (writes, false), error);
  c->subset_writes = 0;
  return ok && wtc_undo_all (c->scratch, undo, error);
}

static bool
wtc_crash_reorder_epoch (struct wtc_crash *c, uint64_t seq, uint64_t t_ns,
                         GError **error)
{
  guint n = wtc_crash_samples (c, c->epoch->len);
  if (n == 0 || c->full)
    return true;
  if (!wtc_undo_all (c->scratch, c->epoch_undo, error))
    return false;
  g_autofree guint8 *in = g_new (guint8, c->epoch->len);
  for (guint k = 0; k < n && !c->full; k++) {
    wtc_crash_subset (c, c->epoch->len, k, in);
    if (!wtc_crash_reorder_one (c, in, seq, t_ns, error))
      return false;
  }
  for (guint i = 0; i < c->epoch->len; i++)
    if (!wtc_epoch_apply (c->scratch, c->log_fd,
                          &g_array_index (c->epoch, struct wtc_epoch_write, i), NULL, error))
      return false;
  return true;
}

/* A flush (or the end of the log) closes the epoch. */
static bool
wtc_crash_epoch_end (struct wtc_crash *c, uint64_t seq, uint64_t t_ns, GError **error)
{
  if (c->o->reorder && !wtc_crash_reorder_epoch (c, seq, t_ns, error))
    return false;
  c->epoch_writes = 0;
  if (c->o->reorder) {
    g_array_set_size (c->epoch, 0);
    wtc_undo_clear (c->epoch_undo);
  }
  return true;
}

static bool
wtc_crash_record (struct wtc_crash *c, const struct wtlog_record *rec, GError **error)
{
  if (wtc_record_changes_disk (rec)) {
    if (rec->type == WTLOG_WRITE && !rec->data) {
      g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": WRITE has no data", rec->seq);
      return false;
    }
    if (rec->offset > c->scratch->size || rec->length > c->scratch->size - rec->offset) {
      g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": %s %" PRIu64 "+%" PRIu64
                   " lies outside the disk (%" PRIu64 " bytes)", rec->seq,
                   wtlog_type_name (rec->type), rec->offset, rec->length,
                   c->scratch->size);
      return false;
    }
    c->epoch_writes++;
    if (c->o->reorder) {
      wtc_epoch_add (c->epoch, rec);
      if (!wtc_undo_save (c->epoch_undo, c->scratch, rec->offset, rec->length, error))
        return false;
    }
    if (!wtc_target_apply (c->scratch, rec, error))
      return false;
    if (rec->flags & WTLOG_F_FUA)
      return wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL, error);
    return true;
  }
  if (rec->type == WTLOG_FLUSH && !(rec->flags & WTLOG_F_FAILED))
    return wtc_crash_epoch_end (c, rec->seq, rec->t_end, error)
      && wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL, error);
  return true;
}

/* Output. */

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

static bool
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

static bool
wtc_crash_walk (struct wtc_crash *c, struct wtlog_reader *r, GError **error)
{
  struct wtlog_record rec = { 0 };
  uint64_t last_seq = 0, last_t = 0;
  if (!wtc_crash_check (c, "initial", 0, 0, NULL, error))
    return false;
  while (!c->full && wtlog_reader_next (r, &rec) == 0) {
    if (!wtc_crash_record (c, &rec, error))
      return false;
    last_seq = rec.seq;
    last_t = rec.t_end;
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  c->torn = st->torn;
  /* Writes after the last flush: an epoch the end of the log (or the tear)
   * closes. */
  if (!c->full && c->epoch_writes) {
    if (!wtc_crash_epoch_end (c, last_seq, last_t, error)
        || !wtc_crash_check (c, "prefix", last_seq, last_t, g_strdup ("end of the log"),
                             error))
      return false;
  }
  wtc_jobs_wait_all (c->jobs);
  if (st->torn)
    c->torn_error = g_strdup_printf ("%s (states end at seq %" PRIu64 ")", st->error,
                                     st->last_seq);
  return true;
}

/* The oracle, when the run has a channel; its findings as comments. */
static bool
wtc_crash_setup_oracle (struct wtc_crash *c, const char *run_dir, const char *log,
                        const struct wtlog_header *h, GError **error)
{
  g_autofree char *channel = c->o->channel ? g_strdup (c->o->channel)
    : g_build_filename (run_dir, "channel.bin", NULL);
  if (!c->o->channel && !g_file_test (channel, G_FILE_TEST_EXISTS)) {
    printf ("# no %s: no data verdicts\n", channel);
    return true;
  }
  c->oracle = wtc_oracle_new (log, channel, h->disk_size, error);
  if (!c->oracle)
    return false;
  const GPtrArray *lines = wtc_oracle_warnings (c->oracle);
  for (guint i = 0; i < lines->len; i++)
    g_printerr ("wtrack crash: warning: %s\n", (const char *) g_ptr_array_index (lines, i));
  lines = wtc_oracle_describe (c->oracle);
  for (guint i = 0; i < lines->len; i++)
    printf ("# %s\n", (const char *) g_ptr_array_index (lines, i));
  if (wtc_oracle_checkpoints (c->oracle) == 0)
    printf ("# no checkpoints in %s (the guest's --checkpoint): no data verdicts\n",
            channel);
  return true;
}

/* A state log left by an earlier, longer crash run would pass for one of
 * this run's. */
static void
wtc_crash_remove_old_logs (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    if (g_str_has_prefix (name, "state-") && g_str_has_suffix (name, ".log")) {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      unlink (path);
    }
}

static bool
wtc_crash_setup (struct wtc_crash *c, const char *run_dir, const char *log,
                 const struct wtlog_header *h, const char *base, GError **error)
{
  c->dir = g_build_filename (run_dir, "crash", NULL);
  if (g_mkdir_with_parents (c->dir, 0755) == -1) {
    g_set_error (error, WTC_ERROR, 0, "mkdir: %s: %s", c->dir, g_strerror (errno));
    return false;
  }
  wtc_crash_remove_old_logs (c->dir);
  if (!wtc_crash_setup_oracle (c, run_dir, log, h, error))
    return false;
  g_autofree char *scratch = g_build_filename (c->dir, "scratch.img", NULL);
  c->scratch = wtc_target_create (scratch, h->disk_size, h->disk_size, error);
  if (!c->scratch || !wtc_target_copy_base (c->scratch, base, h->disk_size, error))
    return false;
  if (c->o->reorder) {
    char err[512];
    c->log_fd = wt_open_input (log, O_RDONLY | O_CLOEXEC, err, sizeof err);
    if (c->log_fd < 0) {
      g_set_error (error, WTC_ERROR, 0, "%s", err);
      return false;
    }
    c->epoch_undo = wtc_undo_new (c->dir, error);
    c->subset_undo = c->epoch_undo ? wtc_undo_new (c->dir, error) : NULL;
    if (!c->subset_undo)
      return false;
  }
  c->jobs = wtc_jobs_new (c->scratch, c->dir, c->o->check, (guint) c->o->jobs,
                          wtc_crash_check_done, c, error);
  return c->jobs != NULL;
}

static void
wtc_crash_free (struct wtc_crash *c)
{
  wtc_jobs_free (c->jobs);
  for (guint i = 0; c->states && i < c->states->len; i++) {
    struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, i);
    g_free (s->writes);
    wtc_data_verdict_clear (&s->data);
  }
  if (c->states)
    g_array_unref (c->states);
  if (c->epoch)
    g_array_unref (c->epoch);
  wtc_undo_free (c->epoch_undo);
  wtc_undo_free (c->subset_undo);
  if (c->log_fd >= 0)
    close (c->log_fd);
  if (c->rand)
    g_rand_free (c->rand);
  wtc_target_close (c->scratch);
  wtc_oracle_free (c->oracle);
  g_free (c->dir);
  g_free (c->torn_error);
}

static void
wtc_crash_summary (const struct wtc_crash *c)
{
  printf ("# %u states, %" PRIu64 " failed the check", c->states->len, c->failed_check);
  if (c->oracle && wtc_oracle_checkpoints (c->oracle))
    printf (", %" PRIu64 " failed the data of a checkpoint", c->failed_data);
  printf ("%s%s\n", c->full ? " (stopped at --max-states)" : "",
          c->torn ? " (the log is torn: only the states before the tear)" : "");
}

static int
wtc_crash_main (const struct wtc_crash_opts *o)
{
  const char *run_dir = o->args[0];
  g_autofree char *log = o->log ? g_strdup (o->log) : g_build_filename (run_dir, "writes.wtlog", NULL);
  g_autofree char *base = o->base ? g_strdup (o->base) : g_build_filename (run_dir, "base.img", NULL);
  g_autoptr (GError) error = NULL;
  struct wtlog_header h;
  char err[512];
  struct wtc_crash c = {
    .o = o, .epoch = wtc_epoch_new (), .log_fd = -1,
    .states = g_array_new (false, false, sizeof (struct wtc_crash_state)),
    .rand = g_rand_new_with_seed ((guint32) o->seed),
  };
  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    g_printerr ("wtrack crash: %s\n", err);
    wtc_crash_free (&c);
    return WT_EXIT_ERROR;
  }
  bool ok = true;
  if (!(h.flags & WTLOG_H_DATA)) {
    g_set_error (&error, WTC_ERROR, 0, "%s has no write payloads (recorded without "
                 "data=on): crash states need them", log);
    ok = false;
  }
  if (ok)
    ok = wtc_crash_setup (&c, run_dir, log, &h, base, &error);
  if (ok) {
    printf ("# %4s %-8s %10s %14s %6s %-6s %-10s %s\n", "state", "kind", "seq", "time",
            "status", "check", "data", "writes of the epoch in it");
    ok = wtc_crash_walk (&c, r, &error);
  }
  if (ok && o->json)
    ok = wtc_crash_write_json (&c, o->json, &error);
  if (ok)
    wtc_crash_summary (&c);
  else
    g_printerr ("wtrack crash: %s\n", error->message);
  if (ok && c.torn)
    g_printerr ("wtrack crash: %s\n", c.torn_error);
  /* A torn log is an input that could not be read in full: exit 2, as
   * every other command, with the states before the tear listed. */
  int status = !ok || c.torn ? WT_EXIT_ERROR : c.failed ? WT_EXIT_DAMAGE : WT_EXIT_OK;
  wtlog_reader_close (r);
  wtc_crash_free (&c);
  return status;
}

int
wt_cmd_crash (int argc, char **argv)
{
  struct wtc_crash_opts o = { 0 };
  int status = WT_EXIT_ERROR;
  if (wtc_crash_parse (argc, argv, &o))
    status = wtc_crash_main (&o);
  wtc_crash_opts_free (&o);
  return status;
}
