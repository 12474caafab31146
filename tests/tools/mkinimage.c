/* mkinimage: a data=on run whose large writes kept one copy (IN_IMAGE
 * records, SAVED records), as the plugin leaves it, for the tests of
 * replay, crash and export (tests/test-replay-in-image.sh).
 *
 *   mkinimage DIR
 *
 * writes DIR/base.img (the disk before the run), DIR/writes.wtlog,
 * DIR/disk.img (the run's final image), and DIR/expect-SEQ.img, the disk
 * after record SEQ, for each SEQ listed in DIR/points (one a line: every
 * record that changes the disk, every FLUSH, and 0, the base).  Before a
 * change overwrites bytes an IN_IMAGE record still owns, the SAVED record
 * of those sectors comes first, as the plugin writes it. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sector-hash.h"
#include "wtlog.h"

#define DISK (1u << 20)
#define SECTORS (DISK / WT_SECTOR_SIZE)

static const char *dir;
static struct wtlog_writer *w;
static unsigned char disk[DISK];
static bool owned[SECTORS];     /* its bytes are an IN_IMAGE record's */
static FILE *points;
static uint64_t t_now = 1000;

static void
die (const char *what)
{
  fprintf (stderr, "mkinimage: %s\n", what);
  exit (2);
}

static void
write_image (const char *name, const unsigned char *bytes)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write (fd, bytes, DISK) != DISK || close (fd) != 0)
    die (path);
}

static void
point (uint64_t seq)
{
  char name[64];
  snprintf (name, sizeof name, "expect-%" PRIu64 ".img", seq);
  write_image (name, disk);
  fprintf (points, "%" PRIu64 "\n", seq);
}

static uint64_t
append (uint16_t type, uint16_t flags, uint64_t offset, uint64_t length,
        const void *data)
{
  uint64_t n = wtlog_has_hashes (type, flags) ? wtlog_sectors_touched (offset, length) : 0;
  uint64_t *hashes = calloc (n + 1, 8);
  for (uint64_t i = 0; i < n; i++)
    hashes[i] = wt_sector_hash (disk + (offset / WT_SECTOR_SIZE + i) * WT_SECTOR_SIZE);
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = type == WTLOG_CLOSE && !offset && !length ? 0 : 1,
    .offset = offset, .length = length, .t_start = t_now, .t_end = t_now + 500,
  };
  t_now += 1000;
  if (wtlog_writer_append (w, &rec, hashes, data) == -1)
    die ("append");
  free (hashes);
  return rec.seq;
}

static void
save (uint64_t first, uint64_t end)
{
  append (WTLOG_SAVED, WTLOG_F_DATA, first * WT_SECTOR_SIZE,
          (end - first) * WT_SECTOR_SIZE, disk + first * WT_SECTOR_SIZE);
}

/* The SAVED records a change of [offset, offset+length) needs first: one
 * for each run of owned sectors it touches. */
static void
save_owned (uint64_t offset, uint64_t length)
{
  uint64_t s = offset / WT_SECTOR_SIZE, end = (offset + length - 1) / WT_SECTOR_SIZE + 1;
  while (s < end) {
    while (s < end && !owned[s])
      s++;
    uint64_t e = s;
    while (e < end && owned[e])
      e++;
    if (e > s)
      save (s, e);
    s = e;
  }
}

static void
disown (uint64_t offset, uint64_t length, bool to)
{
  for (uint64_t s = offset / WT_SECTOR_SIZE; s <= (offset + length - 1) / WT_SECTOR_SIZE; s++)
    owned[s] = to;
}

static void
fill (uint64_t offset, uint64_t length, int seed)
{
  for (uint64_t i = 0; i < length; i++)
    disk[offset + i] = (unsigned char) (seed * 37 + (int) (i % 251) + (int) (i >> 9));
}

static void
in_image (uint64_t offset, uint64_t length, int seed, uint16_t more)
{
  save_owned (offset, length);
  fill (offset, length, seed);
  disown (offset, length, true);
  point (append (WTLOG_WRITE, WTLOG_F_IN_IMAGE | WTLOG_F_APPLIED | more, offset,
                 length, NULL));
}

static void
write_data (uint64_t offset, uint64_t length, int seed, uint16_t more)
{
  save_owned (offset, length);
  fill (offset, length, seed);
  disown (offset, length, false);
  point (append (WTLOG_WRITE, WTLOG_F_DATA | more, offset, length, disk + offset));
}

static void
zero (uint16_t type, uint64_t offset, uint64_t length)
{
  save_owned (offset, length);
  memset (disk + offset, 0, length);
  disown (offset, length, false);
  point (append (type, 0, offset, length, NULL));
}

static void
flush (void)
{
  point (append (WTLOG_FLUSH, 0, 0, 0, NULL));
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    die ("usage: mkinimage DIR");
  dir = argv[1];
  char path[4096], err[256];
  snprintf (path, sizeof path, "%s/points", dir);
  if (!(points = fopen (path, "w")))
    die (path);
  fill (0, DISK, 99);
  write_image ("base.img", disk);
  point (0);
  struct wtlog_header h;
  wtlog_header_init (&h, DISK, 0, true, "mkinimage");
  snprintf (path, sizeof path, "%s/writes.wtlog", dir);
  if (!(w = wtlog_writer_open (path, &h, err, sizeof err)))
    die (err);
  append (WTLOG_OPEN, 0, WTLOG_EXPORT_DISK, DISK, NULL);
  in_image (64 << 10, 64 << 10, 1, 0);              /* A */
  write_data (0, 100, 2, 0);
  flush ();
  write_data ((70 << 10) + 100, 300, 3, 0);          /* into A: saved first */
  zero (WTLOG_ZERO, 96 << 10, 16 << 10);             /* A's zeroed part */
  flush ();
  in_image (120 << 10, 32 << 10, 4, WTLOG_F_FUA);    /* B, over A's end */
  save (400, 420);                                   /* a SAVED nothing needs */
  in_image (512 << 10, 128 << 10, 5, 0);             /* C */
  flush ();
  in_image (560 << 10, 32 << 10, 6, 0);              /* D, inside C */
  zero (WTLOG_TRIM, 608 << 10, 32 << 10);            /* C's tail */
  write_data (1000, 5000, 7, WTLOG_F_FUA);           /* unaligned */
  flush ();
  in_image (800 << 10, 64 << 10, 8, 0);              /* E: only the image */
  write_data (520 << 10, 4096, 9, 0);                /* over C again */
  append (WTLOG_CLOSE, 0, WTLOG_EXPORT_DISK, DISK, NULL);
  append (WTLOG_CLOSE, 0, 0, 0, NULL);
  if (wtlog_writer_close (w) == -1 || fclose (points) != 0)
    die ("close");
  write_image ("disk.img", disk);
  return 0;
}
