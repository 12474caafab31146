/* ckptfiles: the guest's checkpoint manifests, read independently of
 * wtrack, for the replay and crash tests.
 *
 *   ckptfiles list RUN_DIR
 *       "checkpoint K files=N" for every checkpoint manifest in channel.bin
 *   ckptfiles verify RUN_DIR K IMAGE
 *       reads every file of checkpoint K's manifest through its extents from
 *       IMAGE and compares each sector's hash with the manifest's:
 *       "file PATH sectors=N mismatched=M"; exit 0 when none mismatched, 1
 *       otherwise
 *   ckptfiles stable RUN_DIR K
 *       the first sector of the first file that no operation rewrote from
 *       checkpoint K to the end of the workload (the same last-writer op in
 *       the final manifest): "stable PATH file_sector=S disk_sector=D"
 *
 * Exit status 2 on bad input. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "fileio.h"
#include "manifest.h"
#include "sector-hash.h"

static char err[512];

static void
die (const char *what)
{
  fprintf (stderr, "ckptfiles: %s\n", what);
  exit (2);
}

/* Every manifest of the channel, in stream order. */
struct manifests {
  struct wtmf_manifest m[256];
  int n;
};

static void
read_manifests (const char *run_dir, struct manifests *out)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/channel.bin", run_dir);
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  if (!r)
    die (err);
  unsigned char *stream = NULL;
  size_t len = 0;
  struct wtch_message msg;
  int rc;
  while ((rc = wtch_reader_next (r, &msg, err, sizeof err)) == 0)
    if (msg.type == WTCH_MANIFEST) {
      stream = realloc (stream, len + msg.length);
      if (!stream)
        die ("out of memory");
      memcpy (stream + len, msg.payload, msg.length);
      len += msg.length;
    }
  if (rc == -1)
    die (err);
  wtch_reader_close (r);
  out->n = 0;
  for (size_t at = 0, used; at < len; at += used) {
    if (out->n == 256)
      die ("more than 256 manifests");
    if (wtmf_parse (stream + at, len - at, &out->m[out->n], &used, err, sizeof err) == -1)
      die (err);
    out->n++;
  }
  free (stream);
}

static const struct wtmf_manifest *
find_checkpoint (const struct manifests *ms, uint32_t k)
{
  for (int i = 0; i < ms->n; i++)
    if (ms->m[i].checkpoint == k)
      return &ms->m[i];
  fprintf (stderr, "ckptfiles: no manifest of checkpoint %" PRIu32 "\n", k);
  exit (2);
}

/* The disk byte of file sector s, or -1 when no written extent holds it. */
static int64_t
disk_byte (const struct wtmf_file *f, uint64_t s)
{
  uint64_t byte = s * WT_SECTOR_SIZE;
  for (uint32_t i = 0; i < f->nextents; i++) {
    const struct wtmf_extent *e = &f->extents[i];
    if (byte >= e->logical && byte < e->logical + e->length
        && !(e->flags & (WTMF_EXT_UNWRITTEN | WTMF_EXT_UNMAPPABLE)))
      return (int64_t) (e->physical + (byte - e->logical));
  }
  return -1;
}

static int
cmd_verify (const struct wtmf_manifest *m, const char *image)
{
  int fd = open (image, O_RDONLY);
  if (fd < 0) {
    perror (image);
    exit (2);
  }
  int bad_files = 0;
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    uint64_t mismatched = 0;
    for (uint64_t s = 0; s < f->nsectors; s++) {
      unsigned char buf[WT_SECTOR_SIZE];
      int64_t at = disk_byte (f, s);
      if (at < 0 || wt_pread_full (fd, buf, sizeof buf, (uint64_t) at) != (ssize_t) sizeof buf
          || wt_sector_hash (buf) != f->hashes[s])
        mismatched++;
    }
    printf ("file %s sectors=%" PRIu64 " mismatched=%" PRIu64 "\n", f->path,
            f->nsectors, mismatched);
    bad_files += mismatched != 0;
  }
  close (fd);
  return bad_files ? 1 : 0;
}

static int
cmd_stable (const struct manifests *ms, const struct wtmf_manifest *m)
{
  const struct wtmf_manifest *final = find_checkpoint (ms, 0);
  const struct wtmf_file *f = &m->files[0];
  const struct wtmf_file *g = wtmf_find_file (final, f->id);
  for (uint64_t s = 0; g && s < f->nsectors && s < g->nsectors; s++) {
    int64_t at = disk_byte (f, s);
    if (at >= 0 && at % WT_SECTOR_SIZE == 0 && f->ops[s] == g->ops[s]) {
      printf ("stable %s file_sector=%" PRIu64 " disk_sector=%" PRIu64 "\n", f->path,
              s, (uint64_t) at / WT_SECTOR_SIZE);
      return 0;
    }
  }
  die ("no sector of the first file stays unwritten to the end");
  return 2;
}

int
main (int argc, char **argv)
{
  static struct manifests ms;
  if (argc == 3 && strcmp (argv[1], "list") == 0) {
    read_manifests (argv[2], &ms);
    for (int i = 0; i < ms.n; i++)
      if (ms.m[i].checkpoint)
        printf ("checkpoint %" PRIu32 " files=%" PRIu32 "\n", ms.m[i].checkpoint,
                ms.m[i].nfiles);
    return 0;
  }
  if (argc == 5 && strcmp (argv[1], "verify") == 0) {
    read_manifests (argv[2], &ms);
    return cmd_verify (find_checkpoint (&ms, (uint32_t) strtoul (argv[3], NULL, 10)),
                       argv[4]);
  }
  if (argc == 4 && strcmp (argv[1], "stable") == 0) {
    read_manifests (argv[2], &ms);
    return cmd_stable (&ms, find_checkpoint (&ms, (uint32_t) strtoul (argv[3], NULL, 10)));
  }
  fprintf (stderr, "usage: ckptfiles list RUN_DIR | verify RUN_DIR K IMAGE | "
           "stable RUN_DIR K\n");
  return 2;
}
