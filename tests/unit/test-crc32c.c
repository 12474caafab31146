/* CRC32C (common/crc32c.c) against a bit-at-a-time reference written from
 * the definition: the check value of the standard, lengths around the
 * three-lane blocks of the crc32 instruction path, unaligned starts, and a
 * CRC continued over pieces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "tap.h"

/* The reflected Castagnoli CRC, one bit at a time. */
static uint32_t
reference (const unsigned char *p, size_t len)
{
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < len; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
  }
  return ~crc;
}

int
main (void)
{
  static const size_t lengths[] = {
    0, 1, 7, 8, 767, 768, 769, 1536 + 3, 4095, 4096, 4160, 12287, 12288, 12289,
    12288 + 768 + 5, 24576 + 5, 65536, (1u << 20) + 13,
  };
  enum { NLEN = sizeof lengths / sizeof lengths[0], MAXLEN = (1u << 20) + 16 };
  unsigned char *buf = malloc (MAXLEN);
  if (!buf)
    return 1;
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < MAXLEN; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    buf[i] = (unsigned char) x;
  }

  tap_plan (3 + NLEN);
  tap_ok (wt_crc32c ("123456789", 9) == 0xe3069283u,
          "the check value: CRC32C(\"123456789\") = 0xe3069283 (%s)", wt_crc32c_kind ());
  for (int n = 0; n < NLEN; n++) {
    int same = 1;
    for (size_t start = 0; start < 4; start++)
      same &= wt_crc32c (buf + start, lengths[n]) == reference (buf + start, lengths[n]);
    tap_ok (same, "%zu bytes at 4 starts: as the reference", lengths[n]);
  }
  size_t whole = (1u << 20) + 13;
  uint32_t want = reference (buf, whole);
  int pieces_same = 1;
  for (size_t cut = 0; cut < whole; cut += 4093)
    pieces_same &= wt_crc32c_update (wt_crc32c (buf, cut), buf + cut, whole - cut) == want;
  tap_ok (pieces_same, "continued over two pieces cut every 4093 bytes: as the whole");
  uint32_t zeroes_crc;
  memset (buf, 0, 3 * 4096);
  zeroes_crc = wt_crc32c (buf, 3 * 4096);
  tap_ok (zeroes_crc == reference (buf, 3 * 4096), "one block of zeroes: as the reference");
  free (buf);
  return tap_done ();
}
