/* Messages, --help and the stdout check of the wtrack commands (lib/cli.h). */
#include "lib/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

void
wtc_cli_begin (const char *command)
{
  g_autofree char *name = g_strconcat ("wtrack ", command, NULL);
  g_set_prgname (name);
}

static const char *
wtc_cli_name (void)
{
  return g_get_prgname () ? g_get_prgname () : "wtrack";
}

/* One line: "NAME: TAG MESSAGE SUFFIX". */
static void
wtc_cli_say (const char *tag, const char *suffix, const char *fmt, va_list ap)
{
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  fprintf (stderr, "%s: %s%s%s\n", wtc_cli_name (), tag, msg, suffix);
}

void
wtc_cli_error (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  wtc_cli_say ("", "", fmt, ap);
  va_end (ap);
}

void
wtc_cli_warning (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  wtc_cli_say ("warning: ", "", fmt, ap);
  va_end (ap);
}

void
wtc_cli_warnings (const GPtrArray *warnings)
{
  for (guint i = 0; warnings && i < warnings->len; i++)
    wtc_cli_warning ("%s", (const char *) g_ptr_array_index (warnings, i));
}

void
wtc_cli_usage (const char *fmt, ...)
{
  g_autofree char *suffix = g_strdup_printf (" (see %s --help)", wtc_cli_name ());
  va_list ap;
  va_start (ap, fmt);
  wtc_cli_say ("", suffix, fmt, ap);
  va_end (ap);
}

/* glib's help starts "Usage:\n  PROGRAM [OPTION…] PARAMETERS": joined into
 * one line, so the first line names the command, and in ASCII (the rest of
 * the text is), so it reads the same in every locale. Written with stdio,
 * not g_print, which flushes: a failed write keeps its reason until the
 * check at exit. */
static void
wtc_cli_print_help (GOptionContext *ctx)
{
  g_autofree char *help = g_option_context_get_help (ctx, TRUE, NULL);
  char *nl = strstr (help, "\n  ");
  char *para = strstr (help, "\n\n");
  if (nl && (!para || nl < para)) {
    *nl = ' ';
    memmove (nl + 1, nl + 3, strlen (nl + 3) + 1);
  }
  g_auto (GStrv) parts = g_strsplit (help, "\u2026", -1);
  g_autofree char *ascii = g_strjoinv ("...", parts);
  fputs (ascii, stdout);
}

bool
wtc_cli_parse (GOptionContext *ctx, int *argc, char ***argv)
{
  gboolean help = FALSE;
  const GOptionEntry help_entries[] = {
    { "help", 'h', 0, G_OPTION_ARG_NONE, &help, "show this help and exit", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_option_context_set_help_enabled (ctx, FALSE);
  g_option_context_add_main_entries (ctx, help_entries, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &error)) {
    wtc_cli_usage ("%s", error->message);
    return false;
  }
  if (help) {
    wtc_cli_print_help (ctx);
    exit (WT_EXIT_OK);
  }
  return true;
}

void
wtc_cli_close_stdout (void)
{
  bool pending = __fpending (stdout) != 0;
  bool failed_before = ferror (stdout) != 0;
  bool close_failed = fclose (stdout) != 0;
  int err = errno;
  /* A stdout closed before we started (EBADF) with nothing to write is no
   * error; a reader that went away (EPIPE) is not ours to report. */
  if (!failed_before && !(close_failed && (pending || err != EBADF)))
    return;
  if (close_failed && err == EPIPE)
    return;
  if (close_failed)
    wtc_cli_error ("write: stdout: %s", g_strerror (err));
  else
    wtc_cli_error ("write: stdout: an earlier write failed");
  _exit (WT_EXIT_ERROR);
}
