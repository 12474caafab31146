/* pwrite: plain write(2)-path I/O for contrast with the mmap workloads.
 * Each file is first filled sequentially (so it has no holes and every byte
 * has a disk block; with --fill-sync-every N, syncfs after each N blocks,
 * so the metadata on the disk, not only in the journal, holds every file
 * as it grows: a later lost metadata write then leaves a file short or
 * pointing elsewhere after a reboot), then overwritten by --ops random pwrites of 512 bytes
 * to 64 KiB, a quarter of them at unaligned offsets and lengths; every
 * --fsync-every ops every file is fsynced (with --checkpoint, followed by a
 * checkpoint manifest). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "sector-hash.h"

#define WTG_PWRITE_MAX (64u << 10)
#define WTG_FILL_BLOCK (64u << 10)

static int
wtg_pwrite_store (struct wtg_run *run, struct wtg_file *f, uint64_t off,
                  size_t len, uint64_t generation)
{
  wtg_fill_keyed (f->image + off, off, len, wtg_content_key (run->opt->seed, f->id, generation));
  wtg_model_op (&run->model, f->id, WTMF_OP_PWRITE, off, len);
  if (wt_pwrite_full (f->fd, f->image + off, len, off) < 0)
    return wtg_fail (run, "pwrite: %s, %zu bytes at byte %" PRIu64 ": %m", f->path, len, off);
  return 0;
}

/* syncfs, not fsync: on ext4 an fsync only commits the journal, syncfs
 * also writes the block device's dirty metadata to its home place. */
static int
wtg_pwrite_fill_sync (struct wtg_run *run, struct wtg_file *f, uint64_t filled)
{
  if (syncfs (f->fd) < 0)
    return wtg_fail (run, "syncfs: %s: %m", f->path);
  return wtg_mark (run, "syncfs file %" PRIu32 " at %" PRIu64, f->id, filled);
}

static int
wtg_pwrite_fill (struct wtg_run *run)
{
  for (uint32_t i = 0; i < run->opt->files; i++) {
    struct wtg_file *f = wtg_model_create_file (run, false);
    if (!f)
      return -1;
    uint32_t every = run->opt->fill_sync_every;
    for (uint64_t off = 0, block = 1; off < f->size; off += WTG_FILL_BLOCK, block++) {
      size_t len = f->size - off < WTG_FILL_BLOCK ? f->size - off : WTG_FILL_BLOCK;
      if (wtg_pwrite_store (run, f, off, len, 0) < 0)
        return -1;
      if (every && block % every == 0 && wtg_pwrite_fill_sync (run, f, off + len) < 0)
        return -1;
    }
  }
  return 0;
}

static int
wtg_pwrite_sync_all (struct wtg_run *run)
{
  for (uint32_t i = 0; i < run->model.nfiles; i++)
    if (wtg_fsync_file (run, &run->model.files[i]) < 0)
      return -1;
  return run->opt->checkpoint ? wtg_checkpoint (run) : 0;
}

/* One random overwrite; op i (from 1) writes generation i, so every
 * overwrite has content of its own. */
static int
wtg_pwrite_random (struct wtg_run *run, struct wtg_rng *rng, uint64_t i)
{
  struct wtg_file *f = &run->model.files[wtg_rng_below (rng, run->model.nfiles)];
  uint64_t max = f->size < WTG_PWRITE_MAX ? f->size : WTG_PWRITE_MAX;
  bool unaligned = wtg_rng_below (rng, 4) == 0;
  uint64_t len, off;
  if (unaligned || max < WT_SECTOR_SIZE) {
    uint64_t min = max < WT_SECTOR_SIZE ? max : WT_SECTOR_SIZE;
    len = min + wtg_rng_below (rng, max - min + 1);
    off = wtg_rng_below (rng, f->size - len + 1);
  } else {
    len = WT_SECTOR_SIZE * (1 + wtg_rng_below (rng, max / WT_SECTOR_SIZE));
    off = WT_SECTOR_SIZE * wtg_rng_below (rng, (f->size - len) / WT_SECTOR_SIZE + 1);
  }
  return wtg_pwrite_store (run, f, off, (size_t) len, i);
}

int
wtg_pwrite (struct wtg_run *run)
{
  if (run->opt->size == 0)
    return wtg_fail (run, "pwrite: --size must be at least 1 byte");
  wtg_mark (run, "phase fill");
  if (wtg_pwrite_fill (run) < 0)
    return -1;
  wtg_mark (run, "phase write");
  struct wtg_rng rng;
  wtg_rng_init (&rng, run->opt->seed, "pwrite ops");
  for (uint64_t i = 1; i <= run->opt->ops; i++) {
    if (wtg_pwrite_random (run, &rng, i) < 0)
      return -1;
    if (run->opt->fsync_every && i % run->opt->fsync_every == 0 && wtg_pwrite_sync_all (run) < 0)
      return -1;
  }
  return 0;
}
