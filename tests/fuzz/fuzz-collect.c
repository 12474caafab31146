/* libFuzzer harness: a campaign folder's records through `wtrack campaign
 * collect DIR` and `wtrack campaign todo DIR` (checker/campaign/collect.c,
 * plan.c's plan reader). The input is plan.tsv, kernels.tsv and one cell's
 * cell.ini separated by WTFZ_SEP (fuzz-util.h), written into a private
 * folder laid out as scripts/wtrack-campaign leaves it:
 *
 *   DIR/plan.tsv, DIR/kernels.tsv (none when its part is empty),
 *   DIR/cells/ID/cell.ini, ID the first cell's id in the plan part (the
 *   first field of its first non-empty line; "cell" when that is not one
 *   path component). An empty cell.ini part writes no cell.ini and the
 *   files until-fail and stop (a campaign --until-fail stopped), so both
 *   kinds of cell without a result are read.
 *
 * collect writes its summaries into DIR, and prints summary.txt to stdout
 * (/dev/null). No checksums there: the input is read as it is. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "fuzz-util.h"

static char cell_dir[PATH_MAX]; /* the cell folder made for the last input */

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc, (void) argv;
  wtfz_quiet_stdout ();
  char cells[PATH_MAX];
  snprintf (cells, sizeof cells, "%s/cells", wtfz_tmpdir ());
  if (mkdir (cells, 0755) != 0) {
    perror (cells);
    abort ();
  }
  return 0;
}

/* The id of the plan's first cell as wtc_plan_read sees it (the text ends
 * at a NUL, lines at '\n', the id at the first tab), into id; "cell" when
 * it is no single path component. */
static void
first_id (const struct wtfz_part *plan, char *id, size_t size)
{
  const char *p = (const char *) plan->p, *end = p + strnlen (p, plan->len);
  while (p < end && *p == '\n')
    p++;
  size_t n = 0;
  while (p + n < end && p[n] != '\t' && p[n] != '\n')
    n++;
  if (!n || n > NAME_MAX || n >= size || memchr (p, '/', n)
      || (p[0] == '.' && (n == 1 || (n == 2 && p[1] == '.'))))
    snprintf (id, size, "cell");
  else
    snprintf (id, size, "%.*s", (int) n, p);
}

static void
put (const char *dir, const char *name, const struct wtfz_part *part, bool keep_empty)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  if (part->len || keep_empty)
    wtfz_write (path, part->p, part->len);
  else if (unlink (path) != 0 && errno != ENOENT) {
    perror (path);
    abort ();
  }
}

/* The previous input's cell folder goes; this one's is made. */
static void
make_cell (const char *dir, const struct wtfz_part *plan, const struct wtfz_part *ini)
{
  char id[PATH_MAX];
  if (cell_dir[0]) {
    char path[PATH_MAX + 16];
    snprintf (path, sizeof path, "%s/cell.ini", cell_dir);
    unlink (path);
    if (rmdir (cell_dir) != 0) {
      perror (cell_dir);
      abort ();
    }
  }
  first_id (plan, id, sizeof id);
  snprintf (cell_dir, sizeof cell_dir, "%s/cells/%s", dir, id);
  if (mkdir (cell_dir, 0755) != 0) {
    perror (cell_dir);
    abort ();
  }
  put (cell_dir, "cell.ini", ini, false);
  struct wtfz_part none = { (const uint8_t *) "", 0 };
  put (dir, "until-fail", &none, !ini->len);
  put (dir, "stop", &none, !ini->len);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  const char *dir = wtfz_tmpdir ();
  struct wtfz_part parts[3];
  wtfz_split (data, len, parts);
  put (dir, "plan.tsv", &parts[0], true);
  put (dir, "kernels.tsv", &parts[1], false);
  make_cell (dir, &parts[0], &parts[2]);
  char *collect[] = { "campaign", "collect", (char *) dir, NULL };
  wt_cmd_campaign (3, collect);
  char *todo[] = { "campaign", "todo", (char *) dir, NULL };
  wt_cmd_campaign (3, todo);
  return 0;
}
