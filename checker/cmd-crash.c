/* wtrack crash: the disks a power cut could have left, each checked by a
 * command. Prefix states: the disk after every FLUSH and every FUA write
 * (what was durable then). With --reorder N: for every epoch between two
 * flushes, N states made of the epoch's starting disk plus a subset of the
 * epoch's writes (CrashMonkey's idea: what the device had not persisted yet
 * may have reached the media in any order). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "check-util.h"
#include "commands.h"
#include "crash-epoch.h"
#include "replay-target.h"
#include "wtlog.h"

struct wtc_crash_opts {
  char *check;
  char *log;
  char *base;
  char *json;
  gint reorder;
  gint64 seed;
  gint max_states;
  char **args;
};

struct wtc_crash_state {
  uint64_t number;
  const char *kind;             /* "prefix" or "reorder" */
  uint64_t seq;                 /* the record the state follows */
  uint64_t t_ns;
  char *writes;                 /* reorder: the seqs of the epoch's writes in it */
  int status;                   /* the check's exit status (-1: did not run) */
};

struct wtc_crash {
  const struct wtc_crash_opts *o;
  char *dir;                    /* RUN_DIR/crash */
  struct wtc_target *scratch;
  GArray *epoch;                /* struct wtc_epoch_write since the last flush */
  GArray *epoch_undo;           /* what the epoch's writes overwrote */
  GArray *states;               /* struct wtc_crash_state */
  GRand *rand;
  uint64_t failed;
  bool full;                    /* --max-states reached */
};

static void
wtc_crash_opts_free (struct wtc_crash_opts *o)
{
  g_free (o->check);
  g_free (o->log);
  g_free (o->base);
  g_free (o->json);
  g_strfreev (o->args);
}

static bool
wtc_crash_parse (int argc, char **argv, struct wtc_crash_opts *o)
{
  o->seed = 1;
  GOptionEntry entries[] = {
    { "check", 'c', 0, G_OPTION_ARG_STRING, &o->check, "the command run on every state, {} replaced by the image's path (through /bin/sh -c); it must not change the image", "CMD" },
    { "reorder", 'r', 0, G_OPTION_ARG_INT, &o->reorder, "N states per epoch with a random subset of its writes (all subsets when there are no more than N)", "N" },
    { "seed", 's', 0, G_OPTION_ARG_INT64, &o->seed, "seed of the subsets (default 1)", "S" },
    { "max-states", 'm', 0, G_OPTION_ARG_INT, &o->max_states, "stop after N states", "N" },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "write the states and their verdicts as JSON to FILE", "FILE" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log, "the write log (default RUN_DIR/writes.wtlog)", "LOG" },
    { "base", 0, 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run (default RUN_DIR/base.img)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, "RUN_DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN_DIR --check CMD");
  g_autoptr (GError) error = NULL;
  g_option_context_set_summary (ctx,
    "Make every disk a crash could have left from the run's log (recorded\n"
    "with data=on) and base.img, one after the other in RUN_DIR/crash/scratch.img,\n"
    "changing only what differs from the state before, and run CMD on each.\n"
    "Its output goes to RUN_DIR/crash/state-N.log. Prints a table: state,\n"
    "kind (prefix, reorder), the seq and time it follows, the check's status.\n"
    "Exit status: 0 every check passed, 1 some failed, 2 an error.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
    g_printerr ("wtrack crash: %s\n", error->message);
    return false;
  }
  if (!o->args || !o->args[0] || o->args[1] || !o->check) {
    g_printerr ("wtrack crash: expected RUN_DIR and --check CMD (see wtrack crash --help)\n");
    return false;
  }
  if (o->reorder < 0 || o->max_states < 0) {
    g_printerr ("wtrack crash: --reorder and --max-states take a count from 0\n");
    return false;
  }
  return true;
}

/* Checks. */

static char *
wtc_crash_command (const char *cmd, const char *image)
{
  g_autofree char *quoted = g_shell_quote (image);
  g_auto (GStrv) parts = g_strsplit (cmd, "{}", -1);
  return g_strjoinv (quoted, parts);
}

/* Runs the check with its output in log_path; returns its exit status,
 * 128 + signal when killed, -1 when it could not run. */
static int
wtc_crash_run_check (const char *cmd, const char *image, const char *log_path)
{
  g_autofree char *line = wtc_crash_command (cmd, image);
  int out = open (log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    g_printerr ("wtrack crash: open: %s: %s\n", log_path, g_strerror (errno));
    return -1;
  }
  fflush (NULL);
  pid_t pid = fork ();
  if (pid == 0) {
    dup2 (out, STDOUT_FILENO);
    dup2 (out, STDERR_FILENO);
    execl ("/bin/sh", "sh", "-c", line, (char *) NULL);
    _exit (127);
  }
  close (out);
  int status;
  if (pid < 0 || waitpid (pid, &status, 0) < 0) {
    g_printerr ("wtrack crash: run: %s: %s\n", line, g_strerror (errno));
    return -1;
  }
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static void
wtc_crash_print_state (const struct wtc_crash_state *s)
{
  char t[32];
  printf ("%6" PRIu64 " %-8s %10" PRIu64 " %14s %6d %-8s %s\n", s->number, s->kind,
          s->seq, wtc_fmt_secs (s->t_ns, t, sizeof t), s->status,
          s->status == 0 ? "ok" : "FAILED", s->writes ? s->writes : "");
  fflush (stdout);
}

static void
wtc_crash_check (struct wtc_crash *c, const char *kind, uint64_t seq,
                 uint64_t t_ns, char *writes)
{
  if (c->full) {
    g_free (writes);
    return;
  }
  struct wtc_crash_state s = {
    .number = c->states->len + 1, .kind = kind, .seq = seq, .t_ns = t_ns,
    .writes = writes,
  };
  g_autofree char *log_path = g_strdup_printf ("%s/state-%" PRIu64 ".log", c->dir,
                                               s.number);
  s.status = wtc_crash_run_check (c->o->check, c->scratch->path, log_path);
  if (s.status != 0)
    c->failed++;
  wtc_crash_print_state (&s);
  g_array_append_val (c->states, s);
  if (c->o->max_states && c->states->len >= (guint) c->o->max_states)
    c->full = true;
}

/* Reordered states. */

/* Subset number k of the epoch's writes: bit i includes write i. Few
 * writes: every proper, non-empty subset in turn; more: random ones. */
static uint64_t
wtc_crash_subset (struct wtc_crash *c, guint nwrites, guint k)
{
  uint64_t all = nwrites >= 64 ? UINT64_MAX : ((uint64_t) 1 << nwrites) - 1;
  if (nwrites < 64 && all - 1 <= (uint64_t) c->o->reorder)
    return k + 1;
  uint64_t bits;
  do {
    bits = 0;
    for (guint i = 0; i < nwrites && i < 64; i++)
      if (g_rand_boolean (c->rand))
        bits |= (uint64_t) 1 << i;
  } while (bits == 0 || bits == all);
  return bits;
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
wtc_crash_reorder_one (struct wtc_crash *c, uint64_t bits, uint64_t seq,
                       uint64_t t_ns, GError **error)
{
  g_autoptr (GArray) undo = wtc_undo_new ();
  GString *writes = g_string_new ("writes");
  for (guint i = 0; i < c->epoch->len && i < 64; i++) {
    if (!(bits & ((uint64_t) 1 << i)))
      continue;
    const struct wtc_epoch_write *w = &g_array_index (c->epoch, struct wtc_epoch_write, i);
    g_string_append_printf (writes, "%s%" PRIu64, writes->len > 6 ? "," : " ", w->seq);
    if (!wtc_epoch_apply (c->scratch, w, undo, error)) {
      g_string_free (writes, true);
      return false;
    }
  }
  wtc_crash_check (c, "reorder", seq, t_ns, g_string_free (writes, false));
  return wtc_undo_all (c->scratch, undo, error);
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
  for (guint k = 0; k < n && !c->full; k++)
    if (!wtc_crash_reorder_one (c, wtc_crash_subset (c, c->epoch->len, k), seq,
                                t_ns, error))
      return false;
  for (guint i = 0; i < c->epoch->len; i++)
    if (!wtc_epoch_apply (c->scratch, &g_array_index (c->epoch, struct wtc_epoch_write, i),
                          NULL, error))
      return false;
  return true;
}

/* A flush (or the end of the log) closes the epoch. */
static bool
wtc_crash_epoch_end (struct wtc_crash *c, uint64_t seq, uint64_t t_ns, GError **error)
{
  if (c->o->reorder && !wtc_crash_reorder_epoch (c, seq, t_ns, error))
    return false;
  g_array_set_size (c->epoch, 0);
  g_array_set_size (c->epoch_undo, 0);
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
    wtc_epoch_add (c->epoch, rec);
    const struct wtc_epoch_write *w =
      &g_array_index (c->epoch, struct wtc_epoch_write, c->epoch->len - 1);
    if (!wtc_epoch_apply (c->scratch, w, c->epoch_undo, error))
      return false;
    if (rec->flags & WTLOG_F_FUA)
      wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL);
    return true;
  }
  if (rec->type == WTLOG_FLUSH && !(rec->flags & WTLOG_F_FAILED)) {
    if (!wtc_crash_epoch_end (c, rec->seq, rec->t_end, error))
      return false;
    wtc_crash_check (c, "prefix", rec->seq, rec->t_end, NULL);
  }
  return true;
}

/* Output. */

static bool
wtc_crash_write_json (const struct wtc_crash *c, const char *path, GError **error)
{
  FILE *f = fopen (path, "w");
  if (!f) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", path, g_strerror (errno));
    return false;
  }
  fprintf (f, "{\"version\":1,\"states\":[");
  for (guint i = 0; i < c->states->len; i++) {
    const struct wtc_crash_state *s = &g_array_index (c->states, struct wtc_crash_state, i);
    fprintf (f, "%s{\"state\":%" PRIu64 ",\"kind\":\"%s\",\"seq\":%" PRIu64
             ",\"t_ns\":%" PRIu64 ",\"status\":%d,\"writes\":", i ? "," : "",
             s->number, s->kind, s->seq, s->t_ns, s->status);
    wtc_json_str (f, s->writes ? s->writes : "");
    fprintf (f, "}");
  }
  fprintf (f, "],\"failed\":%" PRIu64 "}\n", c->failed);
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
  while (!c->full && wtlog_reader_next (r, &rec) == 0) {
    if (!wtc_crash_record (c, &rec, error))
      return false;
    last_seq = rec.seq;
    last_t = rec.t_end;
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (st->torn)
    g_printerr ("wtrack crash: warning: %s (states end at seq %" PRIu64 ")\n",
                st->error, st->last_seq);
  /* Writes after the last flush: an epoch the end of the log closes. */
  if (!c->full && c->epoch->len) {
    if (!wtc_crash_epoch_end (c, last_seq, last_t, error))
      return false;
    wtc_crash_check (c, "prefix", last_seq, last_t, g_strdup ("end of the log"));
  }
  return true;
}

static bool
wtc_crash_setup (struct wtc_crash *c, const char *run_dir, const struct wtlog_header *h,
                 const char *base, GError **error)
{
  c->dir = g_build_filename (run_dir, "crash", NULL);
  if (g_mkdir_with_parents (c->dir, 0755) == -1) {
    g_set_error (error, WTC_ERROR, 0, "mkdir: %s: %s", c->dir, g_strerror (errno));
    return false;
  }
  g_autofree char *scratch = g_build_filename (c->dir, "scratch.img", NULL);
  c->scratch = wtc_target_create (scratch, h->disk_size, h->disk_size, error);
  return c->scratch && wtc_target_copy_base (c->scratch, base, h->disk_size, error);
}

static void
wtc_crash_free (struct wtc_crash *c)
{
  for (guint i = 0; c->states && i < c->states->len; i++)
    g_free (g_array_index (c->states, struct wtc_crash_state, i).writes);
  if (c->states)
    g_array_unref (c->states);
  if (c->epoch)
    g_array_unref (c->epoch);
  if (c->epoch_undo)
    g_array_unref (c->epoch_undo);
  if (c->rand)
    g_rand_free (c->rand);
  wtc_target_close (c->scratch);
  g_free (c->dir);
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
    .o = o, .epoch = wtc_epoch_new (), .epoch_undo = wtc_undo_new (),
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
  if (ok) {
    printf ("# %4s %-8s %10s %14s %6s %-8s %s\n", "state", "kind", "seq", "time",
            "status", "check", "writes of the epoch in it");
    ok = wtc_crash_setup (&c, run_dir, &h, base, &error) && wtc_crash_walk (&c, r, &error);
  }
  if (ok && o->json)
    ok = wtc_crash_write_json (&c, o->json, &error);
  if (ok)
    printf ("# %u states, %" PRIu64 " failed the check%s\n", c.states->len, c.failed,
            c.full ? " (stopped at --max-states)" : "");
  else
    g_printerr ("wtrack crash: %s\n", error->message);
  int status = !ok ? WT_EXIT_ERROR : c.failed ? WT_EXIT_DAMAGE : WT_EXIT_OK;
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
