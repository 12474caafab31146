/* The sector hash of every wtrack format: XXH3-64 of 512 bytes, unseeded, so
 * equal content has equal hash wherever it lies. */
#ifndef WT_SECTOR_HASH_H
#define WT_SECTOR_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Also for callers that hash other things with XXH3 (manifest digests). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define WT_SECTOR_SIZE 512u
#define WT_SECTOR_SHIFT 9
#define WT_HASH_XXH3_64 1u

/* The hash of one sector.  Uses AVX2 where the CPU has it (twice as fast on
 * 512 bytes as the SSE2 code that x86-64 can assume): see sector-hash.c. */
uint64_t wt_sector_hash (const void *sector);

/* Which code wt_sector_hash runs on this CPU: "avx2", else "sse2" on
 * x86-64 and "baseline" elsewhere. */
const char *wt_sector_hash_kind (void);

/* Hashes of n consecutive whole sectors. */
void wt_sector_hashes (const void *buf, size_t n, uint64_t *out);

#endif
