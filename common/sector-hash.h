/* The sector hash of every wtrack format: XXH3-64 of 512 bytes, unseeded, so
 * equal content has equal hash wherever it lies. */
#ifndef WT_SECTOR_HASH_H
#define WT_SECTOR_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define WT_SECTOR_SIZE 512u
#define WT_SECTOR_SHIFT 9
#define WT_HASH_XXH3_64 1u

static inline uint64_t
wt_sector_hash (const void *sector)
{
  return XXH3_64bits (sector, WT_SECTOR_SIZE);
}

/* Hashes of n consecutive whole sectors. */
static inline void
wt_sector_hashes (const void *buf, size_t n, uint64_t *out)
{
  const unsigned char *p = buf;
  for (size_t i = 0; i < n; i++)
    out[i] = wt_sector_hash (p + i * WT_SECTOR_SIZE);
}

#endif
