/* Every verdict of wtrack check in one place, so the reports (report-text.c,
 * report-json.c, report-html.c, report-cold.c) only render them: the warm
 * check's (coverage, inputs, the run's and each file's), the page cache's
 * (the guest's read-back), the cold pass's, and the exit status they make. */
#include <string.h>

#include "check/check.h"
#include "commands.h"

/* The warm check. */

bool
wtc_coverage_complete (const struct wtc_check *c)
{
  return c->compared > 0 && c->unchecked == 0 && c->claimed_twice == 0 && !c->image_short;
}

bool
wtc_inputs_complete (const struct wtc_check *c)
{
  return c->log_read && !c->log_status.torn && !c->channel_error && !c->log_error
    && wtc_coverage_complete (c);
}

const char *
wtc_verdict (const struct wtc_check *c)
{
  if (c->bad->len || wtc_cold_damaged (&c->cold))
    return "damaged";
  return wtc_coverage_complete (c) ? "clean" : "unchecked";
}

const char *
wtc_file_verdict (const struct wtc_check *c, uint32_t fi)
{
  const struct wtc_file_stat *st = &c->files[fi];
  if (st->bad)
    return "damaged";
  /* A file with sectors none of which could be compared is not clean. */
  bool unchecked = st->unchecked || (!st->checked && c->mf->files[fi].nsectors);
  return unchecked ? "unchecked" : "clean";
}

const char *
wtc_log_end (const struct wtc_check *c)
{
  if (!c->log_read)
    return "unread";
  return c->log_status.torn ? "torn" : c->log_status.closed ? "closed" : "unclosed";
}

/* The page cache: what the guest read back before the disk was judged. */

const char *
wtc_page_cache_verdict (const struct wtc_check *c)
{
  g_autofree char *rb = wtc_result_value (c, "readback");
  if (!rb)
    return NULL;
  if (strcmp (rb, "match") == 0)
    return "page cache was correct";
  if (strcmp (rb, "mismatch") == 0)
    return "page cache was wrong too";
  return NULL;
}

/* The cold pass. */

bool
wtc_cold_damaged (const struct wtc_cold *k)
{
  bool fsck_bad = k->fsck_ran && strcmp (k->fsck_verdict, "errors") == 0;
  if (!k->ran)
    return fsck_bad;
  /* A cold kernel that could not even mount the disk found damage. */
  return fsck_bad || k->files_damaged || (!k->mf && k->guest_error);
}

const char *
wtc_cold_verdict (const struct wtc_cold *k)
{
  if (!k->ran && !k->fsck_ran)
    return "not run";
  if (wtc_cold_damaged (k))
    return "damaged";
  if (k->ran && !k->mf)
    return "unreadable";
  return "clean";
}

/* The exit status: 2 when the check could not see everything (or the cold
 * pass failed), else 1 for damage warm or cold, 0 clean. */
int
wtc_exit_status (const struct wtc_check *c)
{
  if (!wtc_inputs_complete (c) || (c->cold.ran && c->cold.error))
    return WT_EXIT_ERROR;
  return c->bad->len || wtc_cold_damaged (&c->cold) ? WT_EXIT_DAMAGE : WT_EXIT_OK;
}
