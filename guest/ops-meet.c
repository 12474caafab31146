/* How often op kinds meet on a page (doc/ops.md "How ops meet"): for
 * each page of each file, the kinds of the last ops that touched it; an
 * op that touches pages last touched by kinds A1, A2, ... counts the pairs
 * (A1, B), (A2, B), ... once each, B being its own kind. No system calls:
 * guest/wl-ops.c notes each op that ran, tests/unit/test-ops.c holds it
 * to hand-made cases. */
#include <stdlib.h>
#include <string.h>

#include "ops.h"

int
wtg_op_meet_init (struct wtg_op_meet *mt, uint32_t files, uint64_t size_limit, uint64_t page)
{
  memset (mt, 0, sizeof *mt);
  mt->page = page;
  mt->files = files;
  mt->pages = (size_limit + page - 1) / page;
  mt->history = calloc ((size_t) files * mt->pages, sizeof *mt->history);
  return mt->history ? 0 : -1;
}

void
wtg_op_meet_free (struct wtg_op_meet *mt)
{
  free (mt->history);
  mt->history = NULL;
}

static bool
wtg_meet_is_write (uint8_t kind1)
{
  uint32_t k = (uint32_t) kind1 - 1;
  return kind1 && (k == WTG_OK_PWRITE || k == WTG_OK_WRITE || k == WTG_OK_PWRITEV
                   || k == WTG_OK_DWRITE);
}

/* The ops that change a range other than by writing bytes of their own. */
static bool
wtg_meet_is_range_op (uint8_t kind1)
{
  uint32_t k = (uint32_t) kind1 - 1;
  return kind1 && (k == WTG_OK_TRUNCATE || k == WTG_OK_FALLOC || k == WTG_OK_FPUNCH
                   || k == WTG_OK_FZERO || k == WTG_OK_FCOLLAPSE || k == WTG_OK_FINSERT
                   || k == WTG_OK_COPY_RANGE || k == WTG_OK_REFLINK);
}

/* The pages [from, to) of file (from 1), clipped to the size limit. */
static bool
wtg_meet_pages (const struct wtg_op_meet *mt, uint32_t file, uint64_t from, uint64_t to,
                uint64_t *first, uint64_t *end)
{
  if (from >= to || !file || file > mt->files)
    return false;
  *first = from / mt->page;
  *end = (to + mt->page - 1) / mt->page;
  if (*end > mt->pages)
    *end = mt->pages;
  return *first < *end;
}

/* Before the op: the kinds that last touched the pages (met: a bit per
 * kind), and whether an mwrite completes a write / mwrite / range op /
 * mwrite chain on one of them (stage 3: a write, an mwrite and a range op
 * came, in that order). */
static void
wtg_meet_gather (const struct wtg_op_meet *mt, uint32_t file, uint64_t from, uint64_t to,
                 uint32_t kind, uint32_t *met, bool *chain)
{
  uint64_t first, end;
  if (!wtg_meet_pages (mt, file, from, to, &first, &end))
    return;
  for (uint64_t p = first; p < end; p++) {
    const uint8_t *h = mt->history[(size_t) (file - 1) * mt->pages + p];
    if (h[0])
      *met |= 1u << (h[0] - 1);
    *chain |= kind == WTG_OK_MWRITE && h[1] == 3;
  }
}

/* The chain's stage on a page after an op of kind: a write starts it
 * over (1), an mwrite after it 2, a range op after that 3, an mwrite
 * after that completes it and counts as the mwrite of a new one (2).
 * Other ops in between leave it. */
static uint8_t
wtg_meet_stage (uint8_t stage, uint32_t kind)
{
  uint8_t kind1 = (uint8_t) (kind + 1);
  if (wtg_meet_is_write (kind1))
    return 1;
  if (kind == WTG_OK_MWRITE)
    return stage >= 1 ? 2 : 0;
  if (wtg_meet_is_range_op (kind1))
    return stage >= 2 ? 3 : stage;
  return stage;
}

/* After it: the op's kind is the pages' last, skipping [skip_from,
 * skip_to) (pages already marked by this op). */
static void
wtg_meet_mark (struct wtg_op_meet *mt, uint32_t file, uint64_t from, uint64_t to,
               uint32_t kind, uint64_t skip_from, uint64_t skip_to)
{
  uint64_t first, end;
  if (!wtg_meet_pages (mt, file, from, to, &first, &end))
    return;
  for (uint64_t p = first; p < end; p++) {
    if (p >= skip_from && p < skip_to)
      continue;
    uint8_t *h = mt->history[(size_t) (file - 1) * mt->pages + p];
    h[0] = (uint8_t) (kind + 1);
    h[1] = wtg_meet_stage (h[1], kind);
  }
}

/* The bytes an op touches on its own file: its range; a mapped write the
 * bytes it stores; truncate the pages between the old and the new EOF
 * (the one holding EOF when they are equal); collapse and insert every
 * page from OFF to the larger EOF (they all move). */
static void
wtg_meet_span (const struct wtg_op *op, uint64_t old_size, uint64_t new_size,
               uint64_t page, uint64_t *from, uint64_t *to)
{
  uint64_t hi_size = old_size > new_size ? old_size : new_size;
  *from = op->off;
  *to = op->off + op->len;
  switch (op->kind) {
  case WTG_OK_TRUNCATE:
    *from = old_size < new_size ? old_size : new_size;
    *to = hi_size > *from ? hi_size : *from + 1;
    break;
  case WTG_OK_FCOLLAPSE: case WTG_OK_FINSERT:
    *to = hi_size > *from ? hi_size : *from + 1;
    break;
  case WTG_OK_MWRITE:
    *to = op->off + wtg_mwrite_reach (old_size, op->off, op->len, page,
                                      op->flags & WTG_OPF_PAST_EOF);
    break;
  default:
    break;
  }
}

void
wtg_op_meet_note (struct wtg_op_meet *mt, const struct wtg_op *op, uint64_t old_size,
                  uint64_t new_size)
{
  if (wtg_op_shape (op->kind) == WTG_SHAPE_NONE)
    return;                     /* syncs and cache drops name no range */
  uint32_t met = 0;
  bool chain = false;
  uint64_t from, to;
  wtg_meet_span (op, old_size, new_size, mt->page, &from, &to);
  bool source = wtg_op_has_source (op->kind);
  uint64_t src_to = op->src_off + op->len;
  if (source)
    wtg_meet_gather (mt, op->src_file, op->src_off, src_to, op->kind, &met, &chain);
  wtg_meet_gather (mt, op->file, from, to, op->kind, &met, &chain);
  wtg_meet_mark (mt, op->file, from, to, op->kind, 0, 0);
  uint64_t skip_from = 0, skip_to = 0;
  if (source && op->src_file == op->file)
    wtg_meet_pages (mt, op->file, from, to, &skip_from, &skip_to);
  if (source)
    wtg_meet_mark (mt, op->src_file, op->src_off, src_to, op->kind, skip_from, skip_to);
  for (uint32_t a = 0; a < WTG_OK_COUNT; a++)
    if (met & (1u << a))
      mt->count[a][op->kind]++;
  mt->chains += chain;
}
