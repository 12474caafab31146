/* A wtrack log into dm-log-writes (interchange/interchange.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "channel.h"
#include "commands.h"
#include "interchange/dmlog-format.h"
#include "interchange/interchange.h"
#include "lib/channel-read.h"
#include "lib/cli.h"
#include "lib/target.h"
#include "lib/util.h"
#include "sector-hash.h"
#include "wtlog.h"

struct wtc_export {
  const char *log;
  struct wtc_dmlog_writer *w;
  GHashTable *marks;            /* CHANNEL seq -> GPtrArray of labels */
  struct wt_image *scratch;     /* with --base: the disk so far */
  unsigned char *edges;         /* an edge sector read back (unaligned records) */
  struct wt_resolve *resolve;   /* where IN_IMAGE records' bytes are */
  unsigned char *in_image;      /* the bytes of the IN_IMAGE record at hand */
  uint64_t in_image_cap;
  uint64_t dropped_failed, marks_written, rewritten;
};

/* MARKs by the seq of the CHANNEL record that carried them. */
static GHashTable *
wtc_export_marks (const char *log, const char *channel, GError **error)
{
  GHashTable *marks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                             (GDestroyNotify) g_ptr_array_unref);
  if (!channel)
    return marks;
  g_autoptr (GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (wtc_channel) ch = wtc_channel_read_placed (log, channel, warnings, error);
  wtc_cli_warnings (warnings);
  if (!ch) {
    g_hash_table_unref (marks);
    return NULL;
  }
  for (guint i = 0; i < ch->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK)
      continue;
    if (!m->placed) {
      wtc_cli_warning ("MARK message %" PRIu64 " has no "
                  "CHANNEL record in %s: left out", m->number, log);
      continue;
    }
    GPtrArray *labels = g_hash_table_lookup (marks, &m->log_seq);
    if (!labels) {
      labels = g_ptr_array_new_with_free_func (g_free);
      g_hash_table_insert (marks, g_memdup2 (&m->log_seq, sizeof m->log_seq), labels);
    }
    g_ptr_array_add (labels, wtc_mark_label (m));
  }
  return marks;
}

static bool
wtc_export_marks_at (struct wtc_export *x, uint64_t seq, GError **error)
{
  GPtrArray *labels = g_hash_table_lookup (x->marks, &seq);
  for (guint i = 0; labels && i < labels->len; i++) {
    const char *label = g_ptr_array_index (labels, i);
    size_t room = wtc_dmlog_mark_room (x->w);
    if (strlen (label) > room) {
      g_autofree char *safe = wtc_text_safe (label);
      wtc_cli_warning ("MARK \"%.40s...\" cut to the %zu bytes an entry sector holds",
                       safe, room);
    }
    if (!wtc_dmlog_write_mark (x->w, label, error))
      return false;
    x->marks_written++;
  }
  return true;
}

static uint64_t
wtc_export_entry_flags (const struct wtlog_record *rec)
{
  uint64_t flags = (rec->flags & WTLOG_F_FUA) ? WTC_DMLOG_FUA : 0;
  if (rec->type == WTLOG_TRIM)
    flags |= WTC_DMLOG_DISCARD;
  return flags;
}

/* One edge sector of an unaligned request, as it is after the request,
 * read back from the scratch disk. */
static bool
wtc_export_edge (struct wtc_export *x, uint64_t flags, uint64_t sector, GError **error)
{
  return wtc_target_read (x->scratch, sector * WT_SECTOR_SIZE, x->edges, WT_SECTOR_SIZE,
                          error)
    && wtc_dmlog_write_entry (x->w, flags, sector, 1, x->edges, error);
}

/* A request that is not sector-aligned, written as whole sectors: its
 * partial first and last sectors as they are after it (read back from the
 * scratch disk), the whole sectors between from the record itself (a WRITE's
 * data; zeroes, left a hole in the log, for ZERO and TRIM). Memory is one
 * sector whatever the request's length. */
static bool
wtc_export_whole_sectors (struct wtc_export *x, const struct wtlog_record *rec,
                          GError **error)
{
  if (!x->scratch) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": %s %" PRIu64 "+%" PRIu64
                 " is not sector-aligned: dm-log-writes holds whole sectors; "
                 "give --base to fill them in", rec->seq, wtlog_type_name (rec->type),
                 rec->offset, rec->length);
    return false;
  }
  uint64_t flags = (rec->flags & WTLOG_F_FUA) ? WTC_DMLOG_FUA : 0;
  uint64_t end = rec->offset + rec->length;
  uint64_t first = rec->offset / WT_SECTOR_SIZE, last = (end - 1) / WT_SECTOR_SIZE;
  uint64_t mid = (rec->offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE;
  uint64_t mid_end = end / WT_SECTOR_SIZE;
  x->rewritten++;
  if (!x->edges)
    x->edges = g_malloc (WT_SECTOR_SIZE);
  if (mid >= mid_end) {         /* no whole sector: one or two edges */
    return wtc_export_edge (x, flags, first, error)
      && (last == first || wtc_export_edge (x, flags, last, error));
  }
  if (mid > first && !wtc_export_edge (x, flags, first, error))
    return false;
  const void *data = rec->type == WTLOG_WRITE
    ? rec->data + (mid * WT_SECTOR_SIZE - rec->offset) : NULL;
  if (!wtc_dmlog_write_entry (x->w, flags, mid, mid_end - mid, data, error))
    return false;
  return mid_end > last || wtc_export_edge (x, flags, last, error);
}

static bool
wtc_export_disk_record (struct wtc_export *x, const struct wtlog_record *rec,
                        GError **error)
{
  if (rec->type == WTLOG_WRITE && !rec->data) {
    g_set_error (error, WTC_ERROR, 0, "seq %" PRIu64 ": WRITE %" PRIu64 "+%" PRIu64
                 " has no data in a log recorded with data", rec->seq, rec->offset,
                 rec->length);
    return false;
  }
  if (x->scratch && !wtc_target_apply (x->scratch, rec, error))
    return false;
  if (rec->length == 0)
    return true;
  if (rec->offset % WT_SECTOR_SIZE || rec->length % WT_SECTOR_SIZE)
    return wtc_export_whole_sectors (x, rec, error);
  const void *data = rec->type == WTLOG_WRITE ? rec->data : NULL;
  return wtc_dmlog_write_entry (x->w, wtc_export_entry_flags (rec),
                                rec->offset / WT_SECTOR_SIZE,
                                rec->length / WT_SECTOR_SIZE, data, error);
}

/* An IN_IMAGE record as a WRITE with its bytes (resolved, checked against
 * its hashes), in x->in_image: a request's length at most, as the reader
 * holds a record with data. */
static bool
wtc_export_in_image (struct wtc_export *x, const struct wtlog_record *rec,
                     struct wtlog_record *full, GError **error)
{
  char err[1024];
  if (rec->length > x->in_image_cap) {
    g_free (x->in_image);
    x->in_image = g_malloc (rec->length);
    x->in_image_cap = rec->length;
  }
  if (wt_resolve_read (x->resolve, rec->seq, 0, rec->length, x->in_image, rec->hashes,
                       err, sizeof err) == -1) {
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  *full = *rec;
  full->flags = (uint16_t) ((rec->flags & ~(WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED))
                            | WTLOG_F_DATA);
  full->data = x->in_image;
  return true;
}

static bool
wtc_export_record (struct wtc_export *x, const struct wtlog_record *rec,
                   GError **error)
{
  struct wtlog_record full;
  if (rec->flags & WTLOG_F_FAILED) {
    x->dropped_failed++;
    return true;
  }
  if (wt_record_in_image (rec)) {
    if (!wtc_export_in_image (x, rec, &full, error))
      return false;
    rec = &full;
  }
  switch (rec->type) {
  case WTLOG_WRITE: case WTLOG_ZERO: case WTLOG_TRIM:
    return wtc_export_disk_record (x, rec, error);
  case WTLOG_FLUSH:
    return wtc_dmlog_write_entry (x->w, WTC_DMLOG_FLUSH, 0, 0, NULL, error);
  case WTLOG_CHANNEL:
    return wtc_export_marks_at (x, rec->seq, error);
  default:
    return true;
  }
}

/* The scratch disk lives beside OUT, unlinked at once. */
static struct wt_image *
wtc_export_scratch (const char *out, const char *base, uint64_t disk_size,
                    GError **error)
{
  g_autofree char *path = g_strdup_printf ("%s.scratch-%d", out, (int) getpid ());
  struct wt_image *t = wtc_target_create (path, disk_size, disk_size, error);
  if (!t)
    return NULL;
  unlink (path);
  if (!wtc_target_copy_base (t, base, disk_size, error)) {
    wtc_target_close (t);
    return NULL;
  }
  return t;
}

static bool
wtc_export_run (struct wtc_export *x, struct wtlog_reader *r, GError **error)
{
  struct wtlog_record rec;
  while (wtlog_reader_next (r, &rec) == 0)
    if (!wtc_export_record (x, &rec, error))
      return false;
  const struct wtlog_status *st = wtlog_reader_status (r);
  if (st->torn) {
    g_set_error (error, WTC_ERROR, 0, "%s (the entries up to seq %" PRIu64
                 " are in the export)", st->error, st->last_seq);
    return false;
  }
  return true;
}

int
wtc_export_dmlog (const struct wtc_export_request *o)
{
  const char *log = o->log, *out = o->out;
  char err[512];
  struct wtlog_header h;
  g_autoptr (GError) error = NULL;
  struct wtc_export x = { .log = log };

  struct wtlog_reader *r = wtlog_reader_open (log, &h, err, sizeof err);
  if (!r) {
    wtc_cli_error ("%s", err);
    return WT_EXIT_ERROR;
  }
  if (!wtc_log_needs_payloads (log, &h, "dm-log-writes", &error)) {
    wtc_cli_error ("%s", error->message);
    wtlog_reader_close (r);
    return WT_EXIT_ERROR;
  }
  bool ok = (x.resolve = wtc_resolve_open (log, o->final_image, "dm-log-writes", &error))
    && (x.marks = wtc_export_marks (log, o->channel, &error))
    && (!o->base || (x.scratch = wtc_export_scratch (out, o->base, h.disk_size, &error)))
    && (x.w = wtc_dmlog_writer_open (out, WT_SECTOR_SIZE, &error))
    && wtc_export_run (&x, r, &error);
  uint64_t entries = x.w ? wtc_dmlog_writer_count (x.w) : 0;
  if (x.w && ok)
    ok = wtc_dmlog_writer_close (x.w, &error);
  else if (x.w) {
    /* A torn log still gives a readable export of what came before. */
    g_autoptr (GError) ignored = NULL;
    wtc_dmlog_writer_close (x.w, &ignored);
  }
  if (!ok)
    wtc_cli_error ("%s", error->message);
  else if (o->verbose)
    wtc_cli_error ("%s: %" PRIu64 " entries (%" PRIu64 " MARKs, %"
                PRIu64 " unaligned requests written as whole sectors); %" PRIu64
                " FAILED requests dropped", out, entries, x.marks_written,
                x.rewritten, x.dropped_failed);
  wtlog_reader_close (r);
  wtc_target_close (x.scratch);
  g_free (x.edges);
  g_free (x.in_image);
  wt_resolve_close (x.resolve);
  if (x.marks)
    g_hash_table_unref (x.marks);
  return ok ? WT_EXIT_OK : WT_EXIT_ERROR;
}
