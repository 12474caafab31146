/* linus2006: Linus's December 2006 reproducer of the ext3 shared-mmap
 * corruption. One file written through ONE MAP_SHARED mapping in "packet"
 * chunks in random order, each chunk filled with its own number; unmap,
 * drop the cache, map again and check every chunk. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"

/* The value pass p stores in chunk c: unique over all chunks and passes,
 * so a stale chunk from an earlier pass is told apart from the last one. */
static uint32_t
wtg_linus_value (uint64_t chunk, uint32_t pass, uint64_t nchunks)
{
  return (uint32_t) (chunk + pass * nchunks);
}

static int
wtg_linus_create (struct wtg_run *run, struct wtg_file **out)
{
  struct wtg_file *f = wtg_model_create_file (run, true);
  if (!f)
    return -1;
  *out = f;
  return 0;
}

static int
wtg_linus_write (struct wtg_run *run, struct wtg_file *f, unsigned char *map,
                 const uint32_t *order, uint64_t nchunks)
{
  uint64_t chunk = run->opt->chunk;
  wtg_mark (run, "phase write");
  for (uint32_t pass = 0; pass < run->opt->passes; pass++) {
    if (run->opt->passes > 1)
      wtg_mark (run, "pass %" PRIu32, pass + 1);
    for (uint64_t i = 0; i < nchunks; i++) {
      uint64_t c = order[i], off = c * chunk;
      size_t len = f->size - off < chunk ? f->size - off : chunk;
      wtg_fill_u32 (f->image + off, len, wtg_linus_value (c, pass, nchunks));
      wtg_model_op (&run->model, f->id, WTMF_OP_MMAP_STORE, off, len);
      if (wtg_guarded_copy (map + off, f->image + off, len) < 0)
        return wtg_fail (run, "mmap store: %s chunk %" PRIu64 " at byte %" PRIu64
                         ": SIGBUS (no space left, or an I/O error)", f->path, c, off);
    }
  }
  return 0;
}

/* Map again after the cache was dropped: what the kernel gives back now
 * came from the disk, unless it kept the pages. Counts the bad chunks. */
static int
wtg_linus_check (struct wtg_run *run, struct wtg_file *f, uint64_t nchunks)
{
  unsigned char *map = mmap (NULL, f->size, PROT_READ, MAP_SHARED, f->fd, 0);
  if (map == MAP_FAILED)
    return wtg_fail (run, "mmap: %s again (%" PRIu64 " bytes): %m", f->path, f->size);
  uint64_t chunk = run->opt->chunk, bad = 0, first_bad = 0;
  int rc = 0;
  for (uint64_t c = 0; c < nchunks; c++) {
    uint64_t off = c * chunk;
    size_t len = f->size - off < chunk ? f->size - off : chunk;
    int differs;
    if (wtg_guarded_compare (map + off, f->image + off, len, &differs) < 0) {
      rc = wtg_fail (run, "mmap load: %s chunk %" PRIu64 " at byte %" PRIu64
                     ": SIGBUS (an I/O error?)", f->path, c, off);
      break;
    }
    if (differs && bad++ == 0)
      first_bad = c;
  }
  munmap (map, f->size);
  wtg_extra (run, "remap_check=%s", bad ? "mismatch" : "match");
  wtg_extra (run, "remap_bad_chunks=%" PRIu64, bad);
  if (bad)
    fprintf (stderr, "wtrack-guest: linus2006: %" PRIu64 " of %" PRIu64
             " chunks wrong after remapping, the first is chunk %" PRIu64 "\n",
             bad, nchunks, first_bad);
  return rc;
}

static uint32_t *
wtg_linus_order (struct wtg_run *run, uint64_t nchunks)
{
  uint32_t *order = malloc (nchunks * sizeof *order);
  if (!order) {
    wtg_fail (run, "malloc: chunk order (%" PRIu64 " chunks): %m", nchunks);
    return NULL;
  }
  for (uint64_t i = 0; i < nchunks; i++)
    order[i] = (uint32_t) i;
  struct wtg_rng rng;
  wtg_rng_init (&rng, run->opt->seed, "linus2006 order");
  wtg_shuffle (&rng, order, (uint32_t) nchunks);
  return order;
}

int
wtg_linus2006 (struct wtg_run *run)
{
  const struct wtg_options *o = run->opt;
  uint64_t nchunks = (o->size + o->chunk - 1) / o->chunk;
  if (o->size == 0 || nchunks * o->passes > UINT32_MAX)
    return wtg_fail (run, "linus2006: --size %" PRIu64 " in --chunk %" PRIu64
                     " over %" PRIu32 " passes: need 1 to 2^32 chunk stores",
                     o->size, o->chunk, o->passes);
  struct wtg_file *f;
  uint32_t *order = wtg_linus_order (run, nchunks);
  if (!order || wtg_linus_create (run, &f) < 0) {
    free (order);
    return -1;
  }
  unsigned char *map = mmap (NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
  if (map == MAP_FAILED) {
    free (order);
    return wtg_fail (run, "mmap: %s (%" PRIu64 " bytes): %m", f->path, f->size);
  }
  int rc = wtg_linus_write (run, f, map, order, nchunks);
  free (order);
  /* What the page cache holds, before fadvise drops the clean pages and the
   * remap check reads them from the disk: the 2006 signature is a cache
   * that was right and a disk that was not. */
  if (rc == 0) {
    wtg_mark (run, "phase readback");
    rc = wtg_readback (run);
  }
  wtg_mark (run, "phase munmap");
  wtg_model_op (&run->model, f->id, WTMF_OP_MUNMAP, 0, f->size);
  if (munmap (map, f->size) < 0 && rc == 0)
    rc = wtg_fail (run, "munmap: %s: %m", f->path);
  if (rc < 0)
    return rc;
  wtg_mark (run, "phase fadvise");
  int e = posix_fadvise (f->fd, 0, (off_t) f->size, POSIX_FADV_DONTNEED);
  if (e) {
    errno = e;
    return wtg_fail (run, "posix_fadvise DONTNEED: %s: %m", f->path);
  }
  wtg_mark (run, "phase remap");
  return wtg_linus_check (run, f, nchunks);
}
