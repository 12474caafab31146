/* libFuzzer harness: the wtlog reader (common/wtlog.c) on any file, and
 * the resolver of its IN_IMAGE records' bytes (common/image-resolve.c),
 * with the same bytes as the run's final image. */
#include <stdlib.h>

#include "fuzz-util.h"
#include "image-resolve.h"
#include "wtlog.h"

/* The largest IN_IMAGE record whose bytes are read back (a fuzzed header
 * may claim a disk of any size). */
#define WTFZ_RESOLVE_MAX (1u << 20)

static void
resolve_log (const char *log, const uint8_t *data, size_t len)
{
  char err[256];
  struct wt_resolve *res = wt_resolve_open (log, wtfz_file (1, data, len), err, sizeof err);
  if (!res)
    return;
  struct wtlog_reader *r = wtlog_reader_open (log, NULL, err, sizeof err);
  struct wtlog_record rec;
  while (r && wtlog_reader_next (r, &rec) == 0) {
    if (!wt_record_in_image (&rec) || rec.length > WTFZ_RESOLVE_MAX)
      continue;
    uint8_t *buf = malloc (rec.length ? rec.length : 1);
    if (buf && wt_resolve_read (res, rec.seq, 0, rec.length, buf, rec.hashes, err,
                                sizeof err) == 0)
      wtfz_touch (buf, rec.length);
    free (buf);
  }
  wtlog_reader_close (r);
  wt_resolve_close (res);
}

static void
read_log (const uint8_t *data, size_t len)
{
  char err[256];
  struct wtlog_header h;
  const char *path = wtfz_file (0, data, len);
  struct wtlog_reader *r = wtlog_reader_open (path, &h, err, sizeof err);
  if (!r)
    return;
  struct wtlog_record rec;
  while (wtlog_reader_next (r, &rec) == 0) {
    wtfz_touch (rec.hashes, rec.nhashes * sizeof *rec.hashes);
    if (rec.data)
      wtfz_touch (rec.data, rec.length);
  }
  const struct wtlog_status *st = wtlog_reader_status (r);
  wtfz_touch (st->error, sizeof st->error);
  wtlog_reader_close (r);
  resolve_log (path, data, len);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  uint8_t *fixed;
  read_log (data, len);
  if (wtfz_repaired_wtlog (data, len, &fixed)) {
    read_log (fixed, len);
    free (fixed);
  }
  return 0;
}
