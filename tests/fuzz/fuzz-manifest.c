/* libFuzzer harness: a manifest stream (common/manifest.c), manifest after
 * manifest, each one's files, extents, hashes and ops read in full. */
#include <stdlib.h>

#include "fuzz-util.h"
#include "manifest.h"

static void
touch_manifest (const struct wtmf_manifest *m)
{
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    wtfz_touch (f->path, 1);
    wtfz_touch (f->extents, f->nextents * sizeof *f->extents);
    wtfz_touch (f->hashes, f->nsectors * sizeof *f->hashes);
    wtfz_touch (f->ops, f->nsectors * sizeof *f->ops);
    if (wtmf_find_file (m, f->id) == NULL)
      abort ();               /* a parsed file must be found by its id */
  }
  wtfz_touch (m->ops, m->nops * sizeof *m->ops);
}

static void
parse_stream (const uint8_t *data, size_t len)
{
  char err[256];
  for (size_t pos = 0; pos < len;) {
    struct wtmf_manifest m;
    size_t used;
    if (wtmf_parse (data + pos, len - pos, &m, &used, err, sizeof err) != 0)
      return;
    touch_manifest (&m);
    wtmf_free (&m);
    if (used == 0)
      abort ();               /* a parsed manifest has at least its header */
    pos += used;
  }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t len)
{
  uint8_t *fixed;
  parse_stream (data, len);
  if (wtfz_repaired_manifests (data, len, &fixed)) {
    parse_stream (fixed, len);
    free (fixed);
  }
  return 0;
}
