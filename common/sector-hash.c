/* wt_sector_hash, with the XXH3 code chosen at run time: the AVX2 build of it
 * (sector-hash-avx2.c, compiled with -mavx2) where the CPU has AVX2, else
 * the one built for the baseline CPU.  The guest runs under QEMU's default
 * CPU model, which lacks AVX2; the plugin and the checker run on the host.
 * XXH3's result does not depend on the code that computes it. */
#include "sector-hash.h"

#include "sector-hash-avx2.h"

typedef uint64_t (*wt_sector_hash_fn) (const void *);

static uint64_t
wt_sector_hash_baseline (const void *sector)
{
  return XXH3_64bits (sector, WT_SECTOR_SIZE);
}

static wt_sector_hash_fn
wt_sector_hash_pick (void)
{
#ifdef WT_HAVE_AVX2_HASH
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx2"))
    return wt_sector_hash_avx2;
#endif
  return wt_sector_hash_baseline;
}

/* Picked on first use; threads racing to pick store the same pointer. */
static wt_sector_hash_fn wt_sector_hash_impl;

static wt_sector_hash_fn
wt_sector_hash_get (void)
{
  wt_sector_hash_fn fn = __atomic_load_n (&wt_sector_hash_impl, __ATOMIC_RELAXED);
  if (!fn) {
    fn = wt_sector_hash_pick ();
    __atomic_store_n (&wt_sector_hash_impl, fn, __ATOMIC_RELAXED);
  }
  return fn;
}

uint64_t
wt_sector_hash (const void *sector)
{
  return wt_sector_hash_get () (sector);
}

const char *
wt_sector_hash_kind (void)
{
  if (wt_sector_hash_get () != wt_sector_hash_baseline)
    return "avx2";
#if defined(__x86_64__)
  return "sse2";                /* XXH3's code for the x86-64 baseline */
#else
  return "baseline";
#endif
}

void
wt_sector_hashes (const void *buf, size_t n, uint64_t *out)
{
  wt_sector_hash_fn fn = wt_sector_hash_get ();
  const unsigned char *p = buf;
  for (size_t i = 0; i < n; i++)
    out[i] = fn (p + i * WT_SECTOR_SIZE);
}
