/* The wtrack commands: each lives in checker/cmd-NAME.c, parses its own
 * options (GOptionContext, through wtc_cli_parse) and returns the process
 * exit status: 0 fine / clean, 1 damage or differences found, 2 unreadable
 * input or any other error. Bad usage (an unknown option or command, a
 * missing or extra argument, options that exclude one another) is 2 in
 * every command, WT_EXIT_USAGE, said in `wtrack --help`; a failed write to
 * stdout is 2 too (wtc_cli_close_stdout). */
#ifndef WT_COMMANDS_H
#define WT_COMMANDS_H

#define WT_EXIT_OK 0
#define WT_EXIT_DAMAGE 1
#define WT_EXIT_ERROR 2
#define WT_EXIT_USAGE 2

int wt_cmd_dump (int argc, char **argv);
int wt_cmd_verify (int argc, char **argv);
int wt_cmd_check (int argc, char **argv);
int wt_cmd_replay (int argc, char **argv);
int wt_cmd_crash (int argc, char **argv);
int wt_cmd_export (int argc, char **argv);
int wt_cmd_import (int argc, char **argv);
int wt_cmd_campaign (int argc, char **argv);

#endif
