/* libFuzzer harness: the wtlog reader (common/wtlog.c) on any file. */
#include <stdlib.h>

#include "fuzz-util.h"
#include "wtlog.h"

static void
read_log (const uint8_t *data, size_t len)
{
  char err[256];
  struct wtlog_header h;
  struct wtlog_reader *r = wtlog_reader_open (wtfz_file (0, data, len), &h, err, sizeof err);
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
