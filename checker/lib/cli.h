/* How every wtrack command speaks to its user: its messages on stderr, each
 * prefixed once with "wtrack NAME: ", its --help on stdout with the usage
 * on the first line, and stdout checked at exit. Only checker/wtrack.c and
 * the cmd-*.c files call these: library code returns its errors (GError)
 * and warnings (a GPtrArray of strings) to the command, which prints them. */
#ifndef WTC_LIB_CLI_H
#define WTC_LIB_CLI_H

#include <stdbool.h>

#include <glib.h>

/* Names the command in every later message and in its --help: "wtrack
 * NAME" (the program name glib's option parser uses). Before it, messages
 * say "wtrack: ". */
void wtc_cli_begin (const char *command);

/* "wtrack NAME: MESSAGE": what failed, or a note the user asked for
 * (--verbose, --stats). */
void wtc_cli_error (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
#define wtc_cli_note wtc_cli_error
/* "wtrack NAME: warning: MESSAGE" */
void wtc_cli_warning (const char *fmt, ...) G_GNUC_PRINTF (1, 2);
/* Each string of warnings (NULL: none) as a warning. */
void wtc_cli_warnings (const GPtrArray *warnings);
/* Bad usage: "wtrack NAME: MESSAGE (see wtrack NAME --help)"; the command
 * then exits WT_EXIT_USAGE. */
void wtc_cli_usage (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

/* Parses the command's options. -h and --help print the help to stdout,
 * "Usage: wtrack NAME [OPTION...] PARAMETERS" on its first line, and exit
 * 0 (as glib's own --help does); an option glib refuses is bad usage
 * (reported here). Returns false after bad usage. */
bool wtc_cli_parse (GOptionContext *ctx, int *argc, char ***argv);

/* At exit: a write to stdout that failed (a full disk, a closed pipe's
 * EIO) is an error, "wtrack NAME: write: stdout: REASON", exit status 2,
 * as git and util-linux do. wtrack.c registers it with atexit once. */
void wtc_cli_close_stdout (void);

#endif
