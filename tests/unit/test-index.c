/* The plugin's log-as-store index (plugin/index.c) against a byte array fed
 * the same writes, zeroes and reads: random ranges over a small disk, so
 * they overlap, split and swallow one another, across the seams of the
 * index's shards; and a zero of a huge range costs one extent a shard. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../../plugin/index.h"

/* 16 shards of 64 KiB: random ranges cross their seams. */
#define DISK (1 << 20)
#define LOG_MAX (128u << 20)

static unsigned char base[DISK], model[DISK], logbuf[LOG_MAX];
static uint64_t log_used;

/* Positions with this bit are the base's (the plugin's queue: a record the
 * mover applied onto the image): read_log says so with 1. */
#define AT_BASE (UINT64_C (1) << 62)

static int
read_log (void *dst, uint64_t log_pos, uint64_t length)
{
  if (log_pos & AT_BASE)
    return 1;
  memcpy (dst, logbuf + log_pos, length);
  return 0;
}

static int
read_base (void *ctx, void *buf, size_t count, uint64_t offset)
{
  (void) ctx;
  memcpy (buf, base + offset, count);
  return 0;
}

static uint32_t
rnd (uint32_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

typedef void picker (uint32_t *s, uint64_t *off, uint64_t *len);

/* A range with a random start and length, often unaligned; one in four
 * long enough to cross a shard or two. */
static void
pick (uint32_t *s, uint64_t *off, uint64_t *len)
{
  *off = rnd (s) % DISK;
  uint64_t max = DISK - *off;
  *len = 1 + rnd (s) % (rnd (s) % 4 ? 2048 : 3 * 65536);
  if (*len > max)
    *len = max;
}

/* One to four 4 KiB blocks at a block boundary, as a file system writes:
 * most updates either rewrite an extent exactly or fill a gap, the two
 * updates the index makes in one walk. */
static void
pick_blocks (uint32_t *s, uint64_t *off, uint64_t *len)
{
  uint64_t blocks = DISK / 4096;
  uint64_t first = rnd (s) % blocks;
  uint64_t n = 1 + (rnd (s) % 8 ? 0 : rnd (s) % 4);
  if (first + n > blocks)
    n = blocks - first;
  *off = first * 4096;
  *len = n * 4096;
}

static unsigned char got[DISK];

static int
random_ops (struct wtp_index *ix, uint32_t seed, int ops, picker *pick)
{
  uint32_t s = seed;
  log_used = 0;
  for (int i = 0; i < ops; i++) {
    uint64_t off, len;
    struct wtp_index_spare sp;
    pick (&s, &off, &len);
    if (wtp_index_spare_get (ix, &sp, off, len) == -1)
      return 0;
    if (rnd (&s) % 5 == 0) {
      memset (model + off, 0, len);
      wtp_index_set_zero (ix, off, len, &sp);
    }
    else if (log_used + len > LOG_MAX)
      abort ();                 /* the test's own log is too small */
    else {
      unsigned char v = (unsigned char) rnd (&s);
      for (uint64_t b = 0; b < len; b++)
        logbuf[log_used + b] = model[off + b] = (unsigned char) (v + b);
      wtp_index_set_log (ix, off, len, log_used, &sp);
      log_used += len;
    }
    wtp_index_spare_put (&sp);
    pick (&s, &off, &len);
    if (wtp_index_read (ix, got, len, off, read_log, read_base, NULL) != 0
        || memcmp (got, model + off, len) != 0) {
      printf ("# seed %" PRIu32 " op %d: read %" PRIu64 "+%" PRIu64 " differs\n",
              seed, i, off, len);
      return 0;
    }
  }
  return wtp_index_read (ix, got, DISK, 0, read_log, read_base, NULL) == 0
    && memcmp (got, model, DISK) == 0;
}

int
main (void)
{
  tap_plan (9);
  for (int i = 0; i < DISK; i++)
    base[i] = model[i] = (unsigned char) (i * 7 + 3);

  struct wtp_index ix;
  wtp_index_init (&ix, DISK);
  tap_ok (random_ops (&ix, 1, 4000, pick), "4000 random writes and zeroes read "
          "back as the byte array holds them");
  tap_ok (wtp_index_extents (&ix) <= 2 * 4000 + 1,
          "extents (%" PRIu64 ") at most twice the updates", wtp_index_extents (&ix));

  struct wtp_index_spare sp;
  wtp_index_spare_get (&ix, &sp, 0, DISK);
  wtp_index_set_zero (&ix, 0, DISK, &sp);
  wtp_index_spare_put (&sp);
  memset (model, 0, DISK);
  tap_ok (ix.nshards == 16 && wtp_index_extents (&ix) == 16, "a zero over "
          "every extent leaves one a shard (%" PRIu64 " in %" PRIu64 ")",
          wtp_index_extents (&ix), ix.nshards);
  wtp_index_free (&ix);

  /* A 1 PiB disk: 65536 shards of 16 GiB. */
  struct wtp_index big;
  uint64_t pib = UINT64_C (1) << 50, shard = pib / WTP_INDEX_MAX_SHARDS;
  wtp_index_init (&big, pib);
  wtp_index_spare_get (&big, &sp, 512, pib - 512);
  wtp_index_set_zero (&big, 512, pib - 512, &sp);
  wtp_index_spare_put (&sp);
  tap_ok (wtp_index_extents (&big) == WTP_INDEX_MAX_SHARDS, "a zero of a 1 PiB "
          "disk is one extent per shard (%" PRIu64 ")",
          wtp_index_extents (&big));
  wtp_index_spare_get (&big, &sp, shard - 4096, 8192);
  wtp_index_set_log (&big, shard - 4096, 8192, 0, &sp);
  wtp_index_spare_put (&sp);
  tap_ok (wtp_index_extents (&big) == WTP_INDEX_MAX_SHARDS + 2, "a write over "
          "the first two shards' seam adds two extents (%" PRIu64 ")",
          wtp_index_extents (&big));
  unsigned char got[16384], want[16384];
  memset (want, 0, sizeof want);
  for (int i = 0; i < 8192; i++)
    want[4096 + i] = logbuf[i] = (unsigned char) (i / 7);
  tap_ok (wtp_index_read (&big, got, sizeof got, shard - 8192, read_log,
                          read_base, NULL) == 0
          && memcmp (got, want, sizeof want) == 0,
          "a read over the seam gives the write between zeroes");
  wtp_index_free (&big);

  memcpy (model, base, DISK);
  struct wtp_index again;
  wtp_index_init (&again, DISK);
  tap_ok (random_ops (&again, 77, 4000, pick), "another seed reads back right");
  wtp_index_free (&again);

  struct wtp_index at_base;
  wtp_index_init (&at_base, DISK);
  wtp_index_spare_get (&at_base, &sp, 8192, 4096);
  wtp_index_set_zero (&at_base, 8192, 4096, &sp);
  wtp_index_spare_put (&sp);
  wtp_index_spare_get (&at_base, &sp, 4096, 16384);
  wtp_index_set_log (&at_base, 4096, 16384, AT_BASE, &sp);
  wtp_index_spare_put (&sp);
  static unsigned char seen[32768];
  tap_ok (wtp_index_read (&at_base, seen, sizeof seen, 0, read_log, read_base,
                          NULL) == 0
          && memcmp (seen, base, sizeof seen) == 0,
          "an extent whose read_log says 1 reads the base, over an older zero");
  wtp_index_free (&at_base);

  memcpy (model, base, DISK);
  struct wtp_index blocks;
  wtp_index_init (&blocks, DISK);
  tap_ok (random_ops (&blocks, 5, 4000, pick_blocks), "4000 writes and zeroes "
          "of whole blocks (rewrites and first writes) read back right");
  wtp_index_free (&blocks);
  return tap_done ();
}
