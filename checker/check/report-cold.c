/* The cold section of the text and JSON reports (doc/report-json.md
 * "cold"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "lib/json.h"
#include "lib/lastwrite.h"
#include "sector-hash.h"

static void
wtc_cold_text_sector (uint64_t s, guint count, FILE *out)
{
  if (s == WTC_NO_SECTOR)
    fputs ("no disk block", out);
  else if (count == 1)
    fprintf (out, "disk sector %" PRIu64, s);
  else
    fprintf (out, "disk sectors %" PRIu64 "-%" PRIu64, s, s + count - 1);
}

static void
wtc_cold_text_last (const struct wtc_cold_bad *b, FILE *out)
{
  char t[32];
  if (b->cold_disk == WTC_NO_SECTOR)
    return;
  if (b->last_seq)
    fprintf (out, "; last logged write there seq %" PRIu64 " at t=%s", b->last_seq,
             wtc_fmt_secs (b->last_t, t, sizeof t));
  else
    fputs ("; never written during the run", out);
}

static void
wtc_cold_text_run (const struct wtc_cold *k, const struct wtc_cold_run *r, FILE *out)
{
  const struct wtc_cold_bad *b = &g_array_index (k->bad, struct wtc_cold_bad, r->first);
  char ebuf[64];
  fprintf (out, "  %-11s file offset %" PRIu64 " (%u sector%s): ", wtc_cold_class_name (b->cls),
           b->file_sector * WT_SECTOR_SIZE, r->count, r->count == 1 ? "" : "s");
  switch (b->cls) {
  case WTC_COLD_MISSING:
    fputs (k->files[b->file].error ? "the file cannot be read after the reboot"
           : "past the file's end after the reboot", out);
    break;
  case WTC_COLD_UNREADABLE:
    fprintf (out, "the read failed: %s", wtc_errno_name (b->err, ebuf, sizeof ebuf));
    break;
  case WTC_COLD_UNMAPPED:
    fputs ("the file has no disk block there now (reads zeros)", out);
    break;
  case WTC_COLD_MOVED:
    fputs ("the file system now points at ", out);
    wtc_cold_text_sector (b->cold_disk, r->count, out);
    fputs (" instead of ", out);
    wtc_cold_text_sector (b->warm_disk, r->count, out);
    if (b->warm_holds)
      fputs (r->count == 1 ? " (which still holds the data)" : " (which still hold the data)", out);
    break;
  case WTC_COLD_STALE:
    wtc_cold_text_sector (b->cold_disk, r->count, out);
    fputs (r->count == 1 ? " holds its pre-run content (stale: the write never replaced it)"
           : " hold their pre-run content (stale: the write never replaced it)", out);
    break;
  default:
    wtc_cold_text_sector (b->cold_disk, r->count, out);
    fputs (r->count == 1 ? " reads other content than the file must hold"
           : " read other content than the file must hold", out);
    break;
  }
  wtc_cold_text_last (b, out);
  fputc ('\n', out);
}

static void
wtc_cold_text_file (const struct wtc_check *c, uint32_t fi, int max_runs, FILE *out)
{
  const struct wtc_cold *k = &c->cold;
  const struct wtc_cold_file *cf = &k->files[fi];
  const struct wtmf_file *wf = &c->mf->files[fi];
  g_autofree char *path = wtc_text_safe (wf->path);
  char ebuf[64];
  fprintf (out, "\ncold %s:", path);
  if (cf->error)
    fprintf (out, " cannot be opened after the reboot: %s", wtc_errno_name (cf->error, ebuf,
                                                                          sizeof ebuf));
  else if (cf->cold_size != wf->size)
    fprintf (out, " size changed: %" PRIu64 " bytes, now %" PRIu64, wf->size, cf->cold_size);
  if (cf->bad)
    fprintf (out, "%s %" PRIu64 " of %" PRIu64 " sectors differ", cf->error
             || cf->cold_size != wf->size ? ";" : "", cf->bad, wf->nsectors);
  fputc ('\n', out);
  g_autoptr (GArray) runs = wtc_cold_file_runs (k, fi);
  for (guint i = 0; i < runs->len && (int) i < max_runs; i++)
    wtc_cold_text_run (k, &g_array_index (runs, struct wtc_cold_run, i), out);
  if ((int) runs->len > max_runs)
    fprintf (out, "  ... %u more runs (--max-runs, or the JSON report)\n",
             runs->len - (guint) max_runs);
}

/* The written sectors outside the files that the disk lacks: a line, and
 * unless max_runs < 0 the runs, each with the logged write it lacks. */
static void
wtc_cold_text_meta (const struct wtc_cold *k, int max_runs, FILE *out)
{
  if (!k->meta_lacking || !k->meta_lacking->len)
    return;
  g_autoptr (GArray) runs = wtc_cold_meta_runs (k);
  guint n = k->meta_lacking->len;
  fprintf (out, "metadata: %u written sector%s outside the files differ%s from %s last logged "
           "write, in %u run%s (the disk lacks writes the kernel was told were done: lied or "
           "torn)\n", n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "its" : "their",
           runs->len, runs->len == 1 ? "" : "s");
  for (guint i = 0; i < runs->len && (int) i < max_runs; i++) {
    const struct wtc_cold_run *r = &g_array_index (runs, struct wtc_cold_run, i);
    const struct wtc_diff *d = &g_array_index (k->meta_lacking, struct wtc_diff, r->first);
    fputs ("  ", out);
    wtc_cold_text_sector (d->sector, r->count, out);
    fprintf (out, ": the disk lacks seq %" PRIu64 " (%s), the last logged write there\n",
             d->seq, wtlog_type_name (d->type));
  }
  if (max_runs >= 0 && (int) runs->len > max_runs)
    fprintf (out, "  ... %u more runs (--max-runs, or the JSON report)\n",
             runs->len - (guint) max_runs);
}

/* The cold verdict line and the fsck line; then, unless max_runs < 0
 * (--quiet: the lines alone), fsck's output and the damaged files. */
void
wtc_cold_report_text (const struct wtc_check *c, int max_runs, FILE *out)
{
  const struct wtc_cold *k = &c->cold;
  g_autofree char *kernel = k->kernel ? wtc_text_safe (k->kernel) : NULL;
  fprintf (out, "cold: %s", wtc_cold_verdict (k));
  if (!k->ran)
    fputs (": no cold pass (wtrack-run --no-cold)", out);
  else if (!k->mf) {
    g_autofree char *why = wtc_text_safe (k->guest_error ? k->guest_error
                                          : k->error ? k->error : "no cold manifest");
    fprintf (out, ": the cold kernel%s%s reported no files: %s", kernel ? " " : "",
             kernel ? kernel : "", why);
  } else {
    uint64_t bad = k->bad->len;
    fprintf (out, ": %" PRIu32 " of %" PRIu32 " files differ after a reboot (kernel %s)",
             k->files_damaged, c->mf->nfiles, kernel ? kernel : "?");
    if (k->size_changed || k->unopenable)
      fprintf (out, ", %" PRIu32 " size changed, %" PRIu32 " cannot be opened",
               k->size_changed, k->unopenable);
    fprintf (out, "; %" PRIu64 " bad sector%s", bad, bad == 1 ? "" : "s");
    for (unsigned cls = 0; cls < WTC_COLD_NCLASSES; cls++)
      if (k->by_class[cls])
        fprintf (out, ", %s %" PRIu64, wtc_cold_class_name (cls), k->by_class[cls]);
  }
  fputc ('\n', out);
  if (k->fsck_ran) {
    g_autofree char *cmd = wtc_text_safe (k->fsck_command ? k->fsck_command : "?");
    fprintf (out, "fsck: %s (%s, exit %d)\n", k->fsck_verdict, cmd, k->fsck_status);
    if (strcmp (k->fsck_verdict, "clean") != 0 && max_runs >= 0)
      for (guint i = 0; i < k->fsck_lines->len; i++) {
        g_autofree char *l = wtc_text_safe (g_ptr_array_index (k->fsck_lines, i));
        fprintf (out, "  | %s\n", l);
      }
  }
  wtc_cold_text_meta (k, max_runs, out);
  for (uint32_t fi = 0; max_runs >= 0 && k->mf && fi < c->mf->nfiles; fi++)
    if (k->files[fi].bad || k->files[fi].error || k->files[fi].cold_size != c->mf->files[fi].size)
      wtc_cold_text_file (c, fi, max_runs, out);
}

static void
wtc_cold_json_sector (JsonBuilder *b, const char *key, uint64_t s)
{
  if (s == WTC_NO_SECTOR)
    wtc_jb_null (b, key);
  else
    wtc_jb_u64 (b, key, s);
}

static void
wtc_cold_json_run (const struct wtc_cold *k, const struct wtc_cold_run *r, JsonBuilder *b)
{
  const struct wtc_cold_bad *bad = &g_array_index (k->bad, struct wtc_cold_bad, r->first);
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "class", wtc_cold_class_name (bad->cls));
  wtc_jb_u64 (b, "file_offset", bad->file_sector * WT_SECTOR_SIZE);
  wtc_jb_u64 (b, "sectors", r->count);
  wtc_cold_json_sector (b, "warm_disk_sector", bad->warm_disk);
  wtc_cold_json_sector (b, "cold_disk_sector", bad->cold_disk);
  if (bad->cls == WTC_COLD_MOVED)
    wtc_jb_bool (b, "warm_place_holds_data", bad->warm_holds);
  if (bad->cls == WTC_COLD_UNREADABLE)
    wtc_jb_u64 (b, "errno", bad->err);
  if (bad->last_seq) {
    wtc_jb_u64 (b, "last_write_seq", bad->last_seq);
    wtc_jb_u64 (b, "last_write_ns", bad->last_t);
  } else
    wtc_jb_null (b, "last_write_seq");
  json_builder_end_object (b);
}

/* budget: runs still to be written; what is over it is only counted. */
static void
wtc_cold_json_file (const struct wtc_check *c, uint32_t fi, uint64_t *budget,
                    uint64_t *omitted, JsonBuilder *b)
{
  const struct wtc_cold *k = &c->cold;
  const struct wtc_cold_file *cf = &k->files[fi];
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "path", c->mf->files[fi].path);
  wtc_jb_u64 (b, "error", cf->error);
  wtc_jb_u64 (b, "size", c->mf->files[fi].size);
  wtc_jb_u64 (b, "cold_size", cf->cold_size);
  wtc_jb_u64 (b, "bad_sectors", cf->bad);
  wtc_jb_array (b, "runs");
  g_autoptr (GArray) runs = wtc_cold_file_runs (k, fi);
  for (guint i = 0; i < runs->len; i++) {
    if (*budget == 0) {
      *omitted += runs->len - i;
      break;
    }
    --*budget;
    wtc_cold_json_run (k, &g_array_index (runs, struct wtc_cold_run, i), b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
wtc_cold_json_fsck (const struct wtc_cold *k, JsonBuilder *b)
{
  if (!k->fsck_ran) {
    wtc_jb_null (b, "fsck");
    return;
  }
  wtc_jb_object (b, "fsck");
  wtc_jb_str (b, "command", k->fsck_command ? k->fsck_command : "");
  wtc_jb_int (b, "status", k->fsck_status);
  wtc_jb_str (b, "verdict", k->fsck_verdict);
  wtc_jb_strings (b, "lines", k->fsck_lines);
  json_builder_end_object (b);
}

static void
wtc_cold_json_meta (const struct wtc_cold *k, uint64_t *budget, uint64_t *omitted,
                    JsonBuilder *b)
{
  if (!k->meta_lacking) {
    wtc_jb_null (b, "metadata_lacking");
    return;
  }
  g_autoptr (GArray) runs = wtc_cold_meta_runs (k);
  wtc_jb_object (b, "metadata_lacking");
  wtc_jb_u64 (b, "sectors", k->meta_lacking->len);
  wtc_jb_array (b, "runs");
  for (guint i = 0; i < runs->len; i++) {
    if (*budget == 0) {
      *omitted += runs->len - i;
      break;
    }
    --*budget;
    const struct wtc_cold_run *r = &g_array_index (runs, struct wtc_cold_run, i);
    const struct wtc_diff *d = &g_array_index (k->meta_lacking, struct wtc_diff, r->first);
    wtc_jb_object (b, NULL);
    wtc_jb_u64 (b, "disk_sector", d->sector);
    wtc_jb_u64 (b, "sectors", r->count);
    wtc_jb_u64 (b, "seq", d->seq);
    wtc_jb_str (b, "type", wtlog_type_name (d->type));
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
wtc_cold_json_counts (const struct wtc_cold *k, JsonBuilder *b)
{
  wtc_jb_u64 (b, "files_damaged", k->files_damaged);
  wtc_jb_u64 (b, "size_changed", k->size_changed);
  wtc_jb_u64 (b, "unopenable", k->unopenable);
  wtc_jb_u64 (b, "bad_sectors", k->bad ? k->bad->len : 0);
  wtc_jb_object (b, "by_class");
  for (unsigned cls = 0; cls < WTC_COLD_NCLASSES; cls++)
    wtc_jb_u64 (b, wtc_cold_class_name (cls), k->by_class[cls]);
  json_builder_end_object (b);
}

/* The cold object. At most max_runs runs (of the files and of the
 * metadata) are written, UINT64_MAX for all; "runs_omitted" counts the
 * rest when there is any (the HTML report's bound). */
void
wtc_cold_json_object (const struct wtc_check *c, uint64_t max_runs, JsonBuilder *b)
{
  const struct wtc_cold *k = &c->cold;
  uint64_t budget = max_runs, omitted = 0;
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "verdict", wtc_cold_verdict (k));
  wtc_jb_bool (b, "ran", k->ran);
  wtc_jb_str (b, "kernel", k->kernel);
  wtc_jb_str (b, "error", k->guest_error ? k->guest_error : k->error);
  wtc_cold_json_counts (k, b);
  wtc_cold_json_fsck (k, b);
  wtc_cold_json_meta (k, &budget, &omitted, b);
  wtc_jb_array (b, "files");
  for (uint32_t fi = 0; k->mf && fi < c->mf->nfiles; fi++) {
    const struct wtc_cold_file *cf = &k->files[fi];
    if (cf->bad || cf->error || cf->cold_size != c->mf->files[fi].size)
      wtc_cold_json_file (c, fi, &budget, &omitted, b);
  }
  json_builder_end_array (b);
  if (omitted)
    wtc_jb_u64 (b, "runs_omitted", omitted);
  json_builder_end_object (b);
}
