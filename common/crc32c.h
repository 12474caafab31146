/* CRC32C (Castagnoli), the checksum of every wtrack format. */
#ifndef WT_CRC32C_H
#define WT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC over more bytes: start with crc = 0, feed pieces in order.
 * wt_crc32c_update(wt_crc32c_update(0, a, n), b, m) == CRC32C of a||b. */
uint32_t wt_crc32c_update (uint32_t crc, const void *buf, size_t len);

/* Which code computes it on this CPU: "sse42" (the crc32 instruction) or
 * "slice8" (slicing-by-8 tables). */
const char *wt_crc32c_kind (void);

static inline uint32_t
wt_crc32c (const void *buf, size_t len)
{
  return wt_crc32c_update (0, buf, len);
}

#endif
