/* wtrack check: what the files must contain against what reached the disk,
 * sector by sector, with the log's account of each bad sector. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>

#include "check/check.h"
#include "lib/btrfs-chunks.h"
#include "check/report-html.h"
#include "commands.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/lastwrite.h"
#include "sector-hash.h"

struct wtc_check_opts {
  char *image, *log, *channel, *json, *html, *cold, *fsck, *base, *chunks, *trace;
  int max_runs;
  gboolean no_manifest, quiet, stats;
};

static void
wtc_check_clear (struct wtc_check *c)
{
  wtc_channel_free (c->channel);
  if (c->manifests)
    g_ptr_array_unref (c->manifests);
  g_free (c->channel_error);
  g_free (c->log_error);
  if (c->bad)
    g_array_unref (c->bad);
  g_free (c->files);
  if (c->warnings)
    g_ptr_array_unref (c->warnings);
  if (c->marks)
    g_array_unref (c->marks);
  if (c->mapped)
    g_array_unref (c->mapped);
  wtc_cold_clear (&c->cold);
  if (c->chunks)
    g_array_unref (c->chunks);
  wtc_trace_join_free (c->trace);
}

/* The channel and its final manifest. Returns false when there is no
 * manifest to check against. */
static bool
wtc_check_read_channel (struct wtc_check *c)
{
  g_autoptr (GError) error = NULL;
  c->channel = wtc_channel_read (c->channel_path, &error);
  if (!c->channel) {
    c->channel_error = g_strdup (error->message);
    return false;
  }
  if (c->channel->error)
    c->channel_error = g_strdup (c->channel->error);
  if (!wtc_manifests_parse (c->channel, &c->manifests, &error)) {
    g_autofree char *old = c->channel_error;
    c->channel_error = old ? g_strdup_printf ("%s; %s", old, error->message)
      : g_strdup_printf ("%s: %s", c->channel_path, error->message);
  }
  wtc_check_translate (c, c->manifests, c->channel_path);
  c->mf = wtc_manifest_final (c->manifests);
  return c->mf != NULL;
}

/* --stats: what the check read and how fast, on stderr (scripts/bench-check
 * parses the "mapped data" line). */
static void
wtc_check_stats (const struct wtc_check *c, double log_secs)
{
  double secs = c->read_secs > 0 ? c->read_secs : 1e-9;
  wtc_cli_note ("stats: mapped data %" PRIu64 " bytes in %.3f s: %.0f MB/s",
           c->read_bytes, c->read_secs, (double) c->read_bytes / secs / 1e6);
  wtc_cli_note ("stats: log %" PRIu64 " records in %.3f s; %u bad sectors",
           c->log_status.records, log_secs, c->bad->len);
}

static int
wtc_check_run (struct wtc_check *c, const struct wtc_check_opts *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (wtc_trace) trace = NULL;
  if (o->trace && !(trace = wtc_trace_read (o->trace, &error))) {
    wtc_cli_error ("--trace: %s", error->message);
    return WT_EXIT_ERROR;
  }
  if (!wtc_check_read_channel (c)) {
    wtc_cli_error ("no final manifest in %s%s%s: nothing to check the disk against (--no-manifest checks the log against the image)",
             c->channel_path, c->channel_error ? ": " : "",
             c->channel_error ? c->channel_error : "");
    return WT_EXIT_ERROR;
  }
  if (c->mf->flags & WTMF_FLAG_COLD) {
    wtc_cli_error ("%s: the final manifest is flagged cold (a cold pass's channel, not the run's)",
                   c->channel_path);
    return WT_EXIT_ERROR;
  }
  if (c->mf->sector_size != WT_SECTOR_SIZE || c->mf->hash_id != WT_HASH_XXH3_64) {
    wtc_cli_error ("%s: manifest has sector size %" PRIu32 " and hash id %" PRIu32
             ", only 512 and 1 (XXH3-64) are known", c->channel_path, c->mf->sector_size,
             c->mf->hash_id);
    return WT_EXIT_ERROR;
  }
  if (!wtc_find_bad (c, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  gint64 log_start = g_get_monotonic_time ();
  if (!wtc_log_pass (c, &error)) {
    c->log_error = g_strdup (error->message);
    g_clear_error (&error);
  }
  wtc_classify (c);
  wtc_cold_check (c, o->cold, o->fsck, o->base);
  if (trace)
    c->trace = wtc_trace_join (c, g_steal_pointer (&trace));
  if (o->stats)
    wtc_check_stats (c, (double) (g_get_monotonic_time () - log_start) / 1e6);
  struct wtc_report_opts ro = { o->max_runs, o->quiet };
  wtc_report_text (c, &ro, stdout);
  if (o->json && !wtc_report_json (c, o->json, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  if (o->html && !wtc_report_html (c, o->html, &error)) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  return wtc_exit_status (c);
}

/* --no-manifest: the log's last hash of every sector against the image. */
static void
wtc_nomf_runs (const GArray *diffs, JsonBuilder *b)
{
  wtc_jb_array (b, "disk_runs");
  for (guint i = 0; i < diffs->len;) {
    const struct wtc_diff *d = &g_array_index (diffs, struct wtc_diff, i);
    guint j = i + 1;
    while (j < diffs->len && g_array_index (diffs, struct wtc_diff, j).sector == d->sector + (j - i))
      j++;
    wtc_jb_object (b, NULL);
    wtc_jb_str (b, "class", "lied");
    wtc_jb_u64 (b, "disk_sector", d->sector);
    wtc_jb_u64 (b, "sectors", j - i);
    wtc_jb_u64 (b, "last_write_seq", d->seq);
    json_builder_end_object (b);
    i = j;
  }
  json_builder_end_array (b);
}

static void
wtc_nomf_json (const char *path, const GArray *diffs, const struct wtlog_status *st,
               uint64_t compared)
{
  FILE *out = fopen (path, "w");
  if (!out) {
    wtc_cli_error ("open: %s: %s", path, g_strerror (errno));
    return;
  }
  g_autoptr (JsonBuilder) b = json_builder_new ();
  wtc_jb_object (b, NULL);
  wtc_jb_int (b, "version", 1);
  wtc_jb_str (b, "mode", "no-manifest");
  wtc_jb_str (b, "verdict", diffs->len ? "damaged" : "clean");
  wtc_jb_bool (b, "inputs_complete", !st->torn);
  wtc_jb_u64 (b, "bad_sectors", diffs->len);
  wtc_jb_u64 (b, "compared_sectors", compared);
  wtc_jb_object (b, "by_class");
  wtc_jb_u64 (b, "lied", diffs->len);
  json_builder_end_object (b);
  wtc_jb_object (b, "log");
  wtc_jb_u64 (b, "records", st->records);
  wtc_jb_str (b, "end", st->torn ? "torn" : st->closed ? "closed" : "unclosed");
  json_builder_end_object (b);
  wtc_jb_array (b, "files");
  json_builder_end_array (b);
  wtc_nomf_runs (diffs, b);
  json_builder_end_object (b);
  struct wtc_json_out o;
  wtc_json_out_begin (&o, out);
  wtc_json_out_members (&o, b);
  wtc_json_out_end (&o);
  fclose (out);
}

static int
wtc_check_no_manifest (const struct wtc_check *c, const struct wtc_check_opts *o)
{
  g_autoptr (GError) error = NULL;
  struct wtlog_header h;
  struct wtlog_status st;
  g_autoptr (wtc_lastmap) map = wtc_lastmap_from_log (c->log_path, &h, &st, NULL, &error);
  g_autoptr (wtc_image) img = map ? wtc_image_open (c->image_path, &error) : NULL;
  if (!img) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  uint64_t touched = 0, compared = 0;
  g_autoptr (GArray) diffs = wtc_lastmap_compare (map, img, &touched, &compared, &error);
  if (!diffs) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  if (st.torn)
    printf ("!! LOG TORN: %s; only the %" PRIu64 " records before it were used\n", st.error, st.records);
  printf ("disk: %u of %" PRIu64 " logged sectors differ from the log (class lied)\n",
          diffs->len, compared);
  int shown = 0;
  for (guint i = 0; i < diffs->len && !o->quiet;) {
    const struct wtc_diff *d = &g_array_index (diffs, struct wtc_diff, i);
    guint j = i + 1;
    while (j < diffs->len && g_array_index (diffs, struct wtc_diff, j).sector == d->sector + (j - i))
      j++;
    if (shown++ < o->max_runs)
      printf ("  lied        disk sectors %" PRIu64 "-%" PRIu64 " (%u): differ from the log; last written seq %" PRIu64 "\n",
              d->sector, d->sector + (j - i) - 1, j - i, d->seq);
    i = j;
  }
  if (o->json)
    wtc_nomf_json (o->json, diffs, &st, compared);
  if (st.torn)
    return WT_EXIT_ERROR;
  return diffs->len ? WT_EXIT_DAMAGE : WT_EXIT_OK;
}

static bool
wtc_check_parse (int *argc, char ***argv, struct wtc_check_opts *o)
{
  GOptionEntry entries[] = {
    { "image", 0, 0, G_OPTION_ARG_FILENAME, &o->image, "the disk image (default RUN_DIR/disk.img)", "IMAGE" },
    { "log", 0, 0, G_OPTION_ARG_FILENAME, &o->log, "the write log (default RUN_DIR/writes.wtlog)", "LOG" },
    { "channel", 0, 0, G_OPTION_ARG_FILENAME, &o->channel, "the guest's channel (default RUN_DIR/channel.bin)", "CHANNEL" },
    { "cold", 0, 0, G_OPTION_ARG_FILENAME, &o->cold, "the cold pass's channel (default RUN_DIR/cold.bin when it exists)", "COLD" },
    { "fsck", 0, 0, G_OPTION_ARG_FILENAME, &o->fsck, "fsck of the recovered disk (default RUN_DIR/fsck.txt when it exists)", "FILE" },
    { "btrfs-chunks", 0, 0, G_OPTION_ARG_FILENAME, &o->chunks, "btrfs's chunk map, to turn FIEMAP's logical addresses into disk offsets (default RUN_DIR/btrfs-chunks.txt when it exists)", "FILE" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &o->trace, "the guest kernel's trace (wtrack-run --trace), joined with each bad page (default RUN_DIR/trace.txt when it exists)", "FILE" },
    { "base", 0, 0, G_OPTION_ARG_FILENAME, &o->base, "the disk before the run, to tell stale sectors (default RUN_DIR/base.img)", "IMAGE" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &o->json, "write the full report as JSON to FILE", "FILE" },
    { "html", 0, 0, G_OPTION_ARG_FILENAME, &o->html, "write a self-contained HTML report to FILE (disk map, files, timeline)", "FILE" },
    { "max-runs", 0, 0, G_OPTION_ARG_INT, &o->max_runs, "runs and pages printed per file (default 50; the JSON has all)", "N" },
    { "no-manifest", 0, 0, G_OPTION_ARG_NONE, &o->no_manifest, "only the log against the image (no channel needed)", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "verdict lines only", NULL },
    { "stats", 0, 0, G_OPTION_ARG_NONE, &o->stats, "say on stderr how much was read and how fast", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[RUN_DIR]");
  g_option_context_set_summary (ctx, "Say, sector by sector, what the guest's files lack on the disk, and why.");
  g_option_context_set_description (ctx,
    "Reads the final manifest from the channel (what each file must contain and\n"
    "where its extents lie), maps every file sector to the disk, compares hashes\n"
    "with the image, then looks only the bad sectors up in one pass over the log.\n"
    "Each bad sector gets one class, the first that applies:\n"
    "  unmapped     the file has data there but no disk block\n"
    "  lied         the log's last write of the sector carried the expected content\n"
    "  overwritten  the expected content arrived (seq N), a later write replaced it\n"
    "  misplaced    the expected content was written, to another disk sector\n"
    "               (not one where the manifest expects that same content)\n"
    "  lost         the expected content never arrived\n"
    "Output: a verdict line per file, totals by class, then per damaged file its\n"
    "bad 4 KiB pages (which sectors of each) and its runs (contiguous in the file\n"
    "and on the disk, one class) with the workload op that last wrote them, its\n"
    "time on the log's clock (t=, from the MARKs; ~ when extrapolated), and what\n"
    "the log says of the disk sectors. --json FILE: doc/report-json.md.\n"
    "--html FILE: one page, no server or network needed: the disk map, each\n"
    "file's pages and extents, the timeline of writes, flushes and MARKs\n"
    "(doc/report-html.md).\n"
    "Cold pass (scripts/wtrack-run): cold.bin holds the files as a freshly\n"
    "booted kernel read them back after mounting the disk (journal recovery\n"
    "done). Each file sector whose cold read differs from what it must hold\n"
    "gets one class: missing (past the file's cold end, or no file), unreadable\n"
    "(the read failed), unmapped (no disk block), moved (the file now points at\n"
    "another disk sector than the warm FIEMAP said: both are named), stale (the\n"
    "disk sector holds its pre-run content, base.img) or lost. fsck.txt (the\n"
    "fsck of the recovered disk) is reported; its errors are damage. Written\n"
    "sectors outside every file (metadata) whose disk content is not the log's\n"
    "last write there are named with that write's seq (a lied or torn metadata\n"
    "write the disk lacks): reported, not damage by themselves.\n"
    "Warm sectors the log wrote whose disk still holds the pre-run content are\n"
    "called stale.\n\n"
    "Kernel trace (wtrack-run --trace, trace.txt): each bad page's story from\n"
    "the guest kernel's tracepoints (the ops that wrote it, by their MARKs;\n"
    "dirtying, writeback, page-cache and bio events, on the log's clock through\n"
    "the MARKs) and one finding: device_lost (a bio covered the sector, no\n"
    "write of it reached the disk), bio_reached, bio_missed (written back, no\n"
    "bio covered it), dirty_dropped, deleted_while_dirty, store_not_seen (never\n"
    "marked dirty after the op), not_issued, or cannot_say (events lost or not\n"
    "traced, inode unknown): doc/design.md, \"The kernel's account\".\n\n"
    "Extents flagged unmappable (inline, encoded) are counted as not checkable,\n"
    "not as damage; a DELALLOC extent (never written despite the sync) is not:\n"
    "its sectors that must hold data are lost. Memory grows with the damage, not with the log or the disk\n"
    "(with a cold pass, also with the sectors written outside the files).\n\n"
    "Verdict: damaged (a compared sector differs, warm or cold, or fsck found\n"
    "errors), clean (every sector the\n"
    "manifest places on the disk was compared, once, and matched), or unchecked\n"
    "(nothing differs, but some sectors could not be compared: extents misaligned\n"
    "or off the disk image, a truncated image, file sectors claimed by two\n"
    "extents, or nothing compared at all).\n\n"
    "Exit status: 0 clean, 1 damage found, 2 bad usage or inputs that could not\n"
    "be read or compared in full (torn log, damaged channel, no manifest, a\n"
    "verdict of unchecked, damage with sectors left unchecked): the report still\n"
    "says what could be said.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!wtc_cli_parse (ctx, argc, argv))
    return false;
  if (*argc > 2 || (*argc < 2 && (!o->image || !o->log || (!o->channel && !o->no_manifest)))) {
    wtc_cli_usage ("expected RUN_DIR, or --image, --log and --channel");
    return false;
  }
  if (o->html && o->no_manifest) {
    wtc_cli_usage ("--html needs the manifest: not with --no-manifest");
    return false;
  }
  if (o->max_runs < 0) {
    wtc_cli_usage ("--max-runs: %d is negative", o->max_runs);
    return false;
  }
  return true;
}

int
wt_cmd_check (int argc, char **argv)
{
  struct wtc_check_opts o = { .max_runs = 50 };
  if (!wtc_check_parse (&argc, &argv, &o))
    return WT_EXIT_USAGE;
  const char *dir = argc == 2 ? argv[1] : NULL;
  g_autofree char *image = o.image ? o.image : g_build_filename (dir, "disk.img", NULL);
  g_autofree char *log = o.log ? o.log : g_build_filename (dir, "writes.wtlog", NULL);
  g_autofree char *channel = o.channel ? o.channel
    : dir ? g_build_filename (dir, "channel.bin", NULL) : NULL;
  g_autofree char *json = o.json;
  g_autofree char *html = o.html;
  g_autofree char *cold = o.cold ? o.cold : dir ? g_build_filename (dir, "cold.bin", NULL) : NULL;
  g_autofree char *fsck = o.fsck ? o.fsck : dir ? g_build_filename (dir, "fsck.txt", NULL) : NULL;
  g_autofree char *base = o.base ? o.base : dir ? g_build_filename (dir, "base.img", NULL) : NULL;
  g_autofree char *chunks = o.chunks ? o.chunks
    : dir ? g_build_filename (dir, "btrfs-chunks.txt", NULL) : NULL;
  g_autoptr (GArray) chunk_map = NULL;
  if (chunks && (o.chunks || g_file_test (chunks, G_FILE_TEST_EXISTS))) {
    g_autoptr (GError) cerr = NULL;
    chunk_map = wtc_chunks_read (chunks, &cerr);
    if (!chunk_map) {
      wtc_cli_error ("--btrfs-chunks: %s", cerr->message);
      return WT_EXIT_ERROR;
    }
  }
  g_autofree char *trace = o.trace ? o.trace
    : dir ? g_build_filename (dir, "trace.txt", NULL) : NULL;
  o.trace = trace && (o.trace || g_file_test (trace, G_FILE_TEST_EXISTS)) ? trace : NULL;
  if (o.cold && !g_file_test (o.cold, G_FILE_TEST_EXISTS)) {
    wtc_cli_error ("--cold %s: no such file", o.cold);
    return WT_EXIT_ERROR;
  }
  o.cold = cold;
  o.fsck = fsck;
  o.base = base;
  struct wtc_check c = {
    .image_path = image, .log_path = log, .channel_path = channel,
    .bad = g_array_new (FALSE, TRUE, sizeof (struct wtc_bad)),
    .warnings = g_ptr_array_new_with_free_func (g_free),
    .marks = g_array_new (FALSE, FALSE, sizeof (struct wtc_mark)),
    .mapped = g_array_new (FALSE, FALSE, sizeof (struct wtc_segment)),
    .chunks = g_steal_pointer (&chunk_map),
  };
  g_autoptr (GError) error = NULL;
  if (!wtc_store_log_applied (log, image, &error)) {
    wtc_cli_error ("%s", error->message);
    wtc_check_clear (&c);
    return WT_EXIT_ERROR;
  }
  int status = o.no_manifest ? wtc_check_no_manifest (&c, &o) : wtc_check_run (&c, &o);
  wtc_check_clear (&c);
  return status;
}
