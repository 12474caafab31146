/* wtrack: the host command; dispatches to checker/cmd-*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "lib/cli.h"

struct wt_command {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
};

/* One line per command; a command appears here once it is implemented. */
static const struct wt_command wt_commands[] = {
  { "check", wt_cmd_check, "say sector by sector what the files lack on the disk" },
  { "dump", wt_cmd_dump, "print a write log or a channel record by record" },
  { "verify", wt_cmd_verify, "compare every sector's last logged hash with the image" },
  { "replay", wt_cmd_replay, "write the disk as the log says it was, at the end or at a point" },
  { "export", wt_cmd_export, "write a log in dm-log-writes format" },
  { "import", wt_cmd_import, "read a dm-log-writes log (Linux, QEMU blklogwrites) into a wtrack log" },
  { "crash", wt_cmd_crash, "check every disk a crash could have left (prefix and reordered states)" },
  { "campaign", wt_cmd_campaign, "expand a campaign into cells; collect their results (scripts/wtrack-campaign)" },
  { NULL, NULL, NULL },
};

static void
wt_usage (FILE *out)
{
  fprintf (out, "Usage: wtrack COMMAND [OPTION...] ARGS...\n\n"
           "Find lost writes: compare what a guest's files must contain with what\n"
           "reached the disk, using the write log recorded by nbdkit-wtrack-plugin.\n\n"
           "Commands:\n");
  for (const struct wt_command *c = wt_commands; c->name; c++)
    fprintf (out, "  %-8s %s\n", c->name, c->summary);
  fprintf (out, "\n'wtrack COMMAND --help' describes each command.\n"
           "Exit status: 0 clean, 1 damage or differences found, 2 an error or bad\n"
           "usage (in every command; a failed write to stdout is an error).\n");
}

int
main (int argc, char **argv)
{
  g_set_prgname ("wtrack");
  /* Once for every command, and for the help glib's parser prints. */
  atexit (wtc_cli_close_stdout);
  if (argc < 2) {
    wt_usage (stderr);
    return WT_EXIT_USAGE;
  }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0) {
    wt_usage (stdout);
    return WT_EXIT_OK;
  }
  if (strcmp (argv[1], "--version") == 0) {
    printf ("wtrack %s\n", WT_VERSION);
    return WT_EXIT_OK;
  }
  for (const struct wt_command *c = wt_commands; c->name; c++)
    if (strcmp (argv[1], c->name) == 0) {
      wtc_cli_begin (c->name);
      return c->run (argc - 1, argv + 1);
    }
  wtc_cli_usage ("unknown command: %s", argv[1]);
  return WT_EXIT_USAGE;
}
