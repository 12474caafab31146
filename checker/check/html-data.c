/* The HTML report's pictures: one streaming pass over the log aggregated
 * into fixed-size buckets and bitmaps (see html-data.h), and the fault
 * plugin's ground truth (faults.txt) when the run has one. The checker
 * never classes damage from faults.txt: the report only marks where the
 * faults were injected. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/html-data.h"
#include "sector-hash.h"
#include "search.h"

static uint64_t
wtc_html_div_up (uint64_t a, uint64_t b)
{
  return a / b + (a % b != 0);
}

static void
wtc_html_alloc (struct wtc_html_data *d, uint64_t disk_sectors, bool x_is_seq)
{
  d->disk_sectors = disk_sectors ? disk_sectors : 1;
  d->bucket_sectors = wtc_html_div_up (d->disk_sectors, WTC_HTML_MAX_BUCKETS);
  d->nbuckets = (uint32_t) wtc_html_div_up (d->disk_sectors, d->bucket_sectors);
  d->bucket_writes = g_new0 (uint32_t, d->nbuckets);
  d->bucket_last_seq = g_new0 (double, d->nbuckets);
  d->bucket_last_t = g_new0 (double, d->nbuckets);
  d->fine_sectors = wtc_html_div_up (d->disk_sectors, WTC_HTML_MAX_FINE);
  d->nfine = wtc_html_div_up (d->disk_sectors, d->fine_sectors);
  d->written = g_new0 (uint8_t, wtc_html_div_up (d->nfine, 8));
  d->x_is_seq = x_is_seq;
  d->col_width = x_is_seq ? 1 : 1000;
  d->row_sectors = wtc_html_div_up (d->disk_sectors, WTC_HTML_TL_ROWS);
  d->tl_writes = g_new0 (uint16_t, WTC_HTML_TL_COLS * WTC_HTML_TL_ROWS);
  d->tl_zeroes = g_new0 (uint16_t, WTC_HTML_TL_COLS * WTC_HTML_TL_ROWS);
  d->tl_flush = g_new0 (uint32_t, WTC_HTML_TL_COLS);
  d->tl_fua = g_new0 (uint32_t, WTC_HTML_TL_COLS);
}

void
wtc_html_data_clear (struct wtc_html_data *d)
{
  g_free (d->bucket_writes);
  g_free (d->bucket_last_seq);
  g_free (d->bucket_last_t);
  g_free (d->written);
  g_free (d->tl_writes);
  g_free (d->tl_zeroes);
  g_free (d->tl_flush);
  g_free (d->tl_fua);
  if (d->want_seq)
    g_array_unref (d->want_seq);
  if (d->want_x)
    g_array_unref (d->want_x);
  if (d->faults)
    g_array_unref (d->faults);
  g_free (d->faults_error);
  memset (d, 0, sizeof *d);
}

static uint16_t
wtc_html_sat16 (uint32_t v)
{
  return v > UINT16_MAX ? UINT16_MAX : (uint16_t) v;
}

/* Halves the timeline's resolution: column pairs merge into the left half. */
static void
wtc_html_tl_halve (struct wtc_html_data *d)
{
  const unsigned cols = WTC_HTML_TL_COLS;
  for (unsigned r = 0; r < WTC_HTML_TL_ROWS; r++) {
    uint16_t *w = d->tl_writes + r * cols, *z = d->tl_zeroes + r * cols;
    for (unsigned x = 0; x < cols / 2; x++) {
      w[x] = wtc_html_sat16 ((uint32_t) w[2 * x] + w[2 * x + 1]);
      z[x] = wtc_html_sat16 ((uint32_t) z[2 * x] + z[2 * x + 1]);
    }
    memset (w + cols / 2, 0, cols / 2 * sizeof *w);
    memset (z + cols / 2, 0, cols / 2 * sizeof *z);
  }
  for (unsigned x = 0; x < cols / 2; x++) {
    d->tl_flush[x] = d->tl_flush[2 * x] + d->tl_flush[2 * x + 1];
    d->tl_fua[x] = d->tl_fua[2 * x] + d->tl_fua[2 * x + 1];
  }
  memset (d->tl_flush + cols / 2, 0, cols / 2 * sizeof *d->tl_flush);
  memset (d->tl_fua + cols / 2, 0, cols / 2 * sizeof *d->tl_fua);
  d->col_width *= 2;
}

/* The timeline column of x, widening the columns until x fits. Column 0
 * starts at the first disk request: a run's log starts long before (the
 * guest boots), and that time would squeeze the writes into a corner. */
static unsigned
wtc_html_tl_col (struct wtc_html_data *d, uint64_t x)
{
  if (!d->have_x0) {
    d->have_x0 = true;
    d->x0 = x;
  }
  x = x < d->x0 ? 0 : x - d->x0;
  while (x / d->col_width >= WTC_HTML_TL_COLS)
    wtc_html_tl_halve (d);
  if (x > d->x_max)
    d->x_max = x;
  return (unsigned) (x / d->col_width);
}

static void
wtc_html_note_range (struct wtc_html_data *d, const struct wtlog_record *rec,
                     unsigned col)
{
  uint64_t first = rec->offset / WT_SECTOR_SIZE;
  uint64_t last = (rec->offset + rec->length - 1) / WT_SECTOR_SIZE;
  if (last >= d->disk_sectors)
    last = d->disk_sectors - 1;
  if (first > last)
    return;
  for (uint64_t b = first / d->bucket_sectors; b <= last / d->bucket_sectors; b++) {
    d->bucket_writes[b]++;
    d->bucket_last_seq[b] = (double) rec->seq;
    d->bucket_last_t[b] = (double) rec->t_start;
  }
  for (uint64_t i = first / d->fine_sectors; i <= last / d->fine_sectors; i++)
    d->written[i / 8] |= (uint8_t) (1u << (i % 8));
  uint16_t *layer = rec->type == WTLOG_WRITE ? d->tl_writes : d->tl_zeroes;
  for (uint64_t r = first / d->row_sectors; r <= last / d->row_sectors; r++) {
    uint16_t *cell = &layer[r * WTC_HTML_TL_COLS + col];
    if (*cell < UINT16_MAX)
      (*cell)++;
  }
}

static uint64_t
wtc_html_seq_at (size_t i, const void *want_seq)
{
  return g_array_index ((const GArray *) want_seq, uint64_t, i);
}

/* The index of seq in want_seq (sorted), or -1. */
static gint64
wtc_html_seq_index (const struct wtc_html_data *d, uint64_t seq)
{
  size_t n = d->want_seq ? d->want_seq->len : 0;
  size_t i = wt_lower_bound (0, n, seq, wtc_html_seq_at, d->want_seq);
  return i < n && g_array_index (d->want_seq, uint64_t, i) == seq ? (gint64) i : -1;
}

static void
wtc_html_note_seq (struct wtc_html_data *d, uint64_t seq, double x)
{
  gint64 i = wtc_html_seq_index (d, seq);
  if (i >= 0)
    g_array_index (d->want_x, double, i) = x;
}

double
wtc_html_seq_x (const struct wtc_html_data *d, uint64_t seq)
{
  gint64 i = wtc_html_seq_index (d, seq);
  return i >= 0 ? g_array_index (d->want_x, double, i) : -1;
}

static void
wtc_html_record (struct wtc_html_data *d, const struct wtlog_record *rec)
{
  uint64_t x = d->x_is_seq ? rec->seq : rec->t_start;
  if (d->want_seq->len)
    wtc_html_note_seq (d, rec->seq, (double) x);
  /* A SAVED record keeps bytes of the disk; it changes nothing. */
  if (rec->type == WTLOG_CHANNEL || rec->type == WTLOG_OPEN || rec->type == WTLOG_CLOSE
      || rec->type == WTLOG_SAVED || (rec->flags & WTLOG_F_FAILED))
    return;
  unsigned col = wtc_html_tl_col (d, x);
  if (rec->type == WTLOG_FLUSH) {
    d->tl_flush[col]++;
    return;
  }
  if (rec->length == 0)
    return;
  if (rec->flags & WTLOG_F_FUA)
    d->tl_fua[col]++;
  wtc_html_note_range (d, rec, col);
}

static gint
wtc_html_u64_cmp (gconstpointer a, gconstpointer b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

/* One line of faults.txt: "seq=N req=R kind=K offset=O length=L ..." or
 * "seq=- after_seq=N ...". Returns false when a field is missing. */
static bool
wtc_html_parse_fault (const char *line, struct wtc_html_fault *f)
{
  char kind[16];
  memset (f, 0, sizeof *f);
  f->t = -1;
  if (sscanf (line, "seq=- after_seq=%" SCNu64, &f->after_seq) != 1
      && sscanf (line, "seq=%" SCNu64, &f->seq) != 1)
    return false;
  const char *k = strstr (line, " kind="), *o = strstr (line, " offset="),
    *l = strstr (line, " length=");
  if (!k || !o || !l || sscanf (k, " kind=%15[a-z]", kind) != 1
      || sscanf (o, " offset=%" SCNu64, &f->offset) != 1
      || sscanf (l, " length=%" SCNu64, &f->length) != 1)
    return false;
  g_strlcpy (f->kind, kind, sizeof f->kind);
  return true;
}

static void
wtc_html_read_faults (const struct wtc_check *c, struct wtc_html_data *d)
{
  g_autofree char *dir = g_path_get_dirname (c->log_path);
  g_autofree char *path = g_build_filename (dir, "faults.txt", NULL);
  FILE *fp = fopen (path, "r");
  d->faults = g_array_new (FALSE, FALSE, sizeof (struct wtc_html_fault));
  if (!fp)
    return;
  d->have_faults = true;
  char line[512];
  for (uint64_t n = 1; fgets (line, sizeof line, fp); n++) {
    struct wtc_html_fault f;
    if (!wtc_html_parse_fault (line, &f)) {
      if (!d->faults_error)
        d->faults_error = g_strdup_printf ("%s: line %" PRIu64 ": not a fault line", path, n);
      continue;
    }
    if (d->faults_total++ < WTC_HTML_MAX_FAULTS)
      g_array_append_val (d->faults, f);
  }
  fclose (fp);
}

static void
wtc_html_want (struct wtc_html_data *d, const GArray *want_seqs)
{
  d->want_seq = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  g_array_append_vals (d->want_seq, want_seqs->data, want_seqs->len);
  for (guint i = 0; i < d->faults->len; i++) {
    const struct wtc_html_fault *f = &g_array_index (d->faults, struct wtc_html_fault, i);
    uint64_t s = f->seq ? f->seq : f->after_seq;
    g_array_append_val (d->want_seq, s);
  }
  g_array_sort (d->want_seq, wtc_html_u64_cmp);
  guint n = 0;
  for (guint i = 0; i < d->want_seq->len; i++) {
    uint64_t s = g_array_index (d->want_seq, uint64_t, i);
    if (s && (n == 0 || g_array_index (d->want_seq, uint64_t, n - 1) != s))
      g_array_index (d->want_seq, uint64_t, n++) = s;
  }
  g_array_set_size (d->want_seq, n);
  d->want_x = g_array_sized_new (FALSE, FALSE, sizeof (double), n);
  for (guint i = 0; i < n; i++) {
    double none = -1;
    g_array_append_val (d->want_x, none);
  }
}

bool
wtc_html_collect (const struct wtc_check *c, const GArray *want_seqs,
                  struct wtc_html_data *d, GError **error)
{
  char err[512];
  struct wtlog_header h;
  struct wtlog_record rec;
  memset (d, 0, sizeof *d);
  wtc_html_read_faults (c, d);
  wtc_html_want (d, want_seqs);
  struct wtlog_reader *r = wtlog_reader_open (c->log_path, &h, err, sizeof err);
  if (!r) {
    /* The report still shows what the check found; the pictures stay empty. */
    wtc_html_alloc (d, c->image_size / WT_SECTOR_SIZE, false);
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  wtc_html_alloc (d, h.disk_size / WT_SECTOR_SIZE, (h.flags & WTLOG_H_NOTIME) != 0);
  while (wtlog_reader_next (r, &rec) == 0)
    wtc_html_record (d, &rec);
  wtlog_reader_close (r);
  for (guint i = 0; i < d->faults->len; i++) {
    struct wtc_html_fault *f = &g_array_index (d->faults, struct wtc_html_fault, i);
    f->t = wtc_html_seq_x (d, f->seq ? f->seq : f->after_seq);
  }
  return true;
}
