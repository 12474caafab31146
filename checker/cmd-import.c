/* wtrack import: another tool's write log as a wtrack log, so dump, replay,
 * verify, check --no-manifest and crash work on it. dm-log-writes (Linux's
 * dm-log-writes target, QEMU's blklogwrites) is the one there is; the
 * conversion is interchange/import.c. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "commands.h"
#include "interchange/interchange.h"
#include "lib/cli.h"

struct wtc_import_opts {
  gint64 disk_size;
  char *channel;
  gboolean verbose;
  char **args;
};

static void
wtc_import_opts_free (struct wtc_import_opts *o)
{
  g_free (o->channel);
  g_strfreev (o->args);
}

static bool
wtc_import_parse (int argc, char **argv, struct wtc_import_opts *o)
{
  o->disk_size = -1;
  GOptionEntry entries[] = {
    { "disk-size", 's', 0, G_OPTION_ARG_INT64, &o->disk_size, "the disk's size in bytes (default: the end of the furthest range the log touches)", "BYTES" },
    { "channel", 'c', 0, G_OPTION_ARG_FILENAME, &o->channel, "where the log's MARKs go, as a wtrack channel (default OUT.channel.bin, written only when there are MARKs)", "FILE" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "say what was imported", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("dm-log-writes IN OUT.wtlog");
  g_option_context_set_summary (ctx,
    "Write a dm-log-writes log (Linux dm-log-writes, QEMU blklogwrites) as a\n"
    "wtrack log with DATA and NOTIME (it has no timestamps: every t_start and\n"
    "t_end is 0). Write entries become WRITE records (FUA kept, hashes\n"
    "computed from the data; an entry over 8 MiB becomes several records of\n"
    "8 MiB, read one at a time), FLUSH entries FLUSH records (a FLUSH entry with\n"
    "data, a write that carried a preflush, becomes FLUSH then WRITE), DISCARD\n"
    "entries TRIM records. MARK entries become MARK messages of a wtrack\n"
    "channel (--channel), each logged as a CHANNEL record where the MARK lay,\n"
    "so replay --to-mark, --list-points and export --channel see them.\n"
    "Only the entries the super block counts are read.\n"
    "Exit status: 0 imported; 2 an error, or a bad entry (the entries before\n"
    "it are imported).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return false;
  if (!o->args || !o->args[0] || !o->args[1] || !o->args[2] || o->args[3]) {
    wtc_cli_usage ("expected dm-log-writes IN OUT.wtlog");
    return false;
  }
  if (strcmp (o->args[0], "dm-log-writes") != 0) {
    wtc_cli_usage ("unknown format: %s: dm-log-writes is the one there is",
                   o->args[0]);
    return false;
  }
  return true;
}

int
wt_cmd_import (int argc, char **argv)
{
  struct wtc_import_opts o = { 0 };
  int status = WT_EXIT_USAGE;
  if (wtc_import_parse (argc, argv, &o))
    {
    struct wtc_import_request req = {
      .in = o.args[1], .out = o.args[2], .channel = o.channel,
      .disk_size = o.disk_size, .verbose = o.verbose,
    };
    status = wtc_import_dmlog (&req);
  }
  wtc_import_opts_free (&o);
  return status;
}
