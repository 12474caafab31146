/* libFuzzer harness: the guest kernel's trace (trace.txt, written from the
 * guest's TRACE messages; read by checker/check/trace-read.c and joined by
 * trace-join.c), through `wtrack check --trace FILE` on one fixed small
 * run: the log, channel and disk of fuzz-check's seed check/run-data.bin,
 * read once at start from the seeds folder ($WTRACK_FUZZ_SEEDS, else seeds/
 * beside this binary), so that the reader, the join with the run's bad
 * pages, the rules and both reports see every input. The seeds are the
 * real traces of tests/fixtures/trace/. The text report goes to /dev/null,
 * the JSON one to a memory file. */
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
  wtfz_fixed_run ("fuzz-trace", &run);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  const char *trace_path = wtfz_file (3, data, len);
  const char *json = wtfz_file (4, NULL, 0);
  char *argv[] = {
    "check", "--log", (char *) run.log, "--channel", (char *) run.channel, "--image",
    (char *) run.image, "--trace", (char *) trace_path, "--json", (char *) json, NULL,
  };
  wt_cmd_check (11, argv);
  return 0;
}
