/* gen-wtlog: a synthetic write log, made with the common writer, for the
 * replay benchmark and the replay tests that need a log no client can make
 * (a WRITE without data in a data log).
 *
 *   gen-wtlog OUT --disk-size BYTES --bytes BYTES [--write-size BYTES]
 *             [--seed N] [--no-data-at SEQ] [--final IMAGE]
 *
 * Sizes take K, M, G suffixes. Writes of --write-size bytes (default 1 MiB) at random 4 KiB-aligned
 * offsets until --bytes of data are logged, with a ZERO, a TRIM and a FLUSH
 * every 64 writes and FUA on every 16th. With --final, also writes the disk
 * the log leads to from a zeroed base, computed here independently of the
 * replay code (a model in memory, so keep --disk-size small then). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sector-hash.h"
#include "wtlog.h"

struct gen_opts {
  const char *out;
  const char *final;
  uint64_t disk_size;
  uint64_t bytes;
  uint64_t write_size;
  uint64_t seed;
  uint64_t no_data_at;
};

static uint64_t
gen_next (uint64_t *s)
{
  /* splitmix64: fast, and every seed gives a different stream */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static int
gen_usage (void)
{
  fprintf (stderr, "usage: gen-wtlog OUT --disk-size BYTES --bytes BYTES "
           "[--write-size BYTES] [--seed N] [--no-data-at SEQ] [--final IMAGE]\n");
  return 2;
}

static int
gen_parse (int argc, char **argv, struct gen_opts *o)
{
  o->write_size = 1 << 20;
  o->seed = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') {
      o->out = a;
      continue;
    }
    if (i + 1 >= argc)
      return -1;
    const char *v = argv[++i];
    if (strcmp (a, "--final") == 0) {
      o->final = v;
      continue;
    }
    char *end;
    errno = 0;
    uint64_t n = strtoull (v, &end, 0);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift) {
      n <<= shift;
      end++;
    }
    if (errno || *end) {
      fprintf (stderr, "gen-wtlog: bad number for %s: %s\n", a, v);
      return -1;
    }
    if (strcmp (a, "--disk-size") == 0) o->disk_size = n;
    else if (strcmp (a, "--bytes") == 0) o->bytes = n;
    else if (strcmp (a, "--write-size") == 0) o->write_size = n;
    else if (strcmp (a, "--seed") == 0) o->seed = n;
    else if (strcmp (a, "--no-data-at") == 0) o->no_data_at = n;
    else return -1;
  }
  if (!o->out || o->disk_size < 2 * o->write_size || o->write_size == 0
      || o->write_size % 4096 || o->disk_size % 4096)
    return -1;
  return 0;
}

struct gen_state {
  struct gen_opts *o;
  struct wtlog_writer *w;
  unsigned char *buf;
  uint64_t *hashes;
  unsigned char *model;         /* the disk, with --final */
  uint64_t rng;
  uint64_t t;
};

static int
gen_append (struct gen_state *g, uint16_t type, uint16_t flags, uint64_t offset,
            uint64_t length)
{
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = 1, .t_start = g->t, .t_end = g->t + 1000,
    .offset = offset, .length = length,
  };
  g->t += 2000;
  if (type == WTLOG_WRITE) {
    wt_sector_hashes (g->buf, length / WT_SECTOR_SIZE, g->hashes);
    if (g->model)
      memcpy (g->model + offset, g->buf, length);
  }
  else if (g->model && (type == WTLOG_ZERO || type == WTLOG_TRIM))
    memset (g->model + offset, 0, length);
  return wtlog_writer_append (g->w, &rec, g->hashes, g->buf);
}

static uint64_t
gen_offset (struct gen_state *g, uint64_t length)
{
  return gen_next (&g->rng) % ((g->o->disk_size - length) / 4096 + 1) * 4096;
}

static void
gen_fill (struct gen_state *g, uint64_t length)
{
  uint64_t *p = (uint64_t *) g->buf;
  for (uint64_t i = 0; i < length / 8; i++)
    p[i] = gen_next (&g->rng);
}

static int
gen_records (struct gen_state *g)
{
  uint64_t done = 0, n = 0, ws = g->o->write_size;
  while (done < g->o->bytes) {
    n++;
    gen_fill (g, ws);
    uint16_t flags = WTLOG_F_DATA | (n % 16 == 0 ? WTLOG_F_FUA : 0);
    /* The writer numbers records from 1: seq is records so far + 1. */
    if (g->o->no_data_at && g->o->no_data_at == n + 3 * ((n - 1) / 64))
      flags &= (uint16_t) ~WTLOG_F_DATA;
    if (gen_append (g, WTLOG_WRITE, flags, gen_offset (g, ws), ws) == -1)
      return -1;
    done += ws;
    if (n % 64 == 0
        && (gen_append (g, WTLOG_ZERO, 0, gen_offset (g, ws / 2), ws / 2) == -1
            || gen_append (g, WTLOG_TRIM, 0, gen_offset (g, ws / 4), ws / 4) == -1
            || gen_append (g, WTLOG_FLUSH, 0, 0, 0) == -1))
      return -1;
  }
  return 0;
}

static int
gen_write_final (const char *path, const unsigned char *model, uint64_t size)
{
  FILE *f = fopen (path, "w");
  if (!f || fwrite (model, 1, size, f) != size || fclose (f) != 0) {
    fprintf (stderr, "gen-wtlog: write: %s: %m\n", path);
    return -1;
  }
  return 0;
}

int
main (int argc, char **argv)
{
  struct gen_opts o = { 0 };
  struct wtlog_header h;
  char err[512];
  if (gen_parse (argc, argv, &o) == -1)
    return gen_usage ();
  wtlog_header_init (&h, o.disk_size, 0, true, "gen-wtlog");
  struct gen_state g = {
    .o = &o, .rng = o.seed,
    .buf = malloc (o.write_size),
    .hashes = malloc (o.write_size / WT_SECTOR_SIZE * 8),
    .model = o.final ? calloc (1, o.disk_size) : NULL,
  };
  if (!g.buf || !g.hashes || (o.final && !g.model)) {
    fprintf (stderr, "gen-wtlog: malloc: %m\n");
    return 1;
  }
  g.w = wtlog_writer_open (o.out, &h, err, sizeof err);
  if (!g.w) {
    fprintf (stderr, "gen-wtlog: %s\n", err);
    return 1;
  }
  if (gen_records (&g) == -1 || wtlog_writer_close (g.w) == -1) {
    fprintf (stderr, "gen-wtlog: write: %s: %m\n", o.out);
    return 1;
  }
  if (o.final && gen_write_final (o.final, g.model, o.disk_size) == -1)
    return 1;
  free (g.buf);
  free (g.hashes);
  free (g.model);
  return 0;
}
