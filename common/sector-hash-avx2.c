/* Compiled with -mavx2 (common.mk), so that xxhash.h picks its AVX2 code;
 * nothing else belongs in this file, since any of it may use AVX2. */
#include "sector-hash-avx2.h"

#ifdef WT_HAVE_AVX2_HASH
#include "sector-hash.h"

uint64_t
wt_sector_hash_avx2 (const void *sector)
{
  return XXH3_64bits (sector, WT_SECTOR_SIZE);
}
#endif
