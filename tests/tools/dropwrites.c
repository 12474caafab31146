/* dropwrites: a copy of a write log without the WRITE records that touch
 * one disk sector, as if those writes had never reached the disk (the
 * crash test's known damage). Records keep their order, times and
 * payloads; seqs are renumbered 1, 2, ... as the format requires.
 *
 *   dropwrites IN OUT SECTOR    prints "dropped N writes: seqs A,B,..." */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wtlog.h"

static char err[512];

static void
die (const char *what)
{
  fprintf (stderr, "dropwrites: %s\n", what);
  exit (2);
}

static int
touches (const struct wtlog_record *rec, uint64_t sector)
{
  uint64_t byte = sector * 512;
  return rec->type == WTLOG_WRITE && rec->length > 0 && rec->offset < byte + 512
    && byte < rec->offset + rec->length;
}

int
main (int argc, char **argv)
{
  if (argc != 4) {
    fprintf (stderr, "usage: dropwrites IN OUT SECTOR\n");
    return 2;
  }
  uint64_t sector = strtoull (argv[3], NULL, 10);
  struct wtlog_header h;
  struct wtlog_reader *r = wtlog_reader_open (argv[1], &h, err, sizeof err);
  if (!r)
    die (err);
  struct wtlog_writer *w = wtlog_writer_open (argv[2], &h, err, sizeof err);
  if (!w)
    die (err);
  struct wtlog_record rec;
  uint64_t dropped = 0;
  int rc;
  printf ("dropped seqs");
  while ((rc = wtlog_reader_next (r, &rec)) == 0) {
    if (touches (&rec, sector)) {
      printf ("%s%" PRIu64, dropped++ ? "," : " ", rec.seq);
      continue;
    }
    if (wtlog_writer_append (w, &rec, rec.hashes, rec.data) == -1) {
      perror (argv[2]);
      return 2;
    }
  }
  printf ("\ndropped %" PRIu64 " writes\n", dropped);
  if (rc == -1)
    die (wtlog_reader_status (r)->error);
  wtlog_reader_close (r);
  if (wtlog_writer_close (w) == -1) {
    perror (argv[2]);
    return 2;
  }
  return dropped ? 0 : 1;
}
