/* wtrack export: a write log in another tool's format. dm-log-writes (the
 * format of Linux's dm-log-writes target, QEMU's blklogwrites and xfstests'
 * replay-log) is the one there is; the conversion is interchange/export.c. */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "commands.h"
#include "interchange/interchange.h"
#include "lib/cli.h"

struct wtc_export_opts {
  char *format;
  char *channel;
  char *base;
  char *final_image;
  gboolean verbose;
  char **args;
};

static void
wtc_export_opts_free (struct wtc_export_opts *o)
{
  g_free (o->format);
  g_free (o->channel);
  g_free (o->base);
  g_free (o->final_image);
  g_strfreev (o->args);
}

static bool
wtc_export_parse (int argc, char **argv, struct wtc_export_opts *o)
{
  GOptionEntry entries[] = {
    { "format", 'f', 0, G_OPTION_ARG_STRING, &o->format, "the format to write: dm-log-writes", "FORMAT" },
    { "channel", 'c', 0, G_OPTION_ARG_FILENAME, &o->channel, "the run's channel.bin: its MARKs become MARK entries", "FILE" },
    { "base", 'b', 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run: needed when a request is not sector-aligned (its sectors are written whole)", "FILE" },
    { "final-image", 0, 0, G_OPTION_ARG_FILENAME, &o->final_image, "the run's image after the run, which holds the bytes of IN_IMAGE writes (default: disk.img beside LOG, when it exists)", "FILE" },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "say what was written and dropped", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->args, NULL, NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("--format dm-log-writes LOG OUT");
  g_option_context_set_summary (ctx,
    "Write a wtrack log (recorded with data=on) as a dm-log-writes log, which\n"
    "xfstests' replay-log and QEMU's blklogwrites read. WRITE records become\n"
    "write entries (FUA kept), ZERO records writes of zeroes, TRIM records\n"
    "DISCARD entries, FLUSH records FLUSH entries, and with --channel the\n"
    "guest's MARKs become MARK entries where their CHANNEL record lies.\n"
    "FAILED requests, OPEN, CLOSE, SAVED and other CHANNEL records are\n"
    "dropped. A WRITE flagged IN_IMAGE (data=on kept its bytes in the run's\n"
    "image only) is written with its bytes from the SAVED records after it\n"
    "and the run's final image (--final-image), checked against its hashes.\n"
    "Sector size 512. Exit status: 0 written, 2 an error.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return false;
  if (!o->format || strcmp (o->format, "dm-log-writes") != 0) {
    wtc_cli_usage ("--format dm-log-writes is required: the only format "
                   "there is");
    return false;
  }
  if (!o->args || !o->args[0] || !o->args[1] || o->args[2]) {
    wtc_cli_usage ("expected LOG and OUT");
    return false;
  }
  return true;
}

int
wt_cmd_export (int argc, char **argv)
{
  struct wtc_export_opts o = { 0 };
  int status = WT_EXIT_USAGE;
  if (wtc_export_parse (argc, argv, &o))
    {
    struct wtc_export_request req = {
      .log = o.args[0], .out = o.args[1], .channel = o.channel, .base = o.base,
      .final_image = o.final_image, .verbose = o.verbose,
    };
    status = wtc_export_dmlog (&req);
  }
  wtc_export_opts_free (&o);
  return status;
}
