/* Where a file's bytes are on the disk: FIEMAP, else FIBMAP block by block,
 * else one extent marked unmappable (tmpfs and friends have no disk). */
#include <errno.h>
#include <inttypes.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "guest.h"
#include "sector-hash.h"

#define WTG_FIEMAP_BATCH 256
/* A file with more extents than this is not what the workloads make; the
 * bound keeps a confused kernel from looping us forever. */
#define WTG_MAX_EXTENTS (1u << 24)

struct wtg_extents {
  struct wtmf_extent *v;
  uint32_t n, cap;
};

static int
wtg_extents_push (struct wtg_extents *x, uint64_t logical, uint64_t physical,
                  uint64_t length, uint32_t flags)
{
  /* Adjacent on both sides with equal flags: one extent (FIBMAP gives a
   * block at a time). */
  if (x->n) {
    struct wtmf_extent *last = &x->v[x->n - 1];
    if (last->flags == flags && last->logical + last->length == logical
        && last->physical + last->length == physical) {
      last->length += length;
      return 0;
    }
  }
  if (x->n == WTG_MAX_EXTENTS) {
    errno = E2BIG;
    return -1;
  }
  if (x->n == x->cap) {
    uint32_t cap = x->cap ? x->cap * 2 : 64;
    struct wtmf_extent *v = realloc (x->v, cap * sizeof *v);
    if (!v)
      return -1;
    x->v = v;
    x->cap = cap;
  }
  x->v[x->n++] = (struct wtmf_extent) {
    .logical = logical, .physical = physical, .length = length, .flags = flags,
  };
  return 0;
}

static uint32_t
wtg_fiemap_flags (uint32_t fe_flags)
{
  const uint32_t no_disk_bytes = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC
    | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_ENCRYPTED
    | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_DATA_INLINE
    | FIEMAP_EXTENT_DATA_TAIL;
  uint32_t flags = 0;
  if (fe_flags & FIEMAP_EXTENT_UNWRITTEN)
    flags |= WTMF_EXT_UNWRITTEN;
  if (fe_flags & no_disk_bytes)
    flags |= WTMF_EXT_UNMAPPABLE;
  /* Mapped after a sync (FIEMAP_FLAG_SYNC): a delayed allocation still
   * pending is data the kernel never wrote; check judges it. */
  if (fe_flags & FIEMAP_EXTENT_DELALLOC)
    flags |= WTMF_EXT_DELALLOC;
  return flags;
}

/* 0 done, -1 failed with errno (EOPNOTSUPP, ENOTTY: no FIEMAP here). */
static int
wtg_fiemap (int fd, struct wtg_extents *x, char *err, size_t errlen)
{
  size_t bytes = sizeof (struct fiemap) + WTG_FIEMAP_BATCH * sizeof (struct fiemap_extent);
  struct fiemap *fm = calloc (1, bytes);
  if (!fm) {
    snprintf (err, errlen, "malloc: FIEMAP buffer: %m");
    return -1;
  }
  uint64_t start = 0;
  uint32_t sync = FIEMAP_FLAG_SYNC;
  for (;;) {
    memset (fm, 0, bytes);
    fm->fm_start = start;
    fm->fm_length = FIEMAP_MAX_OFFSET - start;
    fm->fm_flags = sync;
    fm->fm_extent_count = WTG_FIEMAP_BATCH;
    if (ioctl (fd, FS_IOC_FIEMAP, fm) < 0) {
      int saved = errno;
      snprintf (err, errlen, "ioctl FIEMAP at byte %" PRIu64 ": %m", start);
      free (fm);
      errno = saved;
      return -1;
    }
    sync = 0;                   /* synced once is enough */
    bool last = fm->fm_mapped_extents == 0;
    uint64_t next = start;
    for (uint32_t i = 0; i < fm->fm_mapped_extents; i++) {
      const struct fiemap_extent *fe = &fm->fm_extents[i];
      if (fe->fe_length && wtg_extents_push (x, fe->fe_logical, fe->fe_physical,
                                              fe->fe_length, wtg_fiemap_flags (fe->fe_flags)) < 0) {
        int saved = errno;
        snprintf (err, errlen, "extent list: %m");
        free (fm);
        errno = saved;
        return -1;
      }
      if (fe->fe_logical + fe->fe_length > next)
        next = fe->fe_logical + fe->fe_length;
      if (fe->fe_flags & FIEMAP_EXTENT_LAST)
        last = true;
    }
    if (last)
      break;
    if (next <= start) {
      snprintf (err, errlen, "ioctl FIEMAP at byte %" PRIu64 ": no progress", start);
      free (fm);
      errno = EIO;
      return -1;
    }
    start = next;
  }
  free (fm);
  return 0;
}

/* One ioctl per block: slow, and only where FIEMAP is missing. */
static int
wtg_fibmap (int fd, uint64_t size, struct wtg_extents *x, char *err, size_t errlen)
{
  int bsz;
  if (ioctl (fd, FIGETBSZ, &bsz) < 0 || bsz <= 0) {
    snprintf (err, errlen, "ioctl FIGETBSZ: %m");
    return -1;
  }
  uint64_t nblocks = (size + (uint64_t) bsz - 1) / (uint64_t) bsz;
  for (uint64_t b = 0; b < nblocks; b++) {
    int blk = (int) b;
    if (b > INT32_MAX) {
      snprintf (err, errlen, "ioctl FIBMAP: block %" PRIu64 " is past its 32-bit range", b);
      errno = EFBIG;
      return -1;
    }
    if (ioctl (fd, FIBMAP, &blk) < 0) {
      snprintf (err, errlen, "ioctl FIBMAP at block %" PRIu64 ": %m", b);
      return -1;
    }
    if (blk == 0)
      continue;                 /* a hole */
    if (wtg_extents_push (x, b * (uint64_t) bsz, (uint64_t) (unsigned) blk * (uint64_t) bsz,
                          (uint64_t) bsz, 0) < 0) {
      snprintf (err, errlen, "extent list: %m");
      return -1;
    }
  }
  return 0;
}

static bool
wtg_unsupported (int e)
{
  return e == EOPNOTSUPP || e == ENOTTY || e == EINVAL || e == ENOSYS;
}

/* The extents of an open file. method says which way they were found:
 * "fiemap", "fibmap" or "none" (the whole file as one unmappable extent). */
int
wtg_extents (int fd, const char *path, uint64_t size, struct wtmf_extent **out,
             uint32_t *n, const char **method, char *err, size_t errlen)
{
  struct wtg_extents x = { 0 };
  char why[200];
  *method = "fiemap";
  if (wtg_fiemap (fd, &x, why, sizeof why) == 0)
    goto done;
  if (!wtg_unsupported (errno)) {
    snprintf (err, errlen, "%s: %s", path, why);
    free (x.v);
    return -1;
  }
  x.n = 0;
  *method = "fibmap";
  if (wtg_fibmap (fd, size, &x, why, sizeof why) == 0)
    goto done;
  if (!wtg_unsupported (errno) && errno != EPERM) {
    snprintf (err, errlen, "%s: %s", path, why);
    free (x.v);
    return -1;
  }
  x.n = 0;
  *method = "none";
  if (size && wtg_extents_push (&x, 0, 0, wtmf_sectors_of (size) * WT_SECTOR_SIZE,
                                WTMF_EXT_UNMAPPABLE) < 0) {
    snprintf (err, errlen, "%s: extent list: %m", path);
    free (x.v);
    return -1;
  }
 done:
  *out = x.v;
  *n = x.n;
  return 0;
}
