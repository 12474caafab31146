/* libFuzzer harness: the cold pass's report, cold.bin (a channel whose
 * manifest is flagged cold, written by `wtrack-guest cold`; read by
 * checker/check/cold.c), through `wtrack check --cold FILE` on one fixed
 * small run: the log, channel and disk of fuzz-check's seed
 * check/run-data.bin, read once at start from the seeds folder
 * ($WTRACK_FUZZ_SEEDS, else seeds/ beside this binary). The disk is also
 * the pre-run disk (--base), so that the stale class can be reached. The
 * input is checked as it is, then with its channel and manifest checksums
 * repaired (fuzz-util.c). The text report goes to /dev/null, the JSON one
 * to a memory file. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "fuzz-util.h"

static struct wtfz_run run;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc, (void) argv;
  wtfz_quiet_stdout ();
  wtfz_fixed_run ("fuzz-cold", &run);
  return 0;
}

static void
run_check (const uint8_t *cold, size_t len)
{
  const char *cold_path = wtfz_file (3, cold, len);
  const char *json = wtfz_file (4, NULL, 0);
  char *argv[] = {
    "check", "--log", (char *) run.log, "--channel", (char *) run.channel, "--image",
    (char *) run.image, "--base", (char *) run.image, "--cold", (char *) cold_path,
    "--json", (char *) json, NULL,
  };
  wt_cmd_check (13, argv);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  uint8_t *repaired;
  run_check (data, len);
  if (wtfz_repaired_channel (data, len, &repaired)) {
    run_check (repaired, len);
    free (repaired);
  }
  return 0;
}
