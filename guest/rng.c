/* Seeded choices and content: splitmix64, so the same seed gives the same
 * bytes and the same order on any machine. */
#include <string.h>

#include "guest.h"
#include "le.h"

uint64_t
wtg_mix64 (uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Each purpose ("order", "rewrite", ...) gets its own stream, so adding a
 * choice to one part of a workload does not shift the others. */
void
wtg_rng_init (struct wtg_rng *r, uint64_t seed, const char *purpose)
{
  uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a of the purpose */
  for (const char *p = purpose; *p; p++)
    h = (h ^ (unsigned char) *p) * 0x100000001b3ull;
  r->state = wtg_mix64 (seed) ^ h;
}

uint64_t
wtg_rng_next (struct wtg_rng *r)
{
  r->state += 0x9e3779b97f4a7c15ull;
  uint64_t z = r->state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform enough in [0, n), n > 0 (multiply-shift, no modulo bias worth
 * speaking of for the ranges used here). */
uint64_t
wtg_rng_below (struct wtg_rng *r, uint64_t n)
{
  return (uint64_t) (((unsigned __int128) wtg_rng_next (r) * n) >> 64);
}

void
wtg_shuffle (struct wtg_rng *r, uint32_t *a, uint32_t n)
{
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = (uint32_t) wtg_rng_below (r, i);
    uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
  }
}

uint64_t
wtg_content_key (uint64_t seed, uint32_t file_id, uint64_t generation)
{
  return wtg_mix64 (wtg_mix64 (seed ^ 0x77747261636bull) ^ ((uint64_t) file_id << 40)
                    ^ generation);
}

/* Content that depends only on (key, file offset): the bytes of a range are
 * the same however it is split into writes, and every 8-byte word differs,
 * so equal sector hashes mean equal places. */
void
wtg_fill_keyed (unsigned char *dst, uint64_t file_off, size_t len, uint64_t key)
{
  size_t i = 0;
  while (i < len) {
    uint64_t at = file_off + i;
    unsigned char word[8];      /* little-endian: the same bytes on any host */
    wt_put64 (word, wtg_mix64 (key ^ (at / 8 * 0xd6e8feb86659fd93ull)));
    unsigned skip = (unsigned) (at % 8);
    size_t n = 8 - skip;
    if (n > len - i)
      n = len - i;
    memcpy (dst + i, word + skip, n);
    i += n;
  }
}

/* Linus's chunks: a u32 repeated, little-endian, from the chunk's start. */
void
wtg_fill_u32 (unsigned char *dst, size_t len, uint32_t value)
{
  unsigned char v[4] = { value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff,
                         value >> 24 };
  for (size_t i = 0; i < len; i++)
    dst[i] = v[i & 3];
}
