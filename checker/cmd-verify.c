/* wtrack verify: every sector's last logged hash against the image. */
#include <inttypes.h>
#include <stdio.h>

#include <glib.h>

#include "commands.h"
#include "lib/cli.h"
#include "lib/lastwrite.h"
#include "lib/util.h"
#include "sector-hash.h"
#include "wtlog.h"

/* Sectors a differing run holds: consecutive sectors. */
static guint
wtc_verify_run_end (const GArray *diffs, guint start)
{
  guint end = start + 1;
  while (end < diffs->len
         && g_array_index (diffs, struct wtc_diff, end).sector
            == g_array_index (diffs, struct wtc_diff, end - 1).sector + 1)
    end++;
  return end;
}

static void
wtc_verify_print (const GArray *diffs, uint64_t *runs)
{
  *runs = 0;
  for (guint i = 0; i < diffs->len;) {
    guint end = wtc_verify_run_end (diffs, i);
    const struct wtc_diff *first = &g_array_index (diffs, struct wtc_diff, i);
    printf ("run: sectors %" PRIu64 "-%" PRIu64 " (%u sectors, bytes %" PRIu64 "-%" PRIu64 ")\n",
            first->sector, first->sector + (end - i) - 1, end - i,
            first->sector * WT_SECTOR_SIZE,
            (first->sector + (end - i)) * WT_SECTOR_SIZE - 1);
    for (; i < end; i++) {
      const struct wtc_diff *d = &g_array_index (diffs, struct wtc_diff, i);
      printf ("  sector %" PRIu64 ": image hash %016" PRIx64 ", last logged hash %016" PRIx64
              " (seq %" PRIu64 "%s)\n", d->sector, d->image_hash, d->logged_hash, d->seq,
              d->type == WTLOG_WRITE ? "" : d->type == WTLOG_ZERO ? ", ZERO" : ", TRIM");
    }
    ++*runs;
  }
}

static int
wtc_verify (const char *log, const char *image)
{
  g_autoptr (GError) error = NULL;
  struct wtlog_header h;
  struct wtlog_status st;
  if (!wtc_store_log_applied (log, image, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  g_autoptr (wtc_lastmap) map = wtc_lastmap_from_log (log, &h, &st, NULL, &error);
  if (!map) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  if (st.torn)
    printf ("# log is torn: %s; verifying the %" PRIu64 " records before it\n",
            st.error, st.records);
  g_autoptr (wtc_image) img = wtc_image_open (image, &error);
  if (!img) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  if (wtc_image_size (img) != h.disk_size)
    printf ("# warning: %s is %" PRIu64 " bytes, the log's disk %" PRIu64 "\n",
            image, wtc_image_size (img), h.disk_size);
  uint64_t touched = 0, compared = 0, runs = 0;
  g_autoptr (GArray) diffs = wtc_lastmap_compare (map, img, &touched, &compared, &error);
  if (!diffs) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  wtc_verify_print (diffs, &runs);
  printf ("# %" PRIu64 " sectors touched by %" PRIu64 " records, %" PRIu64
          " compared (%" PRIu64 " partly zeroed, unknown): %u differ in %" PRIu64 " runs%s\n",
          touched, st.records, compared, touched - compared,
          diffs->len, runs, st.torn ? " (log torn: only the records before the tear)" : "");
  if (st.torn) {
    wtc_cli_error ("%s", st.error);
    return WT_EXIT_ERROR;
  }
  return diffs->len ? WT_EXIT_DAMAGE : WT_EXIT_OK;
}

int
wt_cmd_verify (int argc, char **argv)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new ("LOG IMAGE");
  g_option_context_set_summary (ctx, "Compare every sector's last logged hash with the image.");
  g_option_context_set_description (ctx,
    "One pass over LOG keeps, for each disk sector it touched, the hash of its\n"
    "last write (WRITE: its hashes; ZERO and TRIM: a zero sector; FAILED and\n"
    "CHANNEL records are ignored). Then IMAGE is read in sector order and each\n"
    "sector compared. Works on logs without DATA. Every differing sector is\n"
    "printed, grouped into runs of consecutive sectors, then a summary.\n\n"
    "Memory: a hash table of the sectors WRITEs touched, 32 to 64 bytes each\n"
    "(about 128 MiB for 4 GiB of written disk), and the ZERO and TRIM records\n"
    "as ranges, whatever their length.\n\n"
    "Exit status: 0 the image matches, 1 sectors differ, 2 bad usage, unreadable\n"
    "image, or torn log (the records before the tear are still verified).");
  if (!wtc_cli_parse (ctx, &argc, &argv))
    return WT_EXIT_USAGE;
  if (argc != 3) {
    wtc_cli_usage ("expected LOG IMAGE");
    return WT_EXIT_USAGE;
  }
  return wtc_verify (argv[1], argv[2]);
}
