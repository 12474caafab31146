/* wtrack crash: the disks a power cut could have left, each checked by a
 * command and by the checkpoint oracle: the options, then the walk over
 * the log (crash/crash.h describes the states and the stages). */
#include <inttypes.h>
#include <stdio.h>

#include <glib.h>

#include "commands.h"
#include "crash/crash.h"
#include "lib/cli.h"
#include "lib/target.h"
#include "lib/util.h"
#include "wtlog.h"

static void
wtc_crash_opts_free (struct wtc_crash_opts *o)
{
  g_free (o->check);
  g_free (o->log);
  g_free (o->base);
  g_free (o->final_image);
  g_free (o->json);
  g_free (o->channel);
  g_free (o->chunks);
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
    { "btrfs-chunks", 0, 0, G_OPTION_ARG_FILENAME, &o->chunks, "btrfs's chunk map, for the oracle's extents (default RUN_DIR/btrfs-chunks.txt when it exists)", "FILE" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log, "the write log (default RUN_DIR/writes.wtlog)", "LOG" },
    { "base", 0, 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run (default RUN_DIR/base.img)", "FILE" },
    { "final-image", 0, 0, G_OPTION_ARG_FILENAME, &o->final_image, "the run's image after the run, which holds the bytes of IN_IMAGE writes (default: disk.img beside the log, when it exists)", "FILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN_DIR --check CMD");
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
    "A WRITE flagged IN_IMAGE (data=on kept its bytes in the run's image\n"
    "only) is written from the SAVED records after it and the run's final\n"
    "image (--final-image), checked against its hashes.\n"
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
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return false;
  if (!o->args || !o->args[0] || o->args[1] || !o->check) {
    wtc_cli_usage ("expected RUN_DIR and --check CMD");
    return false;
  }
  if (o->reorder < 0 || o->max_states < 0 || o->jobs < 0) {
    wtc_cli_usage ("--reorder, --max-states and --jobs take a count from 0");
    return false;
  }
  if (o->jobs == 0)
    o->jobs = (gint) g_get_num_processors ();
  return true;
}

/* What left some checkpoints unusable. */
static void
wtc_crash_warn_oracle (const struct wtc_crash *c)
{
  const GPtrArray *lines = c->oracle ? wtc_oracle_warnings (c->oracle) : NULL;
  for (guint i = 0; lines && i < lines->len; i++)
    wtc_cli_warning ("%s", (const char *) g_ptr_array_index (lines, i));
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
    .warnings = g_ptr_array_new_with_free_func (g_free),
  };
  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    wtc_cli_error ("%s", err);
    wtc_crash_free (&c);
    return WT_EXIT_ERROR;
  }
  bool ok = wtc_log_needs_payloads (log, &h, "each crash state", &error)
    && wtc_crash_setup (&c, run_dir, log, &h, base, &error);
  if (ok) {
    wtc_crash_warn_oracle (&c);
    wtc_crash_print_oracle (&c);
    wtc_crash_print_header ();
    ok = wtc_crash_walk (&c, r, &error);
    wtc_cli_warnings (c.warnings);
  }
  if (ok && o->json)
    ok = wtc_crash_write_json (&c, o->json, &error);
  if (ok)
    wtc_crash_summary (&c);
  else
    wtc_cli_error ("%s", error->message);
  if (ok && c.torn)
    wtc_cli_error ("%s", c.torn_error);
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
  int status = WT_EXIT_USAGE;
  if (wtc_crash_parse (argc, argv, &o))
    status = wtc_crash_main (&o);
  wtc_crash_opts_free (&o);
  return status;
}
