/* torrent: rtorrent's pattern, the workload that met the 2006 bug in the
 * field. Preallocated (sparse) files; pieces in random order, each written
 * in 16 KiB blocks through windows of 64 pages that are mapped and unmapped
 * as an LRU, msync(MS_ASYNC) on eviction, madvise(MADV_WILLNEED) on map; a
 * few pieces rewritten with new content (a failed hash check); threads
 * writing disjoint pieces.
 *
 * Windows start every 32 pages, so neighbours share half their pages: a
 * piece that spans two windows is written through both while both are
 * mapped (counted in RESULT as shared_window_maps).
 *
 * Determinism: the pieces, their order, their content and which thread
 * writes them come from the seed; with --threads > 1 only the interleaving
 * of the threads (and so the op numbers) varies from run to run. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"

#define WTG_TORRENT_BLOCK (16u << 10)
#define WTG_WINDOW_PAGES 64u
#define WTG_REWRITE_PERCENT 5u

struct wtg_piece {
  uint32_t file;                /* index into the model's files */
  uint32_t index;
  bool rewrite;
};

struct wtg_window {
  uint32_t file;
  uint64_t k;                   /* starts at k * step */
  unsigned char *addr;
  size_t len;
  uint64_t last_use;
};

struct wtg_torrent {
  struct wtg_run *run;
  struct wtg_piece *pieces;
  uint32_t npieces;
  uint64_t step;                /* between window starts: half a window */
  uint64_t window_len;
  uint64_t shared_maps;         /* windows mapped over pages another maps */
  uint64_t evictions;
  pthread_mutex_t stats_lock;
};

struct wtg_worker {
  struct wtg_torrent *t;
  uint32_t id;
  pthread_t thread;
  struct wtg_window *lru;
  uint32_t nmapped;
  uint64_t clock;
};

static int
wtg_torrent_evict (struct wtg_worker *w, uint32_t slot)
{
  struct wtg_run *run = w->t->run;
  struct wtg_window *win = &w->lru[slot];
  struct wtg_file *f = &run->model.files[win->file];
  uint64_t off = win->k * w->t->step;
  wtg_model_op (&run->model, f->id, WTMF_OP_MSYNC, off, win->len);
  if (msync (win->addr, win->len, MS_ASYNC) < 0)
    return wtg_fail (run, "msync: %s window %" PRIu64 ": %m", f->path, win->k);
  wtg_mark (run, "msync file %" PRIu32 " window %" PRIu64, f->id, win->k);
  wtg_model_op (&run->model, f->id, WTMF_OP_MUNMAP, off, win->len);
  if (munmap (win->addr, win->len) < 0)
    return wtg_fail (run, "munmap: %s window %" PRIu64 ": %m", f->path, win->k);
  *win = w->lru[--w->nmapped];
  pthread_mutex_lock (&w->t->stats_lock);
  w->t->evictions++;
  pthread_mutex_unlock (&w->t->stats_lock);
  return 0;
}

static void
wtg_torrent_count_sharing (struct wtg_worker *w, uint32_t file, uint64_t k)
{
  for (uint32_t i = 0; i < w->nmapped; i++)
    if (w->lru[i].file == file && (w->lru[i].k + 1 == k || k + 1 == w->lru[i].k)) {
      pthread_mutex_lock (&w->t->stats_lock);
      w->t->shared_maps++;
      pthread_mutex_unlock (&w->t->stats_lock);
      return;
    }
}

/* The window k of file, mapped (evicting the least recently used when all
 * --windows are in use). */
static struct wtg_window *
wtg_torrent_window (struct wtg_worker *w, uint32_t file, uint64_t k)
{
  struct wtg_run *run = w->t->run;
  w->clock++;
  for (uint32_t i = 0; i < w->nmapped; i++)
    if (w->lru[i].file == file && w->lru[i].k == k) {
      w->lru[i].last_use = w->clock;
      return &w->lru[i];
    }
  if (w->nmapped == run->opt->windows) {
    uint32_t oldest = 0;
    for (uint32_t i = 1; i < w->nmapped; i++)
      if (w->lru[i].last_use < w->lru[oldest].last_use)
        oldest = i;
    if (wtg_torrent_evict (w, oldest) < 0)
      return NULL;
  }
  struct wtg_file *f = &run->model.files[file];
  uint64_t off = k * w->t->step;
  size_t len = f->size - off < w->t->window_len ? f->size - off : w->t->window_len;
  void *addr = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, (off_t) off);
  if (addr == MAP_FAILED) {
    wtg_fail (run, "mmap: %s window %" PRIu64 " (%zu bytes at %" PRIu64 "): %m",
              f->path, k, len, off);
    return NULL;
  }
  if (madvise (addr, len, MADV_WILLNEED) < 0)
    fprintf (stderr, "wtrack-guest: madvise WILLNEED: %s window %" PRIu64 ": %m (ignored)\n",
             f->path, k);
  wtg_torrent_count_sharing (w, file, k);
  struct wtg_window *win = &w->lru[w->nmapped++];
  *win = (struct wtg_window) { .file = file, .k = k, .addr = addr, .len = len,
                               .last_use = w->clock };
  return win;
}

/* One piece, block by block, through the window each block falls in. */
static int
wtg_torrent_piece (struct wtg_worker *w, const struct wtg_piece *p,
                   uint64_t generation)
{
  struct wtg_run *run = w->t->run;
  struct wtg_file *f = &run->model.files[p->file];
  uint64_t start = (uint64_t) p->index * run->opt->piece;
  uint64_t end = start + run->opt->piece < f->size ? start + run->opt->piece : f->size;
  uint64_t key = wtg_content_key (run->opt->seed, f->id, generation);
  for (uint64_t off = start; off < end && !run->stop; off += WTG_TORRENT_BLOCK) {
    size_t len = end - off < WTG_TORRENT_BLOCK ? end - off : WTG_TORRENT_BLOCK;
    uint64_t k = off / w->t->step;
    struct wtg_window *win = wtg_torrent_window (w, p->file, k);
    if (!win)
      return -1;
    wtg_fill_keyed (f->image + off, off, len, key);
    wtg_model_op (&run->model, f->id, WTMF_OP_MMAP_STORE, off, len);
    if (wtg_guarded_copy (win->addr + (off - k * w->t->step), f->image + off, len) < 0)
      return wtg_fail (run, "mmap store: %s at byte %" PRIu64
                       ": SIGBUS (no space left, or an I/O error)", f->path, off);
  }
  return 0;
}

static void *
wtg_torrent_worker (void *arg)
{
  struct wtg_worker *w = arg;
  struct wtg_run *run = w->t->run;
  for (uint32_t i = w->id; i < w->t->npieces && !run->stop; i += run->opt->threads) {
    const struct wtg_piece *p = &w->t->pieces[i];
    if (wtg_torrent_piece (w, p, 0) < 0)
      break;
    if (p->rewrite) {
      wtg_mark (run, "rewrite file %" PRIu32 " piece %" PRIu32,
                run->model.files[p->file].id, p->index);
      if (wtg_torrent_piece (w, p, 1) < 0)
        break;
    }
  }
  while (w->nmapped && wtg_torrent_evict (w, w->nmapped - 1) == 0)
    ;
  return NULL;
}

static int
wtg_torrent_files (struct wtg_run *run)
{
  for (uint32_t i = 0; i < run->opt->files; i++) {
    if (!wtg_model_create_file (run, true))
      return -1;
  }
  return 0;
}

/* Every piece of every file, shuffled; about 5% (at least one) to be
 * rewritten. */
static int
wtg_torrent_plan (struct wtg_torrent *t)
{
  struct wtg_run *run = t->run;
  uint64_t per_file = (run->opt->size + run->opt->piece - 1) / run->opt->piece;
  uint64_t total = per_file * run->opt->files;
  if (total > UINT32_MAX / 2)
    return wtg_fail (run, "torrent: %" PRIu64 " pieces: too many (raise --piece)", total);
  t->npieces = (uint32_t) total;
  uint32_t *order = malloc (t->npieces * sizeof *order);
  t->pieces = calloc (t->npieces, sizeof *t->pieces);
  if (!order || !t->pieces) {
    free (order);
    return wtg_fail (run, "malloc: %" PRIu32 " pieces: %m", t->npieces);
  }
  for (uint32_t i = 0; i < t->npieces; i++)
    order[i] = i;
  struct wtg_rng rng;
  wtg_rng_init (&rng, run->opt->seed, "torrent order");
  wtg_shuffle (&rng, order, t->npieces);
  wtg_rng_init (&rng, run->opt->seed, "torrent rewrite");
  uint32_t rewrites = 0;
  for (uint32_t i = 0; i < t->npieces; i++) {
    t->pieces[i] = (struct wtg_piece) {
      .file = (uint32_t) (order[i] / per_file), .index = (uint32_t) (order[i] % per_file),
      .rewrite = wtg_rng_below (&rng, 100) < WTG_REWRITE_PERCENT,
    };
    rewrites += t->pieces[i].rewrite;
  }
  if (!rewrites)
    t->pieces[0].rewrite = true;
  free (order);
  return 0;
}

static int
wtg_torrent_run_workers (struct wtg_torrent *t)
{
  struct wtg_run *run = t->run;
  uint32_t n = run->opt->threads;
  struct wtg_worker *w = calloc (n, sizeof *w);
  if (!w)
    return wtg_fail (run, "malloc: workers: %m");
  uint32_t started = 0;
  for (; started < n; started++) {
    w[started] = (struct wtg_worker) { .t = t, .id = started };
    w[started].lru = calloc (run->opt->windows, sizeof *w[started].lru);
    int e = w[started].lru ? pthread_create (&w[started].thread, NULL, wtg_torrent_worker,
                                             &w[started]) : ENOMEM;
    if (e) {
      errno = e;
      wtg_fail (run, "pthread_create: torrent thread %" PRIu32 ": %m", started);
      free (w[started].lru);
      break;
    }
  }
  for (uint32_t i = 0; i < started; i++) {
    pthread_join (w[i].thread, NULL);
    free (w[i].lru);
  }
  free (w);
  return run->stop ? -1 : 0;
}

int
wtg_torrent (struct wtg_run *run)
{
  long page = sysconf (_SC_PAGESIZE);
  struct wtg_torrent t = {
    .run = run, .window_len = WTG_WINDOW_PAGES * (uint64_t) page,
    .step = WTG_WINDOW_PAGES / 2 * (uint64_t) page,
  };
  pthread_mutex_init (&t.stats_lock, NULL);
  if (run->opt->size == 0)
    return wtg_fail (run, "torrent: --size must be at least 1 byte");
  int rc = wtg_torrent_plan (&t);
  if (rc == 0)
    rc = wtg_torrent_files (run);
  if (rc == 0) {
    wtg_mark (run, "phase write");
    rc = wtg_torrent_run_workers (&t);
  }
  uint32_t rewrites = 0;
  for (uint32_t i = 0; i < t.npieces; i++)
    rewrites += t.pieces[i].rewrite;
  wtg_extra (run, "pieces=%" PRIu32, t.npieces);
  wtg_extra (run, "rewritten_pieces=%" PRIu32, rewrites);
  wtg_extra (run, "window_evictions=%" PRIu64, t.evictions);
  wtg_extra (run, "shared_window_maps=%" PRIu64, t.shared_maps);
  free (t.pieces);
  return rc;
}
