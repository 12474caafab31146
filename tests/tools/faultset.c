/* faultset: the file sectors a run's injected faults must have damaged,
 * predicted from the ground truth (faults=FILE), the log and base.img alone,
 * without reading disk.img or running the checker:
 *
 *   faultset RUN_DIR FAULTS
 *   -> one line per damaged file sector: "PATH FILE_SECTOR DISK_SECTOR"
 *
 * A disk sector's final content is that of the last logged write that
 * stored it: a lied write stores nothing, a torn one only the sectors the
 * ground truth does not list, a vanished one is not in the log at all;
 * ZERO and TRIM leave zeroes; with no such write it keeps base.img's
 * content. A file sector is damaged when that content differs from the
 * manifest's expected hash. Only sectors some fault touched are followed,
 * so memory stays small. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "channel.h"
#include "fileio.h"
#include "manifest.h"
#include "sector-hash.h"
#include "wtlog.h"

static char err[512];

static void
die (const char *what)
{
  fprintf (stderr, "faultset: %s\n", what);
  exit (2);
}

/* The final manifest from the channel's MANIFEST messages. */
static void
read_manifest (const char *path, struct wtmf_manifest *m)
{
  struct wtch_reader *r = wtch_reader_open (path, err, sizeof err);
  struct wtch_message msg;
  GByteArray *bytes = g_byte_array_new ();
  int rc;
  if (!r)
    die (err);
  while ((rc = wtch_reader_next (r, &msg, err, sizeof err)) == 0)
    if (msg.type == WTCH_MANIFEST)
      g_byte_array_append (bytes, msg.payload, msg.length);
  if (rc == -1)
    die (err);
  wtch_reader_close (r);
  size_t at = 0, used;
  while (at < bytes->len) {
    if (wtmf_parse (bytes->data + at, bytes->len - at, m, &used, err, sizeof err) == -1)
      die (err);
    if (m->checkpoint == 0) {
      g_byte_array_unref (bytes);
      return;
    }
    wtmf_free (m);
    at += used;
  }
  die ("no final manifest");
}

/* Sectors not stored by lied or torn writes: key "seq:sector". Disk sectors
 * any fault touched: the set to follow. */
static GHashTable *not_stored;          /* "seq:sector" -> 1 */
static GHashTable *followed;            /* sector -> current hash (boxed) */

static void
add_ranges (uint64_t seq, const char *ranges)
{
  gchar **parts = g_strsplit (ranges, ",", -1);
  for (gchar **p = parts; *p && **p; p++) {
    uint64_t a, b;
    if (sscanf (*p, "%" SCNu64 "-%" SCNu64, &a, &b) != 2 || b < a)
      die ("bad sector range in the ground truth");
    for (uint64_t s = a; s <= b; s++) {
      if (seq)
        g_hash_table_add (not_stored, g_strdup_printf ("%" PRIu64 ":%" PRIu64, seq, s));
      uint64_t *key = g_new (uint64_t, 1);
      *key = s;
      g_hash_table_replace (followed, key, NULL);
    }
  }
  g_strfreev (parts);
}

static void
read_faults (const char *path)
{
  FILE *fp = fopen (path, "r");
  char line[65536];
  if (!fp)
    die ("cannot open the ground truth");
  while (fgets (line, sizeof line, fp)) {
    uint64_t seq = 0;
    char *ranges = strstr (line, "sectors_not_stored=");
    if (!ranges)
      die ("ground-truth line without sectors_not_stored=");
    ranges += strlen ("sectors_not_stored=");
    ranges[strcspn (ranges, " \n")] = '\0';
    if (strncmp (line, "seq=-", 5) != 0 && sscanf (line, "seq=%" SCNu64, &seq) != 1)
      die ("ground-truth line without seq=");
    if (strstr (line, "kind=eio"))
      continue;                 /* failed, the guest knows: not silent damage */
    add_ranges (seq, ranges);
  }
  fclose (fp);
}

static uint64_t
base_hash (int fd, uint64_t sector)
{
  unsigned char buf[WT_SECTOR_SIZE];
  if (wt_pread_full (fd, buf, sizeof buf, sector * WT_SECTOR_SIZE) != (ssize_t) sizeof buf)
    die ("cannot read base.img");
  return wt_sector_hash (buf);
}

static void
set_hash (uint64_t sector, uint64_t hash)
{
  uint64_t *key = g_new (uint64_t, 1), *val = g_new (uint64_t, 1);
  *key = sector;
  *val = hash;
  g_hash_table_replace (followed, key, val);
}

static void
replay_hashes (const char *logp, int base_fd)
{
  GHashTableIter it;
  gpointer k, v;
  GList *keys = g_hash_table_get_keys (followed);
  for (GList *l = keys; l; l = l->next) {
    uint64_t s = *(uint64_t *) l->data;
    set_hash (s, base_hash (base_fd, s));
  }
  g_list_free (keys);
  (void) it; (void) k; (void) v;

  unsigned char zero[WT_SECTOR_SIZE] = { 0 };
  uint64_t zero_hash = wt_sector_hash (zero);
  struct wtlog_header h;
  struct wtlog_record rec;
  struct wtlog_reader *r = wtlog_reader_open (logp, &h, err, sizeof err);
  int rc;
  if (!r)
    die (err);
  while ((rc = wtlog_reader_next (r, &rec)) == 0) {
    if (rec.flags & WTLOG_F_FAILED)
      continue;
    bool write = rec.type == WTLOG_WRITE;
    if (!write && rec.type != WTLOG_ZERO && rec.type != WTLOG_TRIM)
      continue;
    uint64_t first = rec.offset / WT_SECTOR_SIZE;
    uint64_t n = write ? rec.nhashes : rec.length / WT_SECTOR_SIZE;
    if (!write)
      first = (rec.offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t s = first + i;
      if (!g_hash_table_contains (followed, &s))
        continue;
      char key[64];
      snprintf (key, sizeof key, "%" PRIu64 ":%" PRIu64, rec.seq, s);
      if (g_hash_table_contains (not_stored, key))
        continue;
      set_hash (s, write ? rec.hashes[i] : zero_hash);
    }
  }
  if (rc == -1)
    die (wtlog_reader_status (r)->error);
  wtlog_reader_close (r);
}

static void
print_damage (const struct wtmf_manifest *m)
{
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    for (uint32_t e = 0; e < f->nextents; e++) {
      const struct wtmf_extent *x = &f->extents[e];
      if (x->flags & (WTMF_EXT_UNMAPPABLE | WTMF_EXT_UNWRITTEN))
        continue;
      for (uint64_t off = 0; off < x->length; off += WT_SECTOR_SIZE) {
        uint64_t fs = (x->logical + off) / WT_SECTOR_SIZE;
        uint64_t ds = (x->physical + off) / WT_SECTOR_SIZE;
        if (fs >= f->nsectors)
          break;
        uint64_t *hash = g_hash_table_lookup (followed, &ds);
        if (hash && *hash != f->hashes[fs])
          printf ("%s %" PRIu64 " %" PRIu64 "\n", f->path, fs, ds);
      }
    }
  }
}

int
main (int argc, char **argv)
{
  if (argc != 3) {
    fprintf (stderr, "usage: faultset RUN_DIR FAULTS\n");
    return 2;
  }
  g_autofree char *chan = g_build_filename (argv[1], "channel.bin", NULL);
  g_autofree char *logp = g_build_filename (argv[1], "writes.wtlog", NULL);
  g_autofree char *base = g_build_filename (argv[1], "base.img", NULL);
  struct wtmf_manifest m;
  not_stored = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  followed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  read_manifest (chan, &m);
  read_faults (argv[2]);
  int base_fd = open (base, O_RDONLY);
  if (base_fd < 0)
    die ("cannot open base.img");
  replay_hashes (logp, base_fd);
  print_damage (&m);
  close (base_fd);
  wtmf_free (&m);
  return 0;
}
