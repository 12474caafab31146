/* CRC32C with the SSE4.2 instruction where the CPU has it, else slicing-by-8.
 * The guest runs under QEMU's default CPU model, which lacks SSE4.2, so the
 * choice is made at run time. */
#include "crc32c.h"

#include <string.h>

#include "le.h"

#define WT_CRC32C_POLY 0x82f63b78u  /* reflected Castagnoli polynomial */

static uint32_t wt_crc32c_table[8][256];

static void
wt_crc32c_init_table (void)
{
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ (WT_CRC32C_POLY & (0u - (c & 1)));
    wt_crc32c_table[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; n++)
    for (int t = 1; t < 8; t++)
      wt_crc32c_table[t][n] = (wt_crc32c_table[t - 1][n] >> 8)
        ^ wt_crc32c_table[0][wt_crc32c_table[t - 1][n] & 0xff];
}

static uint32_t
wt_crc32c_soft (uint32_t crc, const unsigned char *p, size_t len)
{
  while (len >= 8) {
    /* the table is for the bytes in stream order: little-endian words */
    uint64_t w = wt_get64 (p) ^ crc;
    crc = wt_crc32c_table[7][w & 0xff] ^ wt_crc32c_table[6][(w >> 8) & 0xff]
      ^ wt_crc32c_table[5][(w >> 16) & 0xff] ^ wt_crc32c_table[4][(w >> 24) & 0xff]
      ^ wt_crc32c_table[3][(w >> 32) & 0xff] ^ wt_crc32c_table[2][(w >> 40) & 0xff]
      ^ wt_crc32c_table[1][(w >> 48) & 0xff] ^ wt_crc32c_table[0][w >> 56];
    p += 8;
    len -= 8;
  }
  while (len--)
    crc = (crc >> 8) ^ wt_crc32c_table[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
/* The crc32 instruction takes 3 cycles and can start one a cycle, so one
 * chain of them runs at a third of the speed the CPU has.  A buffer is cut
 * into blocks of three lanes, each lane run as its own chain; the chains
 * are then joined by the CRC's linearity: the state after lanes A and B is
 * shift(state after A) ^ (B's chain started at 0), where shift feeds a
 * lane of zero bytes, a linear map kept as byte tables.  Long lanes for
 * long buffers; short ones for the rest, so that a 4 KiB record (the
 * plugin's commonest) runs in lanes too instead of one chain. */
struct wt_crc32c_lanes {
  size_t lane;
  uint32_t shift[4][256];
};
static struct wt_crc32c_lanes wt_crc32c_long = { .lane = 4096 };
static struct wt_crc32c_lanes wt_crc32c_short = { .lane = 256 };

__attribute__ ((target ("sse4.2")))
static uint32_t
wt_crc32c_hw_chain (uint32_t crc, const unsigned char *p, size_t len)
{
  uint64_t c = crc;
  while (len >= 8) {
    uint64_t w;
    memcpy (&w, p, 8);
    c = __builtin_ia32_crc32di (c, w);
    p += 8;
    len -= 8;
  }
  uint32_t c32 = (uint32_t) c;
  while (len--)
    c32 = __builtin_ia32_crc32qi (c32, *p++);
  return c32;
}

/* The shift over one lane: the state x followed by a lane of zeroes. */
static uint32_t
wt_crc32c_shift (const struct wt_crc32c_lanes *l, uint32_t x)
{
  return l->shift[0][x & 0xff] ^ l->shift[1][(x >> 8) & 0xff]
    ^ l->shift[2][(x >> 16) & 0xff] ^ l->shift[3][x >> 24];
}

/* Each table entry is the XOR of the shifts of its set bits, and the
 * shift of one bit is the chain run over a lane of zeroes. */
static void
wt_crc32c_init_shift (struct wt_crc32c_lanes *l)
{
  static const unsigned char zeroes[4096];
  uint32_t bit_shift[32];
  for (int b = 0; b < 32; b++)
    bit_shift[b] = wt_crc32c_hw_chain (UINT32_C (1) << b, zeroes, l->lane);
  for (int k = 0; k < 4; k++)
    for (uint32_t v = 0; v < 256; v++) {
      uint32_t t = 0;
      for (int b = 0; b < 8; b++)
        if (v & (1u << b))
          t ^= bit_shift[8 * k + b];
      l->shift[k][v] = t;
    }
}

/* The blocks of three lanes at *p, while *len holds one; *p and *len
 * move past them. */
__attribute__ ((target ("sse4.2")))
static uint32_t
wt_crc32c_hw_blocks (const struct wt_crc32c_lanes *l, uint32_t crc,
                     const unsigned char **p, size_t *len)
{
  const size_t lane = l->lane;
  while (*len >= 3 * lane) {
    const unsigned char *q = *p;
    uint64_t c0 = crc, c1 = 0, c2 = 0;
    for (size_t i = 0; i < lane; i += 8) {
      uint64_t w0, w1, w2;
      memcpy (&w0, q + i, 8);
      memcpy (&w1, q + lane + i, 8);
      memcpy (&w2, q + 2 * lane + i, 8);
      c0 = __builtin_ia32_crc32di (c0, w0);
      c1 = __builtin_ia32_crc32di (c1, w1);
      c2 = __builtin_ia32_crc32di (c2, w2);
    }
    crc = wt_crc32c_shift (l, wt_crc32c_shift (l, (uint32_t) c0) ^ (uint32_t) c1)
      ^ (uint32_t) c2;
    *p += 3 * lane;
    *len -= 3 * lane;
  }
  return crc;
}

static uint32_t
wt_crc32c_hw (uint32_t crc, const unsigned char *p, size_t len)
{
  crc = wt_crc32c_hw_blocks (&wt_crc32c_long, crc, &p, &len);
  crc = wt_crc32c_hw_blocks (&wt_crc32c_short, crc, &p, &len);
  return wt_crc32c_hw_chain (crc, p, len);
}

#endif

typedef uint32_t (*wt_crc32c_fn) (uint32_t, const unsigned char *, size_t);

static wt_crc32c_fn
wt_crc32c_pick (void)
{
#if defined(__x86_64__)
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("sse4.2")) {
    wt_crc32c_init_shift (&wt_crc32c_long);
    wt_crc32c_init_shift (&wt_crc32c_short);
    return wt_crc32c_hw;
  }
#endif
  wt_crc32c_init_table ();
  return wt_crc32c_soft;
}

static wt_crc32c_fn wt_crc32c_impl;

__attribute__ ((constructor))
static void
wt_crc32c_setup (void)
{
  wt_crc32c_impl = wt_crc32c_pick ();
}

uint32_t
wt_crc32c_update (uint32_t crc, const void *buf, size_t len)
{
  if (!wt_crc32c_impl)          /* callers from other constructors */
    wt_crc32c_setup ();
  return ~wt_crc32c_impl (~crc, buf, len);
}

const char *
wt_crc32c_kind (void)
{
  if (!wt_crc32c_impl)
    wt_crc32c_setup ();
  return wt_crc32c_impl == wt_crc32c_soft ? "slice8" : "sse42";
}
