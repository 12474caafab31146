/* The model: each file's expected bytes and the op table. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest.h"
#include "sector-hash.h"

void
wtg_model_init (struct wtg_model *m)
{
  memset (m, 0, sizeof *m);
  pthread_mutex_init (&m->lock, NULL);
}

/* Add a file of the given size (its descriptor is the caller's to open).
 * with_image: allocate its expected bytes, zeroed, rounded up to a sector
 * so the last sector's hash is of the zero-padded sector. */
struct wtg_file *
wtg_model_add_file (struct wtg_run *run, const char *path, uint64_t size,
                    bool with_image)
{
  struct wtg_model *m = &run->model;
  struct wtg_file *files = realloc (m->files, (m->nfiles + 1) * sizeof *files);
  if (!files) {
    wtg_fail (run, "malloc: file table: %m");
    return NULL;
  }
  m->files = files;
  struct wtg_file *f = &files[m->nfiles];
  memset (f, 0, sizeof *f);
  f->fd = -1;
  f->id = m->nfiles + 1;
  f->size = size;
  uint64_t nsectors = wtmf_sectors_of (size);
  if (!(f->path = strdup (path))) {
    wtg_fail (run, "malloc: path: %m");
    return NULL;
  }
  if (wtg_fs_path (run, path, &f->fs_path) < 0) {
    free (f->path);
    return NULL;
  }
  f->sector_op = calloc (nsectors ? nsectors : 1, sizeof *f->sector_op);
  if (with_image)
    f->image = calloc (nsectors ? nsectors : 1, WT_SECTOR_SIZE);
  if (!f->sector_op || (with_image && !f->image)) {
    wtg_fail (run, "malloc: model of %s (%llu bytes): %m", path,
              (unsigned long long) size);
    free (f->sector_op);
    free (f->image);
    free (f->fs_path);
    free (f->path);
    return NULL;
  }
  m->nfiles++;
  return f;
}

struct wtg_file *
wtg_model_create_file (struct wtg_run *run, bool truncate_to_size)
{
  char path[PATH_MAX];
  uint32_t id = run->model.nfiles + 1;
  if (snprintf (path, sizeof path, "%s/f%" PRIu32, run->dir_abs, id) >= (int) sizeof path) {
    wtg_fail (run, "file path: %s/f%" PRIu32 ": too long", run->dir_abs, id);
    return NULL;
  }
  struct wtg_file *f = wtg_model_add_file (run, path, run->opt->size, true);
  if (!f)
    return NULL;
  f->fd = open (path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f->fd < 0) {
    wtg_fail (run, "open: %s: %m", path);
    return NULL;
  }
  if (!truncate_to_size)
    return f;
  wtg_model_op (&run->model, f->id, WTMF_OP_TRUNCATE, 0, f->size);
  if (ftruncate (f->fd, (off_t) f->size) < 0) {
    wtg_fail (run, "ftruncate: %s to %" PRIu64 " bytes: %m", path, f->size);
    return NULL;
  }
  return f;
}

static bool
wtg_op_writes_data (uint32_t kind)
{
  return kind == WTMF_OP_MMAP_STORE || kind == WTMF_OP_PWRITE;
}

/* Append an op, timed now, and make it the last writer of the sectors it
 * stores to. Returns its number (from 1), 0 when memory ran out. */
uint32_t
wtg_model_op (struct wtg_model *m, uint32_t file_id, uint32_t kind,
              uint64_t offset, uint64_t length)
{
  pthread_mutex_lock (&m->lock);
  uint32_t number = 0;
  if (m->nops == m->ops_cap) {
    uint32_t cap = m->ops_cap ? m->ops_cap * 2 : 4096;
    struct wtmf_op *ops = realloc (m->ops, (size_t) cap * sizeof *ops);
    if (!ops) {
      m->out_of_memory = true;
      goto out;
    }
    m->ops = ops;
    m->ops_cap = cap;
  }
  m->ops[m->nops] = (struct wtmf_op) {
    .guest_ns = wtg_now_ns (), .file_id = file_id, .kind = kind,
    .offset = offset, .length = length,
  };
  number = ++m->nops;
  if (wtg_op_writes_data (kind) && length) {
    struct wtg_file *f = &m->files[file_id - 1];
    for (uint64_t s = offset / WT_SECTOR_SIZE; s <= (offset + length - 1) / WT_SECTOR_SIZE; s++)
      f->sector_op[s] = number;
    m->bytes_stored += length;
  }
 out:
  pthread_mutex_unlock (&m->lock);
  return number;
}

void
wtg_model_free (struct wtg_model *m)
{
  for (uint32_t i = 0; i < m->nfiles; i++) {
    struct wtg_file *f = &m->files[i];
    if (f->fd >= 0)
      close (f->fd);
    free (f->path);
    free (f->fs_path);
    free (f->image);
    free (f->sector_op);
  }
  free (m->files);
  free (m->ops);
  m->files = NULL;
  m->ops = NULL;
  m->nfiles = m->nops = 0;
}
