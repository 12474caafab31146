/* Little-endian field access for the on-disk formats. */
#ifndef WT_LE_H
#define WT_LE_H

#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "wtrack stores hash arrays in host order and supports little-endian hosts only"
#endif

static inline uint16_t wt_get16 (const void *p) { uint16_t v; memcpy (&v, p, 2); return v; }
static inline uint32_t wt_get32 (const void *p) { uint32_t v; memcpy (&v, p, 4); return v; }
static inline uint64_t wt_get64 (const void *p) { uint64_t v; memcpy (&v, p, 8); return v; }
static inline void wt_put16 (void *p, uint16_t v) { memcpy (p, &v, 2); }
static inline void wt_put32 (void *p, uint32_t v) { memcpy (p, &v, 4); }
static inline void wt_put64 (void *p, uint64_t v) { memcpy (p, &v, 8); }

static inline uint64_t wt_align8 (uint64_t n) { return (n + 7) & ~(uint64_t) 7; }

#endif
