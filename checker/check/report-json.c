/* The check's JSON report; doc/report-json.md describes every field. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "check/check.h"
#include "sector-hash.h"

#define WTC_JSON_VERSION 1

static void
wtc_json_kv_str (FILE *out, const char *key, const char *value)
{
  fprintf (out, "\"%s\": ", key);
  if (value)
    wtc_json_str (out, value);
  else
    fputs ("null", out);
}

static void
wtc_json_op (const struct wtc_check *c, const struct wtc_run *r, FILE *out)
{
  if (!r->op || r->op > c->mf->nops) {
    fputs (", \"op\": null", out);
    return;
  }
  const struct wtmf_op *op = &c->mf->ops[r->op - 1];
  fprintf (out, ", \"op\": {\"number\": %" PRIu32 ", \"kind\": \"%s\", \"offset\": %" PRIu64
           ", \"length\": %" PRIu64 ", \"guest_ns\": %" PRIu64 "}", r->op,
           wtmf_op_kind_name (op->kind), op->offset, op->length, op->guest_ns);
  uint64_t t;
  bool approx;
  if (wtc_guest_to_log (c, op->guest_ns, &t, &approx))
    fprintf (out, ", \"op_time_ns\": %" PRIu64 ", \"op_time_approx\": %s", t,
             approx ? "true" : "false");
  else
    fputs (", \"op_time_ns\": null", out);
}

static void
wtc_json_story (const struct wtc_run *r, const struct wtc_bad *b, FILE *out)
{
  if (b->holds_seq)
    fprintf (out, ", \"holds\": {\"seq\": %" PRIu64 "}", b->holds_seq);
  else if (b->stale)
    fputs (", \"holds\": \"pre-run\", \"stale\": true", out);
  else if (b->disk_sector != WTC_NO_SECTOR && !b->unwritten)
    fputs (", \"holds\": \"pre-run\"", out);
  else
    fputs (", \"holds\": null", out);
  fprintf (out, ", \"holds_mixed\": %s", r->holds_mixed ? "true" : "false");
  if (r->last_seq)
    fprintf (out, ", \"last_write_seq\": %" PRIu64 ", \"last_write_ns\": %" PRIu64,
             r->last_seq, r->last_t);
  else
    fputs (", \"last_write_seq\": null", out);
  if (b->expected_seq)
    fprintf (out, ", \"expected_seq\": %" PRIu64, b->expected_seq);
  if (b->replaced_seq)
    fprintf (out, ", \"replaced_by_seq\": %" PRIu64, b->replaced_seq);
  if (b->misplaced_count)
    fprintf (out, ", \"misplaced_to\": {\"disk_sector\": %" PRIu64 ", \"seq\": %" PRIu64
             ", \"writes\": %" PRIu32 "}", b->misplaced_sector, b->misplaced_seq,
             b->misplaced_count);
  fprintf (out, ", \"unwritten_extent\": %s, \"ambiguous\": %s",
           b->unwritten ? "true" : "false", b->ambiguous ? "true" : "false");
}

static void
wtc_json_run (const struct wtc_check *c, const struct wtc_run *r, FILE *out)
{
  const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, r->first);
  fprintf (out, "{\"class\": \"%s\", \"file_offset\": %" PRIu64 ", \"file_sector\": %" PRIu64,
           wtc_class_name (r->cls), b->file_sector * WT_SECTOR_SIZE, b->file_sector);
  if (b->disk_sector == WTC_NO_SECTOR)
    fputs (", \"disk_sector\": null", out);
  else
    fprintf (out, ", \"disk_sector\": %" PRIu64, b->disk_sector);
  fprintf (out, ", \"sectors\": %u", r->count);
  wtc_json_op (c, r, out);
  wtc_json_story (r, b, out);
  fputs (", \"sector_detail\": [", out);
  for (guint i = 0; i < r->count; i++) {
    const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, r->first + i);
    fprintf (out, "%s{\"expected\": \"%016" PRIx64 "\", \"image\": \"%016" PRIx64 "\"",
             i ? ", " : "", s->expected, s->image);
    if (s->holds_seq)
      fprintf (out, ", \"holds_seq\": %" PRIu64, s->holds_seq);
    fputs ("}", out);
  }
  fputs ("]}", out);
}

static void
wtc_json_pages (const struct wtc_check *c, uint32_t fi, FILE *out)
{
  g_autoptr (GString) line = g_string_new (NULL);
  guint i = wtc_file_first_bad (c, fi);
  bool any = false;
  fputs ("\"pages\": [", out);
  while (i < c->bad->len && g_array_index (c->bad, struct wtc_bad, i).file == fi) {
    const struct wtc_bad *b = &g_array_index (c->bad, struct wtc_bad, i);
    uint64_t page = b->file_sector / 8;
    unsigned mask = 0;
    guint j = i;
    for (; j < c->bad->len; j++) {
      const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, j);
      if (s->file != fi || s->file_sector / 8 != page)
        break;
      mask |= 1u << (s->file_sector % 8);
    }
    g_string_truncate (line, 0);
    wtc_page_describe (c, i, line);
    fprintf (out, "%s\n        {\"page\": %" PRIu64 ", \"bad_mask\": %u, \"text\": ",
             any ? "," : "", page, mask);
    wtc_json_str (out, line->str);
    fputs ("}", out);
    any = true;
    i = j;
  }
  fputs ("]", out);
}

static void
wtc_json_file (const struct wtc_check *c, uint32_t fi, FILE *out)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  fputs ("    {", out);
  wtc_json_kv_str (out, "path", f->path);
  fprintf (out, ", \"inode\": %" PRIu64 ", \"size\": %" PRIu64 ", \"sectors\": %" PRIu64
           ", \"checked_sectors\": %" PRIu64 ", \"uncheckable_sectors\": %" PRIu64
           ", \"unchecked_sectors\": %" PRIu64 ", \"claimed_twice_sectors\": %" PRIu64
           ", \"bad_sectors\": %" PRIu64 ", \"bad_pages\": %" PRIu64 ",\n      \"runs\": [",
           f->inode, f->size, f->nsectors, st->checked, st->uncheckable + st->unchecked,
           st->unchecked, st->claimed_twice, st->bad, wtc_file_bad_pages (c, fi));
  g_autoptr (GArray) runs = wtc_file_runs (c, fi);
  for (guint i = 0; i < runs->len; i++) {
    fputs (i ? ",\n        " : "\n        ", out);
    wtc_json_run (c, &g_array_index (runs, struct wtc_run, i), out);
  }
  fputs ("],\n      ", out);
  wtc_json_pages (c, fi, out);
  fputs ("}", out);
}

/* ", KEY": a HELLO size in bytes as a number; null when the guest sent
 * none (older guests) or not a number. */
static void
wtc_json_hello_size (const struct wtc_check *c, const char *key, FILE *out)
{
  g_autofree char *v = wtc_hello_value (c, key);
  guint64 n;
  if (v && g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT32, &n, NULL))
    fprintf (out, ", \"%s\": %" G_GUINT64_FORMAT, key, n);
  else
    fprintf (out, ", \"%s\": null", key);
}

static void
wtc_json_inputs (const struct wtc_check *c, FILE *out)
{
  static const char *const hello_keys[] = { "kernel", "arch", "fs", "workload", "seed" };
  static const char *const result_keys[] = { "status", "readback", "readback_bad_sectors", "io_errors", "error" };
  fputs ("  \"guest\": {", out);
  for (size_t i = 0; i < G_N_ELEMENTS (hello_keys); i++) {
    g_autofree char *v = wtc_hello_value (c, hello_keys[i]);
    fputs (i ? ", " : "", out);
    wtc_json_kv_str (out, hello_keys[i], v);
  }
  for (size_t i = 0; i < G_N_ELEMENTS (result_keys); i++) {
    g_autofree char *v = wtc_result_value (c, result_keys[i]);
    fputs (", ", out);
    wtc_json_kv_str (out, result_keys[i], v);
  }
  const char *pc = wtc_page_cache_verdict (c);
  fputs (", ", out);
  wtc_json_kv_str (out, "page_cache", pc);
  /* a number: the guest's page is what says how many blocks share one */
  wtc_json_hello_size (c, "page_size", out);
  /* and the file system's block: below the page, one page holds several */
  wtc_json_hello_size (c, "block_size", out);
  fputs ("},\n  \"log\": {", out);
  fprintf (out, "\"records\": %" PRIu64 ", \"end\": \"%s\"", c->log_status.records,
           !c->log_read ? "unread" : c->log_status.torn ? "torn"
           : c->log_status.closed ? "closed" : "unclosed");
  if (c->log_status.torn) {
    fprintf (out, ", \"bad_offset\": %" PRIu64 ", \"last_seq\": %" PRIu64 ", ",
             c->log_status.bad_offset, c->log_status.last_seq);
    wtc_json_kv_str (out, "error", c->log_status.error);
  }
  fputs ("},\n  ", out);
  wtc_json_kv_str (out, "channel_error", c->channel_error);
  fputs (",\n  \"warnings\": [", out);
  for (guint i = 0; i < c->warnings->len; i++) {
    fputs (i ? ", " : "", out);
    wtc_json_str (out, g_ptr_array_index (c->warnings, i));
  }
  fprintf (out, "],\n  \"warnings_left_out\": %u,\n", c->warnings_left_out);
}

static void
wtc_json_write (const struct wtc_check *c, FILE *out)
{
  fprintf (out, "{\n  \"version\": %d,\n  \"verdict\": \"%s\",\n  \"inputs_complete\": %s,\n",
           WTC_JSON_VERSION, wtc_verdict (c), wtc_inputs_complete (c) ? "true" : "false");
  fprintf (out, "  \"bad_sectors\": %u,\n  \"compared_sectors\": %" PRIu64
           ",\n  \"unchecked_sectors\": %" PRIu64 ",\n  \"claimed_twice_sectors\": %" PRIu64
           ",\n  \"image_truncated\": %s,\n  \"by_class\": {", c->bad->len, c->compared,
           c->unchecked, c->claimed_twice, c->image_short ? "true" : "false");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    fprintf (out, "%s\"%s\": %" PRIu64, k ? ", " : "", wtc_class_name (k), c->by_class[k]);
  fputs ("},\n", out);
  wtc_cold_report_json (c, out);
  wtc_json_inputs (c, out);
  wtc_report_json_ops (c, out);
  fputs ("  \"files\": [", out);
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++) {
    fputs (fi ? ",\n" : "\n", out);
    wtc_json_file (c, fi, out);
  }
  fputs ("]\n}\n", out);
}

bool
wtc_report_json (const struct wtc_check *c, const char *path, GError **error)
{
  FILE *out = fopen (path, "w");
  if (!out) {
    g_set_error (error, WTC_ERROR, errno, "open: %s: %s", path, g_strerror (errno));
    return false;
  }
  wtc_json_write (c, out);
  if (ferror (out) | (fclose (out) != 0)) {
    g_set_error (error, WTC_ERROR, errno, "write: %s: %s", path, g_strerror (errno));
    return false;
  }
  return true;
}
