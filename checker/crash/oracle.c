/* The checkpoint oracle of wtrack crash (crash/oracle.h). */
#include "crash/oracle.h"

#include <inttypes.h>
#include <string.h>

#include "channel.h"
#include "lib/btrfs-chunks.h"
#include "lib/channel-read.h"
#include "lib/util.h"
#include "manifest.h"
#include "search.h"
#include "sector-hash.h"

/* Sectors read with one pread while checking. */
#define WTC_ORACLE_READ_SECTORS 2048u

/* Sectors to compare: contiguous in the file and on the disk. */
struct wtc_probe {
  const struct wtmf_file *file;
  uint64_t file_sector;
  uint64_t disk_sector;
  uint64_t count;
};

struct wtc_ckpt {
  uint32_t number;
  uint64_t mark_seq;
  GArray *probes;               /* struct wtc_probe, by disk sector */
  uint64_t sectors;             /* every sector of its files */
  uint64_t stable;              /* of them, to compare */
};

struct wtc_oracle {
  GPtrArray *manifests;         /* owns the manifests the probes point into */
  GArray *ckpts;                /* struct wtc_ckpt, by MARK seq */
  GPtrArray *describe;
  GPtrArray *warnings;
};

static void
wtc_ckpt_clear (gpointer p)
{
  struct wtc_ckpt *k = p;
  if (k->probes)
    g_array_unref (k->probes);
}

void
wtc_oracle_free (struct wtc_oracle *o)
{
  if (!o)
    return;
  if (o->ckpts)
    g_array_unref (o->ckpts);
  if (o->manifests)
    g_ptr_array_unref (o->manifests);
  g_ptr_array_unref (o->describe);
  g_ptr_array_unref (o->warnings);
  g_free (o);
}

const GPtrArray *
wtc_oracle_describe (const struct wtc_oracle *o)
{
  return o->describe;
}

const GPtrArray *
wtc_oracle_warnings (const struct wtc_oracle *o)
{
  return o->warnings;
}

guint
wtc_oracle_checkpoints (const struct wtc_oracle *o)
{
  return o->ckpts->len;
}

/* Building. */

static void
wtc_probe_add (GArray *probes, const struct wtmf_file *f, uint64_t file_sector,
               uint64_t disk_sector)
{
  if (probes->len) {
    struct wtc_probe *last = &g_array_index (probes, struct wtc_probe, probes->len - 1);
    if (last->file == f && last->file_sector + last->count == file_sector
        && last->disk_sector + last->count == disk_sector) {
      last->count++;
      return;
    }
  }
  struct wtc_probe p = { f, file_sector, disk_sector, 1 };
  g_array_append_val (probes, p);
}

/* Whether no workload operation rewrote sector s between the checkpoint
 * (f) and the next manifest (later): the op that last wrote it is the
 * same, and so is its content. */
static bool
wtc_sector_stable (const struct wtmf_file *f, const struct wtmf_file *later,
                   uint64_t s)
{
  return later && s < later->nsectors && later->ops[s] == f->ops[s]
    && later->hashes[s] == f->hashes[s];
}

/* Sectors in unwritten, unmappable or misaligned extents, and past the
 * disk, are not compared: the file does not read them from the disk. */
static void
wtc_ckpt_add_extent (struct wtc_ckpt *k, const struct wtmf_file *f,
                     const struct wtmf_file *later, const struct wtmf_extent *e,
                     uint64_t disk_sectors)
{
  if ((e->flags & (WTMF_EXT_UNWRITTEN | WTMF_EXT_UNMAPPABLE))
      || e->logical % WT_SECTOR_SIZE || e->physical % WT_SECTOR_SIZE)
    return;
  uint64_t first = e->logical / WT_SECTOR_SIZE;
  uint64_t end = MIN (f->nsectors, (e->logical + e->length) / WT_SECTOR_SIZE);
  for (uint64_t s = first; s < end; s++) {
    uint64_t d = e->physical / WT_SECTOR_SIZE + (s - first);
    if (d >= disk_sectors)
      break;
    if (!wtc_sector_stable (f, later, s))
      continue;
    wtc_probe_add (k->probes, f, s, d);
    k->stable++;
  }
}

static int
wtc_probe_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_probe *x = a, *y = b;
  return x->disk_sector < y->disk_sector ? -1 : x->disk_sector > y->disk_sector;
}

/* The files of a manifest by id: a lookup per file of the checkpoint
 * (wtmf_find_file scans, and 150,000 files took 33 s that way). */
static GHashTable *
wtc_files_by_id (const struct wtmf_manifest *m)
{
  GHashTable *t = g_hash_table_new (g_direct_hash, g_direct_equal);
  /* The first of equal ids wins, as with wtmf_find_file (the manifest
   * reader refuses duplicates anyway). Ids are stored as id + 1: 0 is
   * NULL, which a lookup cannot tell from a miss. */
  for (uint32_t i = m->nfiles; i-- > 0;)
    g_hash_table_insert (t, GSIZE_TO_POINTER ((gsize) m->files[i].id + 1), &m->files[i]);
  return t;
}

static void
wtc_ckpt_build (struct wtc_ckpt *k, const struct wtmf_manifest *m,
                const struct wtmf_manifest *next, uint64_t disk_size)
{
  g_autoptr (GHashTable) next_files = wtc_files_by_id (next);
  k->probes = g_array_new (false, false, sizeof (struct wtc_probe));
  for (uint32_t i = 0; i < m->nfiles; i++) {
    const struct wtmf_file *f = &m->files[i];
    const struct wtmf_file *later =
      g_hash_table_lookup (next_files, GSIZE_TO_POINTER ((gsize) f->id + 1));
    k->sectors += f->nsectors;
    for (uint32_t j = 0; j < f->nextents; j++)
      wtc_ckpt_add_extent (k, f, later, &f->extents[j], disk_size / WT_SECTOR_SIZE);
  }
  g_array_sort (k->probes, wtc_probe_cmp);
}

/* The first MARK of each label: one pass over the messages instead of one
 * per checkpoint. Keys are the labels (freed with the table). */
static GHashTable *
wtc_marks_by_label (const struct wtc_channel *ch)
{
  GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < ch->msgs->len; i++) {
    const struct wtc_msg *m = &g_array_index (ch->msgs, struct wtc_msg, i);
    if (m->type != WTCH_MARK)
      continue;
    char *text = wtc_mark_label (m);
    if (g_hash_table_contains (t, text))
      g_free (text);
    else
      g_hash_table_insert (t, text, (gpointer) m);
  }
  return t;
}

/* The seq of the CHANNEL record of the first MARK "checkpoint K". */
static bool
wtc_checkpoint_mark (GHashTable *marks, uint32_t number, uint64_t *seq,
                     GPtrArray *warnings)
{
  g_autofree char *label = g_strdup_printf ("checkpoint %" PRIu32, number);
  const struct wtc_msg *m = g_hash_table_lookup (marks, label);
  if (m) {
    if (!m->placed) {
      g_ptr_array_add (warnings, g_strdup_printf ("MARK \"%s\" (message %" PRIu64
                                                  ") has no CHANNEL record in the log: "
                                                  "checkpoint not used", label, m->number));
      return false;
    }
    *seq = m->log_seq;
    return true;
  }
  g_ptr_array_add (warnings, g_strdup_printf ("a manifest of checkpoint %" PRIu32
                                              " has no MARK \"%s\": not used",
                                              number, label));
  return false;
}

static int
wtc_ckpt_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_ckpt *x = a, *y = b;
  return x->mark_seq < y->mark_seq ? -1 : x->mark_seq > y->mark_seq;
}

/* Each checkpoint manifest against the manifest that follows it in the
 * stream (the next checkpoint, or the final one). */
static void
wtc_oracle_build (struct wtc_oracle *o, const struct wtc_channel *ch,
                  uint64_t disk_size)
{
  g_autoptr (GHashTable) marks = wtc_marks_by_label (ch);
  for (guint i = 0; i < o->manifests->len; i++) {
    const struct wtmf_manifest *m = g_ptr_array_index (o->manifests, i);
    if (m->checkpoint == 0)
      continue;
    if (i + 1 == o->manifests->len) {
      g_ptr_array_add (o->warnings, g_strdup_printf (
        "checkpoint %" PRIu32 " has no later manifest (the guest stopped?): "
        "what was rewritten after it is unknown, so it is not used", m->checkpoint));
      continue;
    }
    struct wtc_ckpt k = { .number = m->checkpoint };
    if (!wtc_checkpoint_mark (marks, m->checkpoint, &k.mark_seq, o->warnings))
      continue;
    wtc_ckpt_build (&k, m, g_ptr_array_index (o->manifests, i + 1), disk_size);
    g_ptr_array_add (o->describe, g_strdup_printf (
      "checkpoint %" PRIu32 " at seq %" PRIu64 ": %" PRIu64 " of %" PRIu64
      " file sectors to compare (the others are rewritten before the next manifest)",
      k.number, k.mark_seq, k.stable, k.sectors));
    g_array_append_val (o->ckpts, k);
  }
  g_array_sort (o->ckpts, wtc_ckpt_cmp);
}

/* A btrfs run's extents hold btrfs addresses; compared as disk offsets,
 * every checkpoint past mkfs's first data chunk would read other sectors. */
static void
wtc_oracle_translate (struct wtc_oracle *o, const GArray *chunks, const char *channel)
{
  if (!chunks)
    return;
  g_autofree char *example = NULL;
  uint64_t lost = wtc_chunks_translate (chunks, o->manifests, &example);
  if (lost)
    g_ptr_array_add (o->warnings, g_strdup_printf (
      "%s: %" PRIu64 " extents lie outside every chunk of the btrfs chunk map,"
      " not compared; the first: %s", channel, lost, example));
}

struct wtc_oracle *
wtc_oracle_new (const char *log, const char *channel, const GArray *chunks,
                uint64_t disk_size, GError **error)
{
  g_autoptr (wtc_channel) ch = wtc_channel_read_placed (log, channel, NULL, error);
  if (!ch)
    return NULL;
  struct wtc_oracle *o = g_new0 (struct wtc_oracle, 1);
  o->describe = g_ptr_array_new_with_free_func (g_free);
  o->warnings = g_ptr_array_new_with_free_func (g_free);
  o->ckpts = g_array_new (false, false, sizeof (struct wtc_ckpt));
  g_array_set_clear_func (o->ckpts, wtc_ckpt_clear);
  if (ch->error)
    g_ptr_array_add (o->warnings, g_strdup_printf ("%s: %s (later messages are ignored)",
                                                   channel, ch->error));
  g_autoptr (GError) parse_error = NULL;
  if (!wtc_manifests_parse (ch, &o->manifests, &parse_error))
    g_ptr_array_add (o->warnings, g_strdup_printf ("%s: %s (later manifests are ignored)",
                                                   channel, parse_error->message));
  wtc_oracle_translate (o, chunks, channel);
  wtc_oracle_build (o, ch, disk_size);
  return o;
}

/* Checking. */

/* The last checkpoint whose MARK is at or before seq (ckpts is sorted by
 * mark_seq; a binary search, as there is one lookup per state). */
static uint64_t
wtc_ckpt_mark_at (size_t i, const void *ckpts)
{
  return g_array_index ((const GArray *) ckpts, struct wtc_ckpt, i).mark_seq;
}

static const struct wtc_ckpt *
wtc_oracle_find (const struct wtc_oracle *o, uint64_t seq)
{
  /* the first checkpoint after seq; the answer is the one before it */
  size_t lo = seq == UINT64_MAX ? o->ckpts->len
    : wt_lower_bound (0, o->ckpts->len, seq + 1, wtc_ckpt_mark_at, o->ckpts);
  return lo ? &g_array_index (o->ckpts, struct wtc_ckpt, lo - 1) : NULL;
}

static void
wtc_verdict_note_bad (struct wtc_data_verdict *v, const char *path,
                      uint64_t file_sector, uint64_t disk_sector)
{
  v->bad++;
  if (v->runs->len) {
    struct wtc_data_run *last = &g_array_index (v->runs, struct wtc_data_run,
                                                v->runs->len - 1);
    if (last->path == path && last->file_sector + last->count == file_sector
        && last->disk_sector + last->count == disk_sector) {
      last->count++;
      return;
    }
  }
  struct wtc_data_run r = { path, file_sector, disk_sector, 1 };
  g_array_append_val (v->runs, r);
}

static bool
wtc_probe_check (const struct wtc_probe *p, struct wt_image *img,
                 unsigned char *buf, struct wtc_data_verdict *v, GError **error)
{
  for (uint64_t done = 0; done < p->count;) {
    uint64_t n = MIN (p->count - done, (uint64_t) WTC_ORACLE_READ_SECTORS);
    if (!wtc_target_read (img, (p->disk_sector + done) * WT_SECTOR_SIZE, buf,
                          n * WT_SECTOR_SIZE, error))
      return false;
    for (uint64_t i = 0; i < n; i++) {
      uint64_t s = p->file_sector + done + i;
      if (wt_sector_hash (buf + i * WT_SECTOR_SIZE) != p->file->hashes[s])
        wtc_verdict_note_bad (v, p->file->path, s, p->disk_sector + done + i);
    }
    v->checked += n;
    done += n;
  }
  return true;
}

bool
wtc_oracle_check (const struct wtc_oracle *o, struct wt_image *img,
                  uint64_t seq, struct wtc_data_verdict *v, GError **error)
{
  memset (v, 0, sizeof *v);
  v->runs = g_array_new (false, false, sizeof (struct wtc_data_run));
  const struct wtc_ckpt *k = o ? wtc_oracle_find (o, seq) : NULL;
  if (!k)
    return true;
  v->checkpoint = k->number;
  g_autofree unsigned char *buf = g_malloc (WTC_ORACLE_READ_SECTORS * WT_SECTOR_SIZE);
  for (guint i = 0; i < k->probes->len; i++)
    if (!wtc_probe_check (&g_array_index (k->probes, struct wtc_probe, i), img,
                          buf, v, error))
      return false;
  return true;
}

void
wtc_data_verdict_clear (struct wtc_data_verdict *v)
{
  if (v->runs)
    g_array_unref (v->runs);
  v->runs = NULL;
}
