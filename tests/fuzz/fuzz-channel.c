/* libFuzzer harness: the channel reader (common/channel.c) on any file,
 * then the manifest stream its MANIFEST messages carry (common/manifest.c),
 * parsed as the checker parses it: manifest after manifest. */
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "fuzz-util.h"
#include "manifest.h"

static void
parse_stream (const uint8_t *stream, size_t len)
{
  char err[256];
  for (size_t pos = 0; pos < len;) {
    struct wtmf_manifest m;
    size_t used;
    if (wtmf_parse (stream + pos, len - pos, &m, &used, err, sizeof err) != 0)
      return;
    wtmf_free (&m);
    pos += used;
  }
}

static void
read_channel (const uint8_t *data, size_t len)
{
  char err[256], value[64];
  struct wtch_reader *r = wtch_reader_open (wtfz_file (0, data, len), err, sizeof err);
  if (!r)
    return;
  uint8_t *stream = NULL;
  size_t stream_len = 0;
  struct wtch_message m;
  while (wtch_reader_next (r, &m, err, sizeof err) == 0) {
    wtfz_touch (m.payload, m.length);
    if (m.type == WTCH_MANIFEST) {
      if (!(stream = realloc (stream, stream_len + m.length + 1)))
        abort ();
      memcpy (stream + stream_len, m.payload, m.length);
      stream_len += m.length;
    } else if (m.type == WTCH_HELLO || m.type == WTCH_RESULT) {
      wtch_kv_get (m.payload, m.length, "status", value, sizeof value);
      wtch_kv_get (m.payload, m.length, "readback", value, 1);
    }
  }
  wtch_reader_close (r);
  parse_stream (stream, stream_len);
  free (stream);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  uint8_t *fixed;
  read_channel (data, len);
  if (wtfz_repaired_channel (data, len, &fixed)) {
    read_channel (fixed, len);
    free (fixed);
  }
  return 0;
}
