/* runfacts: facts about a run directory that the end-to-end tests assert,
 * computed independently of `wtrack check`:
 *
 *   result status=0 readback=match
 *   file /data/f size=N sectors=N extents=N covered=yes inside=yes digest=HEX
 *   marks start_seq=N manifest_seq=N file_writes_before_start=N
 *         file_writes_after_manifest=N
 *
 * covered: the extents cover every byte of the file; inside: every extent
 * lies inside the disk; digest: XXH3 of the expected hash array (equal
 * manifests, equal digests). file_writes_*: logged WRITEs to the files'
 * disk sectors before the "start" MARK and after the final manifest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"
#include "manifest.h"
#include "sector-hash.h"
#include "wtlog.h"

static char err[512];

static void
die (const char *what)
{
  fprintf (stderr, "runfacts: %s\n", what);
  exit (2);
}

struct facts {
  unsigned char *manifest;      /* concatenated MANIFEST payloads */
  size_t manifest_len;
  uint64_t start_offset;        /* channel offset of MARK "start" */
  uint64_t final_manifest_offset; /* channel offset of its first message */
  int have_start;
};

static void
read_channel (const char *path, struct facts *f)
{
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  struct wtch_message m;
  int rc;
  size_t manifest_start = 0;
  if (!r)
    die (err);
  while ((rc = wtch_reader_next (r, &m, err, sizeof err)) == 0) {
    if (m.type == WTCH_MARK && m.length == 5 && memcmp (m.payload, "start", 5) == 0
        && !f->have_start) {
      f->start_offset = m.offset;
      f->have_start = 1;
    }
    if (m.type == WTCH_MANIFEST) {
      if (f->manifest_len == manifest_start)
        f->final_manifest_offset = m.offset;    /* first chunk of a manifest */
      f->manifest = realloc (f->manifest, f->manifest_len + m.length);
      memcpy (f->manifest + f->manifest_len, m.payload, m.length);
      f->manifest_len += m.length;
    }
    if (m.type == WTCH_RESULT) {
      char status[64] = "?", readback[64] = "?";
      wtch_kv_get (m.payload, m.length, "status", status, sizeof status);
      wtch_kv_get (m.payload, m.length, "readback", readback, sizeof readback);
      printf ("result status=%s readback=%s\n", status, readback);
    }
  }
  if (rc == -1)
    die (err);
  wtch_reader_close (r);
}

/* The final manifest (checkpoint 0); earlier checkpoint manifests skipped. */
static void
parse_final (struct facts *f, struct wtmf_manifest *m)
{
  size_t at = 0, used;
  while (at < f->manifest_len) {
    if (wtmf_parse (f->manifest + at, f->manifest_len - at, m, &used, err, sizeof err) == -1)
      die (err);
    if (m->checkpoint == 0)
      return;
    wtmf_free (m);
    at += used;
  }
  die ("no final manifest in the channel");
}

static int
extents_cover (const struct wtmf_file *file)
{
  uint64_t covered = 0;
  /* Extents come sorted by logical offset from FIEMAP. */
  for (uint32_t i = 0; i < file->nextents; i++) {
    const struct wtmf_extent *e = &file->extents[i];
    if (e->logical > covered)
      return 0;
    if (e->logical + e->length > covered)
      covered = e->logical + e->length;
  }
  return covered >= file->size;
}

static int
extents_inside (const struct wtmf_file *file, uint64_t disk_size)
{
  for (uint32_t i = 0; i < file->nextents; i++) {
    const struct wtmf_extent *e = &file->extents[i];
    if (!(e->flags & WTMF_EXT_UNMAPPABLE) && e->physical + e->length > disk_size)
      return 0;
  }
  return 1;
}

static int
touches_files (const struct wtmf_manifest *m, uint64_t off, uint64_t len)
{
  for (uint32_t i = 0; i < m->nfiles; i++)
    for (uint32_t j = 0; j < m->files[i].nextents; j++) {
      const struct wtmf_extent *e = &m->files[i].extents[j];
      if (!(e->flags & WTMF_EXT_UNMAPPABLE)
          && off < e->physical + e->length && e->physical < off + len)
        return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc != 2) {
    fprintf (stderr, "usage: runfacts RUN_DIR\n");
    return 2;
  }
  char chan[4096], logp[4096];
  snprintf (chan, sizeof chan, "%s/channel.bin", argv[1]);
  snprintf (logp, sizeof logp, "%s/writes.wtlog", argv[1]);
  struct facts f = { 0 };
  struct wtmf_manifest m;
  read_channel (chan, &f);
  parse_final (&f, &m);

  struct wtlog_header h;
  struct wtlog_reader *r = wtlog_reader_open (logp, &h, err, sizeof err);
  if (!r)
    die (err);
  for (uint32_t i = 0; i < m.nfiles; i++) {
    const struct wtmf_file *file = &m.files[i];
    printf ("file %s size=%" PRIu64 " sectors=%" PRIu64 " extents=%" PRIu32
            " covered=%s inside=%s digest=%016" PRIx64 "\n", file->path,
            file->size, file->nsectors, file->nextents,
            extents_cover (file) ? "yes" : "no",
            extents_inside (file, h.disk_size) ? "yes" : "no",
            (uint64_t) XXH3_64bits (file->hashes, 8 * file->nsectors));
  }

  struct wtlog_record rec;
  uint64_t start_seq = 0, manifest_seq = 0, before = 0, after = 0;
  int rc;
  while ((rc = wtlog_reader_next (r, &rec)) == 0) {
    if (rec.type == WTLOG_CHANNEL) {
      if (f.have_start && !start_seq && rec.offset <= f.start_offset
          && f.start_offset < rec.offset + rec.length)
        start_seq = rec.seq;
      if (!manifest_seq && rec.offset <= f.final_manifest_offset
          && f.final_manifest_offset < rec.offset + rec.length)
        manifest_seq = rec.seq;
    }
    if (rec.type == WTLOG_WRITE && !(rec.flags & WTLOG_F_FAILED)
        && touches_files (&m, rec.offset, rec.length)) {
      if (!start_seq)
        before++;
      if (manifest_seq)
        after++;
    }
  }
  if (rc == -1)
    die (wtlog_reader_status (r)->error);
  printf ("marks start_seq=%" PRIu64 " manifest_seq=%" PRIu64
          " file_writes_before_start=%" PRIu64 " file_writes_after_manifest=%"
          PRIu64 "\n", start_seq, manifest_seq, before, after);
  wtlog_reader_close (r);
  wtmf_free (&m);
  free (f.manifest);
  return 0;
}
