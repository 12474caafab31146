/* What each op of the ops workload does to a file's bytes, when the call
 * succeeded (doc/ops.md "The model"). Invariant: every byte of the image at
 * or past the size is zero, so growing the file needs no work. sector_op
 * names, for each sector, the last op that wrote or zeroed part of it (0:
 * none since it came into the file). */
#include <string.h>

#include "ops.h"

#define WTG_SECTOR 512u

static uint64_t
wtg_min (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

/* Sectors touching [from, to) were last written by op number. */
static void
wtg_mark_sectors (struct wtg_file_model *m, uint64_t from, uint64_t to, uint32_t number)
{
  if (from >= to)
    return;
  for (uint64_t s = from / WTG_SECTOR; s <= (to - 1) / WTG_SECTOR; s++)
    m->sector_op[s] = number;
}

/* The file grows to new_size: the bytes between read as zeros (they are).
 * The sector that held the old EOF is the growing op's: the kernel zeroes
 * its tail then. Sectors it adds whole were written by no op. */
static void
wtg_grow (struct wtg_file_model *m, uint64_t new_size, uint32_t number)
{
  if (new_size <= m->size)
    return;
  if (m->size % WTG_SECTOR)
    m->sector_op[m->size / WTG_SECTOR] = number;
  m->size = new_size;
}

static void
wtg_zero (struct wtg_file_model *m, uint64_t from, uint64_t to, uint32_t number)
{
  if (from >= to)
    return;
  memset (m->image + from, 0, to - from);
  wtg_mark_sectors (m, from, to, number);
}

static void
wtg_shrink (struct wtg_file_model *m, uint64_t new_size)
{
  if (new_size >= m->size)
    return;
  memset (m->image + new_size, 0, m->size - new_size);
  uint64_t first_gone = (new_size + WTG_SECTOR - 1) / WTG_SECTOR;
  uint64_t end = (m->size + WTG_SECTOR - 1) / WTG_SECTOR;
  for (uint64_t s = first_gone; s < end; s++)
    m->sector_op[s] = 0;
  m->size = new_size;
}

uint64_t
wtg_mwrite_reach (uint64_t size, uint64_t off, uint64_t len, uint64_t page, bool past_eof)
{
  uint64_t eof_page_end = (size + page - 1) / page * page;
  uint64_t end = wtg_min (off + len, past_eof ? eof_page_end : size);
  return end > off ? end - off : 0;
}

bool
wtg_op_fits (const struct wtg_op *op, uint64_t size, uint64_t size_limit)
{
  if (op->kind == WTG_OK_FINSERT && op->off < size)
    return size <= size_limit && op->len <= size_limit - size;
  switch (wtg_op_shape (op->kind)) {
  case WTG_SHAPE_RANGE: case WTG_SHAPE_IOV:
    return op->off <= size_limit && op->len <= size_limit - op->off
      && op->src_off <= size_limit && op->len <= size_limit - op->src_off;
  case WTG_SHAPE_SIZE: return op->off <= size_limit;
  default: return true;
  }
}

/* COLLAPSE_RANGE: the bytes after the range move down over it; every
 * sector from OFF to the new EOF holds what the op put there. Needs
 * OFF + LEN below the size (the kernel refuses it otherwise). */
static uint64_t
wtg_collapse (struct wtg_file_model *m, uint64_t off, uint64_t len, uint32_t number)
{
  if (off + len >= m->size)
    return 0;
  uint64_t old_size = m->size;
  memmove (m->image + off, m->image + off + len, old_size - off - len);
  wtg_shrink (m, old_size - len);
  wtg_mark_sectors (m, off, m->size, number);
  return old_size - off - len;
}

/* INSERT_RANGE: a hole of LEN bytes opens at OFF, the rest moves up. Needs
 * OFF below the size. */
static uint64_t
wtg_insert (struct wtg_file_model *m, uint64_t off, uint64_t len, uint32_t number)
{
  if (off >= m->size || len > m->cap - m->size)   /* callers check wtg_op_fits */
    return 0;
  uint64_t old_size = m->size;
  m->size = old_size + len;
  memmove (m->image + off + len, m->image + off, old_size - off);
  memset (m->image + off, 0, len);
  wtg_mark_sectors (m, off, m->size, number);
  return m->size - off;
}

uint64_t
wtg_op_apply (struct wtg_file_model *m, const struct wtg_op *op,
              const unsigned char *data, uint32_t number, uint64_t page)
{
  bool keep = op->flags & WTG_OPF_KEEP_SIZE;
  uint64_t end = op->off + op->len;
  if (op->kind == WTG_OK_COPY_RANGE && op->len == 0)
    return 0;                   /* nothing copied: the file stays as it is */
  switch (op->kind) {
  case WTG_OK_PWRITE: case WTG_OK_WRITE: case WTG_OK_DWRITE: case WTG_OK_COPY_RANGE:
  case WTG_OK_PWRITEV: case WTG_OK_REFLINK:
    wtg_grow (m, end, number);
    memcpy (m->image + op->off, data, op->len);
    wtg_mark_sectors (m, op->off, end, number);
    return op->len;
  case WTG_OK_MWRITE: {
    /* The bytes past EOF in its page are the mapping's, not the file's. */
    uint64_t in_file = wtg_min (end, m->size);
    (void) page;
    if (in_file <= op->off)
      return 0;
    memcpy (m->image + op->off, data, in_file - op->off);
    wtg_mark_sectors (m, op->off, in_file, number);
    return in_file - op->off;
  }
  case WTG_OK_TRUNCATE: {
    uint64_t before = m->size;
    wtg_shrink (m, op->off);
    wtg_grow (m, op->off, number);
    return op->off > before ? op->off - before : before - op->off;
  }
  case WTG_OK_FALLOC:
    if (!keep)
      wtg_grow (m, end, number);
    return 0;
  case WTG_OK_FPUNCH:
    wtg_zero (m, op->off, wtg_min (end, m->size), number);
    return op->off < m->size ? wtg_min (end, m->size) - op->off : 0;
  case WTG_OK_FZERO:
    if (!keep)
      wtg_grow (m, end, number);
    wtg_zero (m, op->off, wtg_min (end, m->size), number);
    return op->off < m->size ? wtg_min (end, m->size) - op->off : 0;
  case WTG_OK_FCOLLAPSE:
    return wtg_collapse (m, op->off, op->len, number);
  case WTG_OK_FINSERT:
    return wtg_insert (m, op->off, op->len, number);
  default:                      /* syncs, cache drops, dedupe: no byte changes */
    return 0;
  }
}
