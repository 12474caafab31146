/* libFuzzer harness: the dm-log-writes reader (checker/interchange/dmlog-format.c) on
 * any file: every entry with its data, whether more follow the counted
 * ones, then again from the start without the data. No checksums there. */
#include <glib.h>

#include "interchange/dmlog-format.h"
#include "fuzz-util.h"

static void
read_entries (struct wtc_dmlog_reader *r, bool skip_data)
{
  struct wtc_dmlog_entry e;
  GError *error = NULL;
  int rc;
  while ((rc = wtc_dmlog_reader_next (r, &e, skip_data, &error)) == 0) {
    if (e.mark)
      wtfz_touch (e.mark, e.data_len);
    if (e.data)
      wtfz_touch (e.data, e.data_bytes);
  }
  g_clear_error (&error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  GError *error = NULL;
  struct wtc_dmlog_reader *r = wtc_dmlog_reader_open (wtfz_file (0, data, len), &error);
  if (!r) {
    g_clear_error (&error);
    return 0;
  }
  read_entries (r, false);
  wtc_dmlog_reader_more (r);
  wtc_dmlog_reader_rewind (r);
  read_entries (r, true);
  wtc_dmlog_reader_close (r);
  return 0;
}
