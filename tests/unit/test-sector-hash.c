/* wt_sector_hash, whichever code the CPU gets, equals XXH3-64 of the sector as
 * the baseline build computes it: on fixed patterns, on random sectors at
 * every alignment, and through wt_sector_hashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sector-hash.h"
#include "tap.h"

static uint64_t
reference (const void *sector)
{
  return XXH3_64bits (sector, WT_SECTOR_SIZE);
}

static void
fill_random (unsigned char *p, size_t n, uint64_t *state)
{
  for (size_t i = 0; i < n; i++) {
    *state = *state * 6364136223846793005u + 1442695040888963407u;
    p[i] = (unsigned char) (*state >> 56);
  }
}

int
main (void)
{
  static unsigned char buf[64 * WT_SECTOR_SIZE + 64];
  uint64_t state = 42;

  tap_plan (4);
  printf ("# sector hash code on this CPU: %s\n", wt_sector_hash_kind ());

  int fixed_ok = 1;
  for (int v = 0; v < 256; v += 85) {
    memset (buf, v, WT_SECTOR_SIZE);
    fixed_ok &= wt_sector_hash (buf) == reference (buf);
  }
  tap_ok (fixed_ok, "sectors of 0x00, 0x55, 0xaa, 0xff hash as XXH3-64");

  int random_ok = 1;
  for (int i = 0; i < 2000 && random_ok; i++) {
    unsigned char *sector = buf + i % 64;
    fill_random (sector, WT_SECTOR_SIZE, &state);
    random_ok = wt_sector_hash (sector) == reference (sector);
    if (!random_ok)
      printf ("# mismatch at try %d (alignment %d)\n", i, i % 64);
  }
  tap_ok (random_ok, "2000 random sectors at every alignment hash as XXH3-64");

  fill_random (buf, 64 * WT_SECTOR_SIZE, &state);
  uint64_t hashes[64];
  wt_sector_hashes (buf, 64, hashes);
  int many_ok = 1;
  for (int i = 0; i < 64; i++)
    many_ok &= hashes[i] == reference (buf + i * WT_SECTOR_SIZE);
  tap_ok (many_ok, "wt_sector_hashes of 64 sectors");

  /* Equal content, equal hash, wherever it lies; different content differs. */
  memcpy (buf + 7 * WT_SECTOR_SIZE, buf + 3 * WT_SECTOR_SIZE, WT_SECTOR_SIZE);
  buf[9 * WT_SECTOR_SIZE] ^= 1;
  tap_ok (wt_sector_hash (buf + 7 * WT_SECTOR_SIZE) == wt_sector_hash (buf + 3 * WT_SECTOR_SIZE)
          && wt_sector_hash (buf + 9 * WT_SECTOR_SIZE) != hashes[9],
          "equal sectors hash alike, a flipped bit changes the hash");
  return tap_done ();
}
