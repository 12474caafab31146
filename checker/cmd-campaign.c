/* wtrack campaign: expand a campaign into cells, collect their results.
 * scripts/wtrack-campaign runs the cells in between (locally or on Slurm). */
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "campaign/campaign.h"
#include "commands.h"
#include "lib/cli.h"

static void
wtc_print_cells (GPtrArray *cells)
{
  for (guint i = 0; i < cells->len; i++) {
    const struct wtc_cell *cell = g_ptr_array_index (cells, i);
    printf ("%s  kernel=%s fs=%s variant=%s workload=%s seed=%" G_GUINT64_FORMAT ":", cell->id,
            cell->kernel, cell->fs, cell->variant ? cell->variant : "-", cell->workload,
            cell->seed);
    for (guint j = 0; j < cell->args->len; j++) {
      g_autofree char *q = g_shell_quote (g_ptr_array_index (cell->args, j));
      printf (" %s", q);
    }
    putchar ('\n');
  }
}

static int
wtc_campaign_expand (int argc, char **argv)
{
  struct wtc_campaign_axes axes = { 0 };
  char *plan = NULL;
  const GOptionEntry entries[] = {
    { "kernels", 0, 0, G_OPTION_ARG_STRING, &axes.kernels, "kernel specs (replace the file's)", "'SPEC...'" },
    { "fs", 0, 0, G_OPTION_ARG_STRING, &axes.fs, "filesystems", "'FS...'" },
    { "workloads", 0, 0, G_OPTION_ARG_STRING, &axes.workloads, "workloads", "'NAME...'" },
    { "seeds", 0, 0, G_OPTION_ARG_STRING, &axes.seeds, "seeds and ranges (1-50)", "'N...'" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &axes.set, "a [campaign] option (repeatable)", "KEY=VALUE" },
    { "plan", 0, 0, G_OPTION_ARG_FILENAME, &plan, "write the plan (tab-separated) to FILE, - for stdout", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[CAMPAIGN]");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx, "Print the cells of a campaign, one a line, with their ids.");
  g_option_context_set_description (ctx,
    "CAMPAIGN is a key file (doc/design-campaigns.md); without it the axes\n"
    "come from the options (defaults: debian:bookworm, ext4, linus2006, seed 1).\n"
    "A cell's id is made of its kernel, fs, variant, workload and seed, so it\n"
    "does not change when axes grow. Exit status: 0, or 2 for a bad campaign\n"
    "or bad usage.");
  int status = WT_EXIT_USAGE;
  if (!wtc_cli_parse (ctx, &argc, &argv))
    ;
  else if (argc > 2)
    wtc_cli_usage ("one campaign file at most");
  else {
    status = WT_EXIT_ERROR;
    g_autoptr (wtc_campaign) c = wtc_campaign_load (argc == 2 ? argv[1] : NULL, &axes, &error);
    if (!c)
      wtc_cli_error ("%s", error->message);
    else {
      g_autoptr (GPtrArray) cells = wtc_campaign_cells (c);
      if (plan && !wtc_plan_write (cells, plan, &error))
        wtc_cli_error ("%s", error->message);
      else {
        if (!plan)
          wtc_print_cells (cells);
        status = WT_EXIT_OK;
      }
    }
  }
  g_free (axes.kernels);
  g_free (axes.fs);
  g_free (axes.workloads);
  g_free (axes.seeds);
  g_strfreev (axes.set);
  g_free (plan);
  return status;
}

static int
wtc_campaign_collect_cmd (int argc, char **argv)
{
  gboolean quiet = FALSE;
  const GOptionEntry entries[] = {
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "do not print summary.txt", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("DIR");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
    "Write DIR/summary.txt, summary.json, results.xml and summary.html from\n"
    "DIR/plan.tsv and each DIR/cells/ID/cell.ini, and print summary.txt.");
  g_option_context_set_description (ctx,
    "A cell without a result made as the plan asks (never run because the\n"
    "campaign was interrupted, lost, an unreadable cell.ini, other arguments or\n"
    "another kernel file: see 'todo') is an error; only a cell --until-fail did\n"
    "not start is 'not run' (<skipped> in results.xml).\n"
    "Exit status: 0 every cell that ran is clean, 1 damage found in some cell,\n"
    "2 a cell could not run or has no result (error), DIR is unreadable, or bad\n"
    "usage.");
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return WT_EXIT_USAGE;
  if (argc != 2) {
    wtc_cli_usage ("expected DIR");
    return WT_EXIT_USAGE;
  }
  int status = WT_EXIT_ERROR;
  if (!wtc_campaign_collect (argv[1], quiet ? NULL : stdout, &status, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return status;
}

static int
wtc_campaign_todo_cmd (int argc, char **argv)
{
  const GOptionEntry entries[] = { { NULL, 0, 0, 0, NULL, NULL, NULL } };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("DIR");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
    "Print the cells of DIR/plan.tsv that have no result made as the plan\n"
    "asks, one a line: ID, a tab, why (no cell.ini, lost, an unreadable\n"
    "cell.ini, other arguments, another kernel). These are what --resume runs.");
  g_option_context_set_description (ctx,
    "A kernel's identity is its file's SHA-256, from DIR/kernels.tsv's fourth\n"
    "column (compared when there). Exit status: 0, or 2 when DIR's plan cannot\n"
    "be read or bad usage.");
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return WT_EXIT_USAGE;
  if (argc != 2) {
    wtc_cli_usage ("expected DIR");
    return WT_EXIT_USAGE;
  }
  if (!wtc_campaign_todo (argv[1], stdout, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return WT_EXIT_OK;
}

static int
wtc_campaign_cell_facts_cmd (int argc, char **argv)
{
  const GOptionEntry entries[] = { { NULL, 0, 0, 0, NULL, NULL, NULL } };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("REPORT.JSON");
  g_autoptr (GError) error = NULL;
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_summary (ctx,
    "Print what a campaign's cell.ini keeps of a cell's report.json, one\n"
    "KEY=VALUE a line: verdict, bad_sectors, page_size and block_size when\n"
    "known, then [classes] (each damage class that occurred) and [timings]\n"
    "(each phase's seconds). scripts/wtrack-campaign calls it for each cell.");
  g_option_context_set_description (ctx,
    "Exit status: 0, or 2 when REPORT.JSON cannot be read or bad usage.");
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return WT_EXIT_USAGE;
  if (argc != 2) {
    wtc_cli_usage ("expected REPORT.JSON");
    return WT_EXIT_USAGE;
  }
  if (!wtc_campaign_cell_facts (argv[1], stdout, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return WT_EXIT_OK;
}

static void
wtc_campaign_help (FILE *out)
{
  fputs ("Usage: wtrack campaign expand|collect|todo|cell-facts [OPTION...] ARGS\n"
         "       wtrack campaign expand [CAMPAIGN] [OPTION...]\n"
         "       wtrack campaign collect DIR\n"
         "       wtrack campaign todo DIR\n"
         "       wtrack campaign cell-facts REPORT.JSON\n\n"
         "The parts of scripts/wtrack-campaign written in C: expand a campaign into\n"
         "cells with stable ids, list the cells without a result made as the plan\n"
         "asks (todo), print what a cell's cell.ini keeps of its report.json\n"
         "(cell-facts), and collect the cells' results into summary.txt,\n"
         "summary.json, results.xml and summary.html. 'wtrack campaign SUBCOMMAND\n"
         "--help' has more.\n", out);
}

int
wt_cmd_campaign (int argc, char **argv)
{
  /* the subcommand names itself in its messages and its --help */
  if (argc >= 2 && strcmp (argv[1], "expand") == 0) {
    wtc_cli_begin ("campaign expand");
    return wtc_campaign_expand (argc - 1, argv + 1);
  }
  if (argc >= 2 && strcmp (argv[1], "collect") == 0) {
    wtc_cli_begin ("campaign collect");
    return wtc_campaign_collect_cmd (argc - 1, argv + 1);
  }
  if (argc >= 2 && strcmp (argv[1], "todo") == 0) {
    wtc_cli_begin ("campaign todo");
    return wtc_campaign_todo_cmd (argc - 1, argv + 1);
  }
  if (argc >= 2 && strcmp (argv[1], "cell-facts") == 0) {
    wtc_cli_begin ("campaign cell-facts");
    return wtc_campaign_cell_facts_cmd (argc - 1, argv + 1);
  }
  if (argc >= 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)) {
    wtc_campaign_help (stdout);
    return WT_EXIT_OK;
  }
  if (argc < 2)
    wtc_cli_usage ("expected a subcommand: expand, collect, todo or cell-facts");
  else
    wtc_cli_usage ("unknown subcommand: %s (expand, collect, todo or cell-facts)", argv[1]);
  return WT_EXIT_USAGE;
}
