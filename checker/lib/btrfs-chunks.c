/* btrfs logical addresses to disk offsets (lib/btrfs-chunks.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/btrfs-chunks.h"
#include "manifest.h"

static gint
wtc_chunk_cmp (gconstpointer a, gconstpointer b)
{
  const struct wtc_chunk *x = a, *y = b;
  return x->logical < y->logical ? -1 : x->logical > y->logical;
}

/* One line "LOGICAL LENGTH OFFSET", decimal bytes; false when it is not. */
static bool
wtc_chunk_parse (const char *line, struct wtc_chunk *ch)
{
  char tail;
  if (sscanf (line, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %c", &ch->logical, &ch->length,
              &ch->offset, &tail) != 3)
    return false;
  return ch->length > 0 && ch->logical <= UINT64_MAX - ch->length
    && ch->offset <= UINT64_MAX - ch->length && line[0] >= '0' && line[0] <= '9';
}

GArray *
wtc_chunks_read (const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return NULL;
  g_autoptr (GArray) chunks = g_array_new (FALSE, FALSE, sizeof (struct wtc_chunk));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i]; i++) {
    if (!lines[i][0] || lines[i][0] == '#')
      continue;
    struct wtc_chunk ch;
    if (!wtc_chunk_parse (lines[i], &ch)) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "%s: line %u: \"%s\" is not LOGICAL LENGTH OFFSET (decimal bytes)",
                   path, i + 1, lines[i]);
      return NULL;
    }
    g_array_append_val (chunks, ch);
  }
  g_array_sort (chunks, wtc_chunk_cmp);
  for (guint i = 1; i < chunks->len; i++) {
    const struct wtc_chunk *p = &g_array_index (chunks, struct wtc_chunk, i - 1);
    if (p->logical + p->length > g_array_index (chunks, struct wtc_chunk, i).logical) {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                   "%s: the chunk at logical %" PRIu64 " overlaps the next", path, p->logical);
      return NULL;
    }
  }
  return g_steal_pointer (&chunks);
}

/* The chunk holding logical address at, or NULL. */
static const struct wtc_chunk *
wtc_chunk_find (const GArray *chunks, uint64_t at)
{
  for (guint i = 0; i < chunks->len; i++) {
    const struct wtc_chunk *ch = &g_array_index (chunks, struct wtc_chunk, i);
    if (at >= ch->logical && at - ch->logical < ch->length)
      return ch;
  }
  return NULL;
}

/* Extent e translated into out, one piece a chunk it crosses; false (and e
 * flagged WTC_EXT_NO_CHUNK) when some of its bytes lie in no chunk. */
static bool
wtc_extent_translate (const GArray *chunks, const struct wtmf_extent *e, GArray *out)
{
  guint start = out->len;
  for (uint64_t done = 0; done < e->length;) {
    uint64_t at = e->physical + done;
    const struct wtc_chunk *ch = at >= e->physical ? wtc_chunk_find (chunks, at) : NULL;
    if (!ch) {
      g_array_set_size (out, start);
      struct wtmf_extent u = *e;
      u.flags |= WTMF_EXT_UNMAPPABLE | WTC_EXT_NO_CHUNK;
      g_array_append_val (out, u);
      return false;
    }
    uint64_t piece = MIN (e->length - done, ch->length - (at - ch->logical));
    struct wtmf_extent p = { e->logical + done, ch->offset + (at - ch->logical), piece, e->flags };
    g_array_append_val (out, p);
    done += piece;
  }
  return true;
}

/* File f's extents translated; returns how many lay outside every chunk. */
static uint64_t
wtc_file_translate (const GArray *chunks, struct wtmf_file *f, char **example)
{
  g_autoptr (GArray) out = g_array_sized_new (FALSE, FALSE, sizeof (struct wtmf_extent),
                                              f->nextents);
  uint64_t lost = 0;
  for (uint32_t i = 0; i < f->nextents; i++) {
    const struct wtmf_extent *e = &f->extents[i];
    if (e->flags & WTMF_EXT_UNMAPPABLE) {
      g_array_append_val (out, *e);
      continue;
    }
    if (!wtc_extent_translate (chunks, e, out) && lost++ == 0 && !*example)
      *example = g_strdup_printf ("%s: extent %" PRIu32 " (logical %" PRIu64 ", btrfs address %"
                                  PRIu64 ", %" PRIu64 " bytes) lies in no chunk of the map",
                                  f->path, i, e->logical, e->physical, e->length);
  }
  if (out->len > UINT32_MAX)
    return lost;
  struct wtmf_extent *copy = calloc (out->len ? out->len : 1, sizeof *copy);
  if (!copy)
    g_error ("out of memory translating %s's extents", f->path);
  memcpy (copy, out->data, out->len * sizeof *copy);
  free (f->extents);
  f->extents = copy;
  f->nextents = out->len;
  return lost;
}

uint64_t
wtc_chunks_translate (const GArray *chunks, GPtrArray *manifests, char **example)
{
  uint64_t lost = 0;
  for (guint m = 0; manifests && m < manifests->len; m++) {
    struct wtmf_manifest *mf = g_ptr_array_index (manifests, m);
    for (uint32_t fi = 0; fi < mf->nfiles; fi++)
      lost += wtc_file_translate (chunks, &mf->files[fi], example);
  }
  return lost;
}
