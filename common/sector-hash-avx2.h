/* The AVX2 build of the sector hash; call it only where the CPU has AVX2
 * (sector-hash.c checks). */
#ifndef WT_SECTOR_HASH_AVX2_H
#define WT_SECTOR_HASH_AVX2_H

#include <stdint.h>

#if defined(__x86_64__)
#define WT_HAVE_AVX2_HASH 1
uint64_t wt_sector_hash_avx2 (const void *sector);
#endif

#endif
