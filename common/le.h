/* Little-endian field access for the on-disk formats.  Every integer of
 * every format is little-endian, whatever the host: a big-endian guest
 * (s390x) writes channel messages and manifests that an amd64 host reads.
 * On a little-endian host each accessor is one load or store (memcpy),
 * each array helper one memcpy; on a big-endian host they swap bytes. */
#ifndef WT_LE_H
#define WT_LE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WT_HOST_LE 1
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define WT_HOST_LE 0
#else
#error "wtrack needs a little-endian or big-endian host"
#endif

/* From host order to little-endian and back (the same swap either way). */
static inline uint16_t wt_le16 (uint16_t v) { return WT_HOST_LE ? v : __builtin_bswap16 (v); }
static inline uint32_t wt_le32 (uint32_t v) { return WT_HOST_LE ? v : __builtin_bswap32 (v); }
static inline uint64_t wt_le64 (uint64_t v) { return WT_HOST_LE ? v : __builtin_bswap64 (v); }

static inline uint16_t wt_get16 (const void *p) { uint16_t v; memcpy (&v, p, 2); return wt_le16 (v); }
static inline uint32_t wt_get32 (const void *p) { uint32_t v; memcpy (&v, p, 4); return wt_le32 (v); }
static inline uint64_t wt_get64 (const void *p) { uint64_t v; memcpy (&v, p, 8); return wt_le64 (v); }
static inline void wt_put16 (void *p, uint16_t v) { v = wt_le16 (v); memcpy (p, &v, 2); }
static inline void wt_put32 (void *p, uint32_t v) { v = wt_le32 (v); memcpy (p, &v, 4); }
static inline void wt_put64 (void *p, uint64_t v) { v = wt_le64 (v); memcpy (p, &v, 8); }

/* Arrays of u64 (sector hashes) and u32 (op numbers, errnos): n values
 * from host order into little-endian bytes, and back. */
static inline void
wt_put64_array (void *dst, const uint64_t *src, size_t n)
{
  if (WT_HOST_LE) {
    if (n)
      memcpy (dst, src, 8 * n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    wt_put64 ((unsigned char *) dst + 8 * i, src[i]);
}

static inline void
wt_get64_array (uint64_t *dst, const void *src, size_t n)
{
  if (WT_HOST_LE) {
    if (n)
      memcpy (dst, src, 8 * n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    dst[i] = wt_get64 ((const unsigned char *) src + 8 * i);
}

static inline void
wt_put32_array (void *dst, const uint32_t *src, size_t n)
{
  if (WT_HOST_LE) {
    if (n)
      memcpy (dst, src, 4 * n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    wt_put32 ((unsigned char *) dst + 4 * i, src[i]);
}

static inline void
wt_get32_array (uint32_t *dst, const void *src, size_t n)
{
  if (WT_HOST_LE) {
    if (n)
      memcpy (dst, src, 4 * n);
    return;
  }
  for (size_t i = 0; i < n; i++)
    dst[i] = wt_get32 ((const unsigned char *) src + 4 * i);
}

static inline uint64_t wt_align8 (uint64_t n) { return (n + 7) & ~(uint64_t) 7; }

#endif
