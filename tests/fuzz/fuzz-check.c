/* libFuzzer harness: the whole `wtrack check` (checker/cmd-check.c and the
 * stages it calls) on a small run: the input is the log, the channel and
 * the disk image separated by WTFZ_SEP (fuzz-util.h). They are checked
 * with their checksums repaired (the raw ones are what fuzz-wtlog and
 * fuzz-channel cover), with the manifest and with --no-manifest. The text
 * report goes to /dev/null, the JSON one to a memory file. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "fuzz-util.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc, (void) argv;
  int null = open ("/dev/null", O_WRONLY);
  if (null < 0 || dup2 (null, STDOUT_FILENO) < 0)
    abort ();
  close (null);
  return 0;
}

static void
run_check (const char *log, const char *channel, const char *image, bool no_manifest)
{
  const char *json = wtfz_file (3, NULL, 0);
  char *argv[] = {
    "check", "--log", (char *) log, "--channel", (char *) channel, "--image",
    (char *) image, "--json", (char *) json, no_manifest ? "--no-manifest" : NULL, NULL,
  };
  int argc = no_manifest ? 10 : 9;
  wt_cmd_check (argc, argv);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  uint8_t *copy = malloc (len ? len : 1);
  if (!copy)
    abort ();
  memcpy (copy, data, len);
  struct wtfz_part parts[3];
  wtfz_split (copy, len, parts);
  wtfz_repair_wtlog ((uint8_t *) parts[0].p, parts[0].len);
  wtfz_repair_channel ((uint8_t *) parts[1].p, parts[1].len);
  const char *log = wtfz_file (0, parts[0].p, parts[0].len);
  const char *channel = wtfz_file (1, parts[1].p, parts[1].len);
  const char *image = wtfz_file (2, parts[2].p, parts[2].len);
  run_check (log, channel, image, false);
  run_check (log, channel, image, true);
  free (copy);
  return 0;
}
