/* The end of every workload: fsync, read back through the page cache,
 * where the files are (FIEMAP), and the manifest; also MARKs and the
 * checkpoints of --checkpoint. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "channel-writer.h"
#include "guest.h"
#include "sector-hash.h"

#define WTG_READ_BLOCK (1u << 20)

/* A MARK places a moment of the workload among the disk writes. A broken
 * channel does not stop the workload: the loss is reported at the end. */
int
wtg_mark (struct wtg_run *run, const char *fmt, ...)
{
  char label[256];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (label, sizeof label, fmt, ap);
  va_end (ap);
  if (n < 0)
    return -1;
  if ((size_t) n >= sizeof label)
    n = sizeof label - 1;
  if (run->opt->verbose)
    fprintf (stderr, "wtrack-guest: mark: %s\n", label);
  wtg_trace_marker_write (run, label, (size_t) n);
  wtg_channel_send (run->chan, WTCH_MARK, label, (uint32_t) n);
  return 0;
}

void
wtg_text (struct wtg_run *run, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n >= sizeof text)
    n = sizeof text - 1;
  fprintf (stderr, "wtrack-guest: %s\n", text);
  wtg_channel_send (run->chan, WTCH_TEXT, text, (uint32_t) n);
}

int
wtg_fsync_file (struct wtg_run *run, struct wtg_file *f)
{
  /* Files of "manifest" have no model and so no op table. */
  if (f->image)
    wtg_model_op (&run->model, f->id, WTMF_OP_FSYNC, 0, f->size);
  if (fsync (f->fd) < 0)
    return wtg_fail (run, "fsync: %s: %m", f->path);
  return wtg_mark (run, "fsync file %" PRIu32, f->id);
}

/* Sectors of f that differ from the model, read through the page cache. */
static int
wtg_readback_file (struct wtg_run *run, struct wtg_file *f, unsigned char *buf,
                   uint64_t *bad)
{
  uint64_t first_bad = UINT64_MAX, nbad = 0;
  for (uint64_t off = 0; off < f->size; off += WTG_READ_BLOCK) {
    size_t want = f->size - off < WTG_READ_BLOCK ? f->size - off : WTG_READ_BLOCK;
    ssize_t got = wt_pread_full (f->fd, buf, want, off);
    if (got < 0)
      return wtg_fail (run, "read back: %s at byte %" PRIu64 ": %m", f->path, off);
    if ((size_t) got < want)      /* shorter than the model: the rest is bad */
      memset (buf + got, 0, want - (size_t) got);
    for (size_t s = 0; s < want; s += WT_SECTOR_SIZE) {
      size_t n = want - s < WT_SECTOR_SIZE ? want - s : WT_SECTOR_SIZE;
      if (memcmp (buf + s, f->image + off + s, n) != 0 || s + n > (size_t) got) {
        if (first_bad == UINT64_MAX)
          first_bad = off + s;
        nbad++;
      }
    }
  }
  if (nbad)
    wtg_text (run, "readback: %s: %" PRIu64 " sectors differ from the model, the first at byte %"
              PRIu64, f->fs_path, nbad, first_bad);
  *bad += nbad;
  return 0;
}

int
wtg_readback (struct wtg_run *run)
{
  unsigned char *buf = malloc (WTG_READ_BLOCK);
  if (!buf)
    return wtg_fail (run, "malloc: read-back buffer: %m");
  uint64_t bad = 0;
  int rc = 0;
  for (uint32_t i = 0; i < run->model.nfiles && rc == 0; i++)
    rc = wtg_readback_file (run, &run->model.files[i], buf, &bad);
  free (buf);
  run->readback_bad_sectors = bad;
  run->readback = bad ? "mismatch" : "match";
  run->readback_taken = true;
  return rc;
}

/* Expected hashes: from the model, or (manifest of existing files, no
 * model) from the file itself. The last sector is zero-padded past EOF. */
static int
wtg_hashes (struct wtg_run *run, const struct wtg_file *f, uint64_t *hashes)
{
  uint64_t nsectors = wtmf_sectors_of (f->size);
  if (f->image) {
    wt_sector_hashes (f->image, nsectors, hashes);
    return 0;
  }
  unsigned char *buf = malloc (WTG_READ_BLOCK);
  if (!buf)
    return wtg_fail (run, "malloc: read buffer: %m");
  for (uint64_t off = 0; off < f->size; off += WTG_READ_BLOCK) {
    size_t want = f->size - off < WTG_READ_BLOCK ? f->size - off : WTG_READ_BLOCK;
    ssize_t got = wt_pread_full (f->fd, buf, want, off);
    if (got < 0 || (size_t) got < want) {
      free (buf);
      return wtg_fail (run, "read: %s at byte %" PRIu64 ": %s", f->path, off,
                       got < 0 ? strerror (errno) : "the file shrank while read");
    }
    size_t whole = (want + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE;
    memset (buf + want, 0, whole * WT_SECTOR_SIZE - want);
    wt_sector_hashes (buf, whole, hashes + off / WT_SECTOR_SIZE);
  }
  free (buf);
  return 0;
}

/* One file's entry: its extents and hashes, appended to b. */
static int
wtg_manifest_file (struct wtg_run *run, const struct wtg_file *f,
                   struct wtmf_buf *b)
{
  struct stat st;
  if (fstat (f->fd, &st) < 0)
    return wtg_fail (run, "stat: %s: %m", f->path);
  struct wtmf_file mf = {
    .id = f->id, .path = f->fs_path, .inode = st.st_ino, .size = f->size,
    .ops = f->sector_op,
  };
  const char *method;
  char err[300];
  if (wtg_extents (f->fd, f->path, f->size, &mf.extents, &mf.nextents, &method,
                   err, sizeof err) < 0)
    return wtg_fail (run, "extents: %s", err);
  if (strcmp (method, "fiemap") != 0)
    wtg_text (run, "extents: %s: FIEMAP unsupported, found with %s", f->fs_path,
              strcmp (method, "none") == 0 ? "nothing (marked unmappable)" : method);
  uint64_t nsectors = wtmf_sectors_of (f->size);
  mf.hashes = malloc ((nsectors ? nsectors : 1) * sizeof *mf.hashes);
  int rc = mf.hashes ? wtg_hashes (run, f, mf.hashes)
    : wtg_fail (run, "malloc: hashes of %s: %m", f->path);
  if (rc == 0)
    wtmf_buf_file (b, &mf);
  free (mf.hashes);
  free (mf.extents);
  return rc;
}

static int
wtg_manifest_out (struct wtg_run *run, const struct wtmf_buf *b)
{
  const char *path = run->opt->manifest_out;
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return wtg_fail (run, "open: --manifest-out %s: %m", path);
  if (wt_pwrite_full (fd, b->p, b->len, 0) < 0 || close (fd) < 0) {
    int saved = errno;
    close (fd);
    errno = saved;
    return wtg_fail (run, "write: --manifest-out %s: %m", path);
  }
  return 0;
}

/* The manifest of every file and every op so far, in MANIFEST messages of
 * at most 1 MiB whose payloads, concatenated, are the manifest. */
int
wtg_send_manifest (struct wtg_run *run, uint32_t checkpoint)
{
  struct wtg_model *m = &run->model;
  struct wtmf_buf b = { 0 };
  pthread_mutex_lock (&m->lock);
  uint32_t nops = m->nops;
  pthread_mutex_unlock (&m->lock);
  wtmf_buf_header (&b, m->nfiles, nops, checkpoint);
  int rc = 0;
  for (uint32_t i = 0; i < m->nfiles && rc == 0; i++)
    rc = wtg_manifest_file (run, &m->files[i], &b);
  for (uint32_t i = 0; i < nops && rc == 0; i++)
    wtmf_buf_op (&b, &m->ops[i]);
  if (rc == 0 && wtmf_buf_finish (&b) < 0)
    rc = wtg_fail (run, "malloc: manifest: out of memory");
  if (rc == 0 && checkpoint == 0 && run->opt->manifest_out)
    rc = wtg_manifest_out (run, &b);
  for (size_t off = 0; rc == 0 && off < b.len; off += WTG_MANIFEST_CHUNK) {
    size_t n = b.len - off < WTG_MANIFEST_CHUNK ? b.len - off : WTG_MANIFEST_CHUNK;
    if (wtg_channel_send (run->chan, WTCH_MANIFEST, b.p + off, (uint32_t) n) < 0)
      break;
  }
  wtmf_buf_free (&b);
  return rc;
}

/* After the workload fsynced every file: a numbered manifest of what must
 * be on the disk from here on (all files: every one was just fsynced). */
int
wtg_checkpoint (struct wtg_run *run)
{
  uint32_t k = ++run->checkpoints;
  wtg_mark (run, "checkpoint %" PRIu32, k);
  return wtg_send_manifest (run, k);
}

int
wtg_finish (struct wtg_run *run)
{
  if (run->model.out_of_memory)
    return wtg_fail (run, "malloc: op table: out of memory");
  wtg_mark (run, "phase fsync");
  for (uint32_t i = 0; i < run->model.nfiles; i++)
    if (wtg_fsync_file (run, &run->model.files[i]) < 0)
      return -1;
  if (run->model.files && run->model.files[0].image && !run->readback_taken) {
    wtg_mark (run, "phase readback");
    if (wtg_readback (run) < 0)
      return -1;
  }
  wtg_mark (run, "phase manifest");
  return wtg_send_manifest (run, 0);
}
