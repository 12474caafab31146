/* craftlog: small logs no client makes, for the tests of what the readers
 * and commands do with sizes taken from the input (huge ZERO/TRIM, big
 * epochs, dm-log-writes entries of several GiB).
 *
 *   craftlog wtlog OUT DISK_SIZE RECORD...
 *     write:OFF:LEN[:COUNT]  COUNT (default 1) WRITEs with DATA of LEN bytes
 *                            each, one after the other from OFF, each
 *                            sector starting with its own byte offset
 *     zero:OFF:LEN  trim:OFF:LEN  flush  fua (the next write is FUA)
 *   craftlog dmlog OUT SECTOR_SIZE ENTRY...
 *     write:SECTOR:NR   an entry with NR sectors of data, left a hole in
 *                       the file (reads as zeroes: a sparse file)
 *     fwrite:SECTOR:NR  the same with FLUSH (a preflush: REQ_PREFLUSH)
 *     discard:SECTOR:NR  flush  mark:TEXT  marklen:N (a MARK of N bytes)
 *
 * Numbers take K, M, G, T suffixes. The super block counts every entry. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "le.h"
#include "sector-hash.h"
#include "wtlog.h"

static uint64_t
craft_num (const char *s)
{
  char *end;
  errno = 0;
  uint64_t n = strtoull (s, &end, 0);
  int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : *end == 'T' ? 40 : 0;
  if (shift)
    n <<= shift, end++;
  if (errno || end == s || (*end && *end != ':')) {
    fprintf (stderr, "craftlog: bad number: %s\n", s);
    exit (2);
  }
  return n;
}

/* The n-th ':'-separated field of spec (0 is the kind). */
static const char *
craft_field (const char *spec, int n)
{
  while (n-- > 0) {
    spec = strchr (spec, ':');
    if (!spec)
      return NULL;
    spec++;
  }
  return spec;
}

static uint64_t
craft_arg (const char *spec, int n, uint64_t dflt)
{
  const char *f = craft_field (spec, n);
  return f ? craft_num (f) : dflt;
}

static int
craft_write (struct wtlog_writer *w, uint64_t off, uint64_t len, uint16_t flags)
{
  static unsigned char *buf;
  static uint64_t *hashes;
  static uint64_t cap;
  if (len > cap) {
    free (buf);
    free (hashes);
    buf = malloc (len);
    hashes = malloc ((len / WT_SECTOR_SIZE + 2) * 8);
    cap = len;
    if (!buf || !hashes)
      return -1;
  }
  memset (buf, 0x5a, len);
  for (uint64_t i = 0; i + 8 <= len; i += WT_SECTOR_SIZE)
    wt_put64 (buf + i, off + i);
  if (off % WT_SECTOR_SIZE || len % WT_SECTOR_SIZE) {
    fprintf (stderr, "craftlog: writes must be sector-aligned\n");
    exit (2);
  }
  wt_sector_hashes (buf, len / WT_SECTOR_SIZE, hashes);
  struct wtlog_record rec = {
    .type = WTLOG_WRITE, .flags = WTLOG_F_DATA | flags, .conn = 1,
    .offset = off, .length = len,
  };
  return wtlog_writer_append (w, &rec, hashes, buf);
}

static int
craft_wtlog (int argc, char **argv)
{
  struct wtlog_header h;
  char err[512];
  uint16_t fua = 0;
  wtlog_header_init (&h, craft_num (argv[3]), 0, true, "craftlog");
  struct wtlog_writer *w = wtlog_writer_open (argv[2], &h, err, sizeof err);
  if (!w) {
    fprintf (stderr, "craftlog: %s\n", err);
    return 1;
  }
  for (int i = 4; i < argc; i++) {
    const char *s = argv[i];
    struct wtlog_record rec = { .conn = 1 };
    int rc = 0;
    if (strncmp (s, "write:", 6) == 0) {
      uint64_t off = craft_arg (s, 1, 0), len = craft_arg (s, 2, 4096);
      uint64_t count = craft_arg (s, 3, 1);
      for (uint64_t k = 0; k < count && rc == 0; k++, fua = 0)
        rc = craft_write (w, off + k * len, len, fua);
      continue;
    }
    if (strcmp (s, "fua") == 0) {
      fua = WTLOG_F_FUA;
      continue;
    }
    if (strncmp (s, "zero:", 5) == 0)
      rec.type = WTLOG_ZERO;
    else if (strncmp (s, "trim:", 5) == 0)
      rec.type = WTLOG_TRIM;
    else if (strcmp (s, "flush") == 0)
      rec.type = WTLOG_FLUSH;
    else {
      fprintf (stderr, "craftlog: unknown record: %s\n", s);
      return 2;
    }
    if (rec.type != WTLOG_FLUSH) {
      rec.offset = craft_arg (s, 1, 0);
      rec.length = craft_arg (s, 2, 0);
    }
    rc = wtlog_writer_append (w, &rec, NULL, NULL);
    if (rc == -1) {
      fprintf (stderr, "craftlog: write: %s: %m\n", argv[2]);
      return 1;
    }
  }
  if (wtlog_writer_close (w) == -1) {
    fprintf (stderr, "craftlog: close: %s: %m\n", argv[2]);
    return 1;
  }
  return 0;
}

static int
craft_put (int fd, const void *buf, size_t len, uint64_t at)
{
  return wt_pwrite_full (fd, buf, len, at) == -1 ? -1 : 0;
}

static int
craft_dmlog (int argc, char **argv)
{
  uint64_t ss = craft_num (argv[3]), pos = ss, count = 0;
  unsigned char *sector = calloc (1, ss);
  int fd = open (argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !sector) {
    fprintf (stderr, "craftlog: open: %s: %m\n", argv[2]);
    return 1;
  }
  for (int i = 4; i < argc; i++, count++) {
    const char *s = argv[i];
    uint64_t flags = 0, nr = 0, start = 0, data = 0, text_len = 0;
    const char *text = NULL;
    memset (sector, 0, ss);
    if (strncmp (s, "write:", 6) == 0 || strncmp (s, "fwrite:", 7) == 0
        || strncmp (s, "discard:", 8) == 0) {
      start = craft_arg (s, 1, 0);
      nr = craft_arg (s, 2, 1);
      flags = s[0] == 'd' ? 4 : s[0] == 'f' ? 1 : 0;
      data = s[0] == 'd' ? 0 : nr * ss;
    }
    else if (strcmp (s, "flush") == 0)
      flags = 1;
    else if (strncmp (s, "mark:", 5) == 0) {
      flags = 8;
      text = s + 5;
      text_len = strlen (text);
    }
    else if (strncmp (s, "marklen:", 8) == 0) {
      flags = 8;
      text_len = craft_arg (s, 1, 0);
    }
    else {
      fprintf (stderr, "craftlog: unknown entry: %s\n", s);
      return 2;
    }
    wt_put64 (sector, start);
    wt_put64 (sector + 8, nr);
    wt_put64 (sector + 16, flags);
    wt_put64 (sector + 24, text_len);
    if (flags == 8) {
      if (text_len > ss - 32) {
        /* Too long for its sector: the entry says so, the text is cut. */
        memset (sector + 32, 'm', ss - 32);
      }
      else if (text)
        memcpy (sector + 32, text, text_len);
      else
        memset (sector + 32, 'm', text_len);
    }
    if (craft_put (fd, sector, ss, pos) == -1)
      goto fail;
    pos += ss + data;
  }
  memset (sector, 0, ss);
  wt_put64 (sector, 0x6a736677736872ull);
  wt_put64 (sector + 8, 1);
  wt_put64 (sector + 16, count);
  wt_put32 (sector + 24, (uint32_t) ss);
  if (craft_put (fd, sector, ss, 0) == -1 || ftruncate (fd, (off_t) pos) == -1
      || close (fd) == -1)
    goto fail;
  free (sector);
  return 0;

 fail:
  fprintf (stderr, "craftlog: write: %s: %m\n", argv[2]);
  return 1;
}

int
main (int argc, char **argv)
{
  if (argc < 4) {
    fprintf (stderr, "usage: craftlog wtlog OUT DISK_SIZE RECORD...\n"
             "       craftlog dmlog OUT SECTOR_SIZE ENTRY...\n");
    return 2;
  }
  if (strcmp (argv[1], "wtlog") == 0)
    return craft_wtlog (argc, argv);
  if (strcmp (argv[1], "dmlog") == 0)
    return craft_dmlog (argc, argv);
  fprintf (stderr, "craftlog: unknown kind: %s\n", argv[1]);
  return 2;
}
