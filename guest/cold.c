/* cold --warm DEV MOUNT: the second half of a run. Booted on the recovered
 * disk under a trusted kernel, read back every file the run's final
 * manifest lists (from the warm channel, DEV) under MOUNT: its size, what
 * every sector reads and where FIEMAP now puts it. Sent as a manifest
 * flagged cold; a file that cannot be opened, or a sector that cannot be
 * read, carries its errno instead of failing the pass. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel.h"
#include "channel-writer.h"
#include "fileio.h"
#include "guest.h"
#include "sector-hash.h"

#define WTG_COLD_BLOCK (1u << 20)

/* Every MANIFEST payload of the warm channel, concatenated. */
static int
wtg_cold_warm_stream (struct wtg_run *run, unsigned char **out, size_t *outlen)
{
  char err[512];
  struct wtch_reader *r = wtch_reader_open (run->opt->warm, err, sizeof err);
  if (!r)
    return wtg_fail (run, "warm channel: %s", err);
  unsigned char *buf = NULL;
  size_t len = 0;
  struct wtch_message m;
  int rc;
  while ((rc = wtch_reader_next (r, &m, err, sizeof err)) == 0) {
    if (m.type != WTCH_MANIFEST)
      continue;
    unsigned char *nb = realloc (buf, len + m.length);
    if (!nb) {
      rc = -1;
      snprintf (err, sizeof err, "malloc: %s", strerror (errno));
      break;
    }
    buf = nb;
    memcpy (buf + len, m.payload, m.length);
    len += m.length;
  }
  wtch_reader_close (r);
  if (rc < 0) {
    free (buf);
    return wtg_fail (run, "warm channel: %s", err);
  }
  *out = buf;
  *outlen = len;
  return 0;
}

/* The last final (checkpoint 0) manifest of the warm channel. */
static int
wtg_cold_warm_manifest (struct wtg_run *run, struct wtmf_manifest *final)
{
  unsigned char *buf = NULL;
  size_t len = 0, off = 0;
  char err[512];
  if (wtg_cold_warm_stream (run, &buf, &len) < 0)
    return -1;
  bool found = false;
  while (off < len) {
    struct wtmf_manifest m;
    size_t used;
    if (wtmf_parse (buf + off, len - off, &m, &used, err, sizeof err) < 0) {
      free (buf);
      if (found)
        wtmf_free (final);
      return wtg_fail (run, "warm manifest at stream byte %zu: %s", off, err);
    }
    off += used;
    if (m.checkpoint != 0) {
      wtmf_free (&m);
      continue;
    }
    if (found)
      wtmf_free (final);
    *final = m;
    found = true;
  }
  free (buf);
  if (!found)
    return wtg_fail (run, "warm channel %s: no final manifest", run->opt->warm);
  return 0;
}

/* One sector at a time, where a whole block failed: each keeps its errno. */
static void
wtg_cold_read_sectors (int fd, unsigned char *buf, size_t want, uint64_t off,
                       uint32_t *errs)
{
  for (size_t s = 0; s < want; s += WT_SECTOR_SIZE) {
    size_t n = want - s < WT_SECTOR_SIZE ? want - s : WT_SECTOR_SIZE;
    ssize_t got = wt_pread_full (fd, buf + s, n, off + s);
    if (got < 0) {
      errs[s / WT_SECTOR_SIZE] = errno ? (uint32_t) errno : EIO;
      memset (buf + s, 0, n);
    } else if ((size_t) got < n)
      memset (buf + s + got, 0, n - (size_t) got);
  }
}

/* What every sector reads (zero-padded past the end, like the warm
 * manifest), with the errno of those that could not be read. */
static int
wtg_cold_hashes (struct wtg_run *run, int fd, struct wtmf_file *cf)
{
  unsigned char *buf = malloc (WTG_COLD_BLOCK);
  if (!buf)
    return wtg_fail (run, "malloc: read buffer: %m");
  for (uint64_t off = 0; off < cf->size; off += WTG_COLD_BLOCK) {
    size_t want = cf->size - off < WTG_COLD_BLOCK ? cf->size - off : WTG_COLD_BLOCK;
    uint32_t *errs = cf->ops + off / WT_SECTOR_SIZE;
    ssize_t got = wt_pread_full (fd, buf, want, off);
    if (got < 0)
      wtg_cold_read_sectors (fd, buf, want, off, errs);
    else if ((size_t) got < want)
      memset (buf + got, 0, want - (size_t) got);
    size_t whole = (want + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE;
    memset (buf + want, 0, whole * WT_SECTOR_SIZE - want);
    wt_sector_hashes (buf, whole, cf->hashes + off / WT_SECTOR_SIZE);
  }
  free (buf);
  return 0;
}

/* The cold entry of one warm file, appended to b. */
static int
wtg_cold_file (struct wtg_run *run, const char *mount, const struct wtmf_file *wf,
               struct wtmf_buf *b, uint32_t *unreadable)
{
  char path[PATH_MAX];
  struct wtmf_file cf = { .id = wf->id, .path = wf->path };
  if (snprintf (path, sizeof path, "%s%s", mount, wf->path) >= (int) sizeof path)
    return wtg_fail (run, "cold: %s%s: path too long", mount, wf->path);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)) {
    cf.error = fd < 0 || errno ? (uint32_t) errno : EINVAL;
    if (fd >= 0 && !S_ISREG (st.st_mode))
      cf.error = EINVAL;
    wtg_text (run, "cold: %s: %s", wf->path, strerror ((int) cf.error));
    if (fd >= 0)
      close (fd);
    (*unreadable)++;
    wtmf_buf_file (b, &cf);
    return 0;
  }
  cf.inode = st.st_ino;
  cf.size = (uint64_t) st.st_size;
  uint64_t nsectors = wtmf_sectors_of (cf.size);
  cf.hashes = malloc ((nsectors ? nsectors : 1) * sizeof *cf.hashes);
  cf.ops = calloc (nsectors ? nsectors : 1, sizeof *cf.ops);
  int rc = 0;
  if (!cf.hashes || !cf.ops)
    rc = wtg_fail (run, "malloc: cold hashes of %s: %m", path);
  const char *method;
  char err[300];
  if (rc == 0 && wtg_extents (fd, path, cf.size, &cf.extents, &cf.nextents, &method,
                              err, sizeof err) < 0) {
    /* The kernel under test is not this one: a refusal is a finding. */
    wtg_text (run, "cold: extents: %s", err);
    cf.extents = NULL;
    cf.nextents = 0;
  }
  if (rc == 0)
    rc = wtg_cold_hashes (run, fd, &cf);
  for (uint64_t s = 0; rc == 0 && s < nsectors; s++)
    if (cf.ops[s]) {
      wtg_text (run, "cold: %s: sector %" PRIu64 " unreadable: %s", wf->path, s,
                     strerror ((int) cf.ops[s]));
      (*unreadable)++;
      break;
    }
  if (rc == 0)
    wtmf_buf_file (b, &cf);
  close (fd);
  free (cf.hashes);
  free (cf.ops);
  free (cf.extents);
  return rc;
}

int
wtg_cold (struct wtg_run *run)
{
  char mount[PATH_MAX];
  if (!realpath (run->opt->operands[0], mount))
    return wtg_fail (run, "realpath: %s: %m", run->opt->operands[0]);
  if (strcmp (mount, "/") == 0)
    mount[0] = '\0';
  struct wtmf_manifest warm;
  if (wtg_cold_warm_manifest (run, &warm) < 0)
    return -1;
  struct wtmf_buf b = { 0 };
  uint32_t unreadable = 0;
  int rc = 0;
  wtmf_buf_header_cold (&b, warm.nfiles);
  for (uint32_t i = 0; i < warm.nfiles && rc == 0; i++)
    rc = wtg_cold_file (run, mount, &warm.files[i], &b, &unreadable);
  if (rc == 0 && wtmf_buf_finish (&b) < 0)
    rc = wtg_fail (run, "malloc: cold manifest: out of memory");
  for (size_t off = 0; rc == 0 && off < b.len; off += WTG_MANIFEST_CHUNK) {
    size_t n = b.len - off < WTG_MANIFEST_CHUNK ? b.len - off : WTG_MANIFEST_CHUNK;
    if (wtg_channel_send (run->chan, WTCH_MANIFEST, b.p + off, (uint32_t) n) < 0)
      break;
  }
  wtg_extra (run, "cold_files=%" PRIu32, warm.nfiles);
  wtg_extra (run, "cold_unreadable=%" PRIu32, unreadable);
  wtmf_buf_free (&b);
  wtmf_free (&warm);
  return rc;
}
