/* libFuzzer harness: a campaign file (a GKeyFile users write) through
 * `wtrack campaign expand FILE` (checker/cmd-campaign.c,
 * checker/campaign/plan.c): read, validated, expanded into cells and
 * printed, then again with --plan - (the plan.tsv form). stdout is
 * /dev/null. No checksums there: the input is read as it is. */
#include <stdlib.h>

#include "commands.h"
#include "fuzz-util.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc, (void) argv;
  wtfz_quiet_stdout ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  const char *path = wtfz_file (0, data, len);
  char *print[] = { "campaign", "expand", (char *) path, NULL };
  wt_cmd_campaign (3, print);
  char *plan[] = { "campaign", "expand", "--plan", "-", (char *) path, NULL };
  wt_cmd_campaign (5, plan);
  return 0;
}
