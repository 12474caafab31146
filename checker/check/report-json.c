/* The check's JSON report; doc/report-json.md describes every field. It
 * is written through json-glib (lib/json.h): the top-level fields one a
 * line, then the files one a line, each built and written on its own. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "check/check.h"
#include "check/report-trace.h"
#include "lib/json.h"
#include "sector-hash.h"

#define WTC_JSON_VERSION 1

static void
wtc_json_op (const struct wtc_check *c, const struct wtc_run *r, JsonBuilder *b)
{
  if (!r->op || r->op > c->mf->nops) {
    wtc_jb_null (b, "op");
    return;
  }
  const struct wtmf_op *op = &c->mf->ops[r->op - 1];
  wtc_jb_object (b, "op");
  wtc_jb_u64 (b, "number", r->op);
  wtc_jb_str (b, "kind", wtmf_op_kind_name (op->kind));
  wtc_jb_u64 (b, "offset", op->offset);
  wtc_jb_u64 (b, "length", op->length);
  wtc_jb_u64 (b, "guest_ns", op->guest_ns);
  json_builder_end_object (b);
  uint64_t t;
  bool approx;
  if (wtc_guest_to_log (c, op->guest_ns, &t, &approx)) {
    wtc_jb_u64 (b, "op_time_ns", t);
    wtc_jb_bool (b, "op_time_approx", approx);
  } else
    wtc_jb_null (b, "op_time_ns");
}

static void
wtc_json_holds (const struct wtc_bad *bad, JsonBuilder *b)
{
  if (bad->holds_seq) {
    wtc_jb_object (b, "holds");
    wtc_jb_u64 (b, "seq", bad->holds_seq);
    json_builder_end_object (b);
  } else if (bad->stale) {
    wtc_jb_str (b, "holds", "pre-run");
    wtc_jb_bool (b, "stale", true);
  } else if (bad->disk_sector != WTC_NO_SECTOR && !bad->unwritten)
    wtc_jb_str (b, "holds", "pre-run");
  else
    wtc_jb_null (b, "holds");
}

static void
wtc_json_story (const struct wtc_run *r, const struct wtc_bad *bad, JsonBuilder *b)
{
  wtc_json_holds (bad, b);
  wtc_jb_bool (b, "holds_mixed", r->holds_mixed);
  if (r->last_seq) {
    wtc_jb_u64 (b, "last_write_seq", r->last_seq);
    wtc_jb_u64 (b, "last_write_ns", r->last_t);
  } else
    wtc_jb_null (b, "last_write_seq");
  if (bad->expected_seq)
    wtc_jb_u64 (b, "expected_seq", bad->expected_seq);
  if (bad->replaced_seq)
    wtc_jb_u64 (b, "replaced_by_seq", bad->replaced_seq);
  if (bad->misplaced_count) {
    wtc_jb_object (b, "misplaced_to");
    wtc_jb_u64 (b, "disk_sector", bad->misplaced_sector);
    wtc_jb_u64 (b, "seq", bad->misplaced_seq);
    wtc_jb_u64 (b, "writes", bad->misplaced_count);
    json_builder_end_object (b);
  }
  wtc_jb_bool (b, "unwritten_extent", bad->unwritten);
  wtc_jb_bool (b, "ambiguous", bad->ambiguous);
}

static void
wtc_json_hash (JsonBuilder *b, const char *key, uint64_t hash)
{
  char hex[17];
  g_snprintf (hex, sizeof hex, "%016" PRIx64, hash);
  wtc_jb_str (b, key, hex);
}

static void
wtc_json_run (const struct wtc_check *c, const struct wtc_run *r, JsonBuilder *b)
{
  const struct wtc_bad *bad = &g_array_index (c->bad, struct wtc_bad, r->first);
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "class", wtc_class_name (r->cls));
  wtc_jb_u64 (b, "file_offset", bad->file_sector * WT_SECTOR_SIZE);
  wtc_jb_u64 (b, "file_sector", bad->file_sector);
  if (bad->disk_sector == WTC_NO_SECTOR)
    wtc_jb_null (b, "disk_sector");
  else
    wtc_jb_u64 (b, "disk_sector", bad->disk_sector);
  wtc_jb_u64 (b, "sectors", r->count);
  wtc_json_op (c, r, b);
  wtc_json_story (r, bad, b);
  wtc_jb_array (b, "sector_detail");
  for (guint i = 0; i < r->count; i++) {
    const struct wtc_bad *s = &g_array_index (c->bad, struct wtc_bad, r->first + i);
    wtc_jb_object (b, NULL);
    wtc_json_hash (b, "expected", s->expected);
    wtc_json_hash (b, "image", s->image);
    if (s->holds_seq)
      wtc_jb_u64 (b, "holds_seq", s->holds_seq);
    json_builder_end_object (b);
  }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
wtc_json_pages (const struct wtc_check *c, uint32_t fi, JsonBuilder *b)
{
  g_autoptr (GString) line = g_string_new (NULL);
  guint i = wtc_file_first_bad (c, fi);
  wtc_jb_array (b, "pages");
  while (i < c->bad->len && g_array_index (c->bad, struct wtc_bad, i).file == fi) {
    const struct wtc_bad *bad = &g_array_index (c->bad, struct wtc_bad, i);
    uint64_t page = bad->file_sector / 8;
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
    wtc_jb_object (b, NULL);
    wtc_jb_u64 (b, "page", page);
    wtc_jb_u64 (b, "bad_mask", mask);
    wtc_jb_str (b, "text", line->str);
    json_builder_end_object (b);
    i = j;
  }
  json_builder_end_array (b);
}

static void
wtc_json_file (const struct wtc_check *c, uint32_t fi, JsonBuilder *b)
{
  const struct wtmf_file *f = &c->mf->files[fi];
  const struct wtc_file_stat *st = &c->files[fi];
  wtc_jb_object (b, NULL);
  wtc_jb_str (b, "path", f->path);
  wtc_jb_u64 (b, "inode", f->inode);
  wtc_jb_u64 (b, "size", f->size);
  wtc_jb_u64 (b, "sectors", f->nsectors);
  wtc_jb_u64 (b, "checked_sectors", st->checked);
  wtc_jb_u64 (b, "uncheckable_sectors", st->uncheckable + st->unchecked);
  wtc_jb_u64 (b, "unchecked_sectors", st->unchecked);
  wtc_jb_u64 (b, "claimed_twice_sectors", st->claimed_twice);
  wtc_jb_u64 (b, "bad_sectors", st->bad);
  wtc_jb_u64 (b, "bad_pages", wtc_file_bad_pages (c, fi));
  g_autoptr (GArray) runs = wtc_file_runs (c, fi);
  wtc_jb_array (b, "runs");
  for (guint i = 0; i < runs->len; i++)
    wtc_json_run (c, &g_array_index (runs, struct wtc_run, i), b);
  json_builder_end_array (b);
  wtc_json_pages (c, fi, b);
  json_builder_end_object (b);
}

/* KEY: a HELLO size in bytes as a number; null when the guest sent none
 * (older guests) or not a number. */
static void
wtc_json_hello_size (const struct wtc_check *c, const char *key, JsonBuilder *b)
{
  g_autofree char *v = wtc_hello_value (c, key);
  guint64 n;
  if (v && g_ascii_string_to_unsigned (v, 10, 1, G_MAXUINT32, &n, NULL))
    wtc_jb_u64 (b, key, n);
  else
    wtc_jb_null (b, key);
}

/* The guest's HELLO and RESULT keys as strings, and the page cache's verdict. */
static void
wtc_json_guest (const struct wtc_check *c, JsonBuilder *b)
{
  static const char *const hello_keys[] = { "kernel", "arch", "fs", "workload", "seed" };
  static const char *const result_keys[] = { "status", "readback", "readback_bad_sectors", "io_errors", "error" };
  wtc_jb_object (b, "guest");
  for (size_t i = 0; i < G_N_ELEMENTS (hello_keys); i++) {
    g_autofree char *v = wtc_hello_value (c, hello_keys[i]);
    wtc_jb_str (b, hello_keys[i], v);
  }
  for (size_t i = 0; i < G_N_ELEMENTS (result_keys); i++) {
    g_autofree char *v = wtc_result_value (c, result_keys[i]);
    wtc_jb_str (b, result_keys[i], v);
  }
  wtc_jb_str (b, "page_cache", wtc_page_cache_verdict (c));
  /* a number: the guest's page is what says how many blocks share one */
  wtc_json_hello_size (c, "page_size", b);
  /* and the file system's block: below the page, one page holds several */
  wtc_json_hello_size (c, "block_size", b);
  json_builder_end_object (b);
}

static void
wtc_json_log (const struct wtc_check *c, JsonBuilder *b)
{
  wtc_jb_object (b, "log");
  wtc_jb_u64 (b, "records", c->log_status.records);
  wtc_jb_str (b, "end", wtc_log_end (c));
  if (c->log_status.torn) {
    wtc_jb_u64 (b, "bad_offset", c->log_status.bad_offset);
    wtc_jb_u64 (b, "last_seq", c->log_status.last_seq);
    wtc_jb_str (b, "error", c->log_status.error);
  }
  json_builder_end_object (b);
}

static void
wtc_json_by_class (const uint64_t *by_class, JsonBuilder *b)
{
  wtc_jb_object (b, "by_class");
  for (unsigned k = 0; k < WTC_NCLASSES; k++)
    wtc_jb_u64 (b, wtc_class_name (k), by_class[k]);
  json_builder_end_object (b);
}

/* Every top-level field but the files. */
static void
wtc_json_top (const struct wtc_check *c, JsonBuilder *b)
{
  wtc_jb_object (b, NULL);
  wtc_jb_int (b, "version", WTC_JSON_VERSION);
  wtc_jb_str (b, "verdict", wtc_verdict (c));
  wtc_jb_bool (b, "inputs_complete", wtc_inputs_complete (c));
  wtc_jb_u64 (b, "bad_sectors", c->bad->len);
  wtc_jb_u64 (b, "compared_sectors", c->compared);
  wtc_jb_u64 (b, "unchecked_sectors", c->unchecked);
  wtc_jb_u64 (b, "claimed_twice_sectors", c->claimed_twice);
  wtc_jb_bool (b, "image_truncated", c->image_short);
  wtc_json_by_class (c->by_class, b);
  json_builder_set_member_name (b, "cold");
  wtc_cold_json_object (c, UINT64_MAX, b);
  wtc_json_guest (c, b);
  wtc_json_log (c, b);
  wtc_jb_str (b, "channel_error", c->channel_error);
  wtc_jb_strings (b, "warnings", c->warnings);
  wtc_jb_u64 (b, "warnings_left_out", c->warnings_left_out);
  wtc_report_json_ops (c, b);
  json_builder_end_object (b);
}

static void
wtc_json_write (const struct wtc_check *c, FILE *out)
{
  struct wtc_json_out o;
  wtc_json_out_begin (&o, out);
  {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    wtc_json_top (c, b);
    wtc_json_out_members (&o, b);
  }
  /* One file at a time: the report's memory is one file's. */
  wtc_json_out_array_begin (&o, "files");
  for (uint32_t fi = 0; c->mf && fi < c->mf->nfiles; fi++) {
    g_autoptr (JsonBuilder) b = json_builder_new ();
    wtc_json_file (c, fi, b);
    wtc_json_out_item (&o, b);
  }
  wtc_json_out_array_end (&o);
  wtc_report_json_trace (c, &o);
  wtc_json_out_end (&o);
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
