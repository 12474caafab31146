/* ops: a list of operations over a few small files, each done the way the
 * kernel sees it (buffered, direct and mapped writes, truncate, fallocate,
 * syncs, cache drops), with the exact bytes of every file kept in the model
 * after every op (guest/ops-model.c). The list comes from the seed
 * (guest/ops-list.c) or from --ops-file; every op is sent as a MARK
 * "op N LINE" in the order it runs, LINE being its ops.txt line, so the
 * host keeps the list and the report names the op a lost write belongs to.
 *
 * The kernel is under test: a call that succeeds but leaves the file other
 * than the model says (its size, the bytes read back over the op's pages),
 * or fails with an error it should not give (EIO, ENOSPC, ...), is a
 * surprise: a MARK "surprise op N: ...", counted in RESULT, and the model
 * stays the truth. A call the file system refuses (EOPNOTSUPP, EINVAL,
 * ENOSYS) is counted as refused and leaves the model as it was. Only the
 * workload's own failures (memory, opening a file) end the run. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "guest.h"
#include "ops.h"

struct wtg_ops_file {
  struct wtg_file *f;
  struct wtg_file_model m;
  int dfd;                      /* O_DIRECT, opened on the first dwrite */
  bool direct_refused;          /* the file system refused O_DIRECT */
  unsigned char *map;           /* MAP_SHARED over the size limit, or NULL */
  size_t map_len;
};

struct wtg_ops {
  struct wtg_run *run;
  struct wtg_ops_file *files;
  uint32_t nfiles;
  uint64_t page;
  uint64_t block;               /* the file system's block size (statvfs) */
  unsigned char *data;          /* page-aligned: a write's bytes */
  unsigned char *back;          /* page-aligned: bytes read back */
  uint64_t executed[WTG_OK_COUNT];
  uint64_t refused[WTG_OK_COUNT];
  uint64_t surprises;
  uint64_t skipped;             /* finsert past the size limit: not run */
  uint64_t maps;                /* mappings made on demand */
  uint64_t copied;              /* bytes the last copy_range copied */
  uint64_t short_copies;        /* copy_range that copied less than asked */
  uint64_t beyond_eof_bytes;    /* mapped bytes stored past EOF */
  uint64_t past_eof_mwrites;    /* mwrite -e that stored past EOF */
  uint64_t sequential_dwrites;  /* dwrite -s that ran */
  bool dedupe_differed;         /* the last dedupe: the kernel found other bytes */
  uint64_t dedupes_differing;   /* dedupes the kernel found differing */
  struct wtg_op_meet meet;      /* how often op kinds met on a page */
};

/* The manifest's op kind of each op, for the op table. */
static uint32_t
wtg_ops_manifest_kind (uint32_t kind)
{
  static const uint32_t kinds[WTG_OK_COUNT] = {
    [WTG_OK_PWRITE] = WTMF_OP_PWRITE, [WTG_OK_WRITE] = WTMF_OP_PWRITE,
    [WTG_OK_DWRITE] = WTMF_OP_DIRECT_WRITE, [WTG_OK_MWRITE] = WTMF_OP_MMAP_STORE,
    [WTG_OK_MSYNC] = WTMF_OP_MSYNC, [WTG_OK_MUNMAP] = WTMF_OP_MUNMAP,
    [WTG_OK_TRUNCATE] = WTMF_OP_TRUNCATE, [WTG_OK_FALLOC] = WTMF_OP_FALLOCATE,
    [WTG_OK_FPUNCH] = WTMF_OP_PUNCH, [WTG_OK_FZERO] = WTMF_OP_ZERO,
    [WTG_OK_FSYNC] = WTMF_OP_FSYNC, [WTG_OK_FDATASYNC] = WTMF_OP_FDATASYNC,
    [WTG_OK_SYNC_RANGE] = WTMF_OP_SYNC_RANGE, [WTG_OK_FADVISE] = WTMF_OP_FADVISE,
    [WTG_OK_FCOLLAPSE] = WTMF_OP_COLLAPSE, [WTG_OK_FINSERT] = WTMF_OP_INSERT,
    [WTG_OK_COPY_RANGE] = WTMF_OP_COPY, [WTG_OK_PWRITEV] = WTMF_OP_PWRITE,
    [WTG_OK_REFLINK] = WTMF_OP_CLONE, [WTG_OK_DEDUPE] = WTMF_OP_DEDUPE,
    [WTG_OK_SYNCFS] = WTMF_OP_SYNCFS, [WTG_OK_DROP_CACHES] = WTMF_OP_DROP_CACHES,
  };
  return kinds[kind];
}

/* An error that means the file system (or the guest) does not do the op:
 * refused, the model unchanged. reflink and dedupe also across mounts
 * (EXDEV); drop_caches without /proc or root. */
static bool
wtg_ops_refusal (uint32_t kind, int err)
{
  if (err == EOPNOTSUPP || err == EINVAL || err == ENOSYS)
    return true;
  if (kind == WTG_OK_REFLINK || kind == WTG_OK_DEDUPE)
    return err == EXDEV || err == ENOTTY;
  if (kind == WTG_OK_DROP_CACHES)
    return err == ENOENT || err == EACCES || err == EPERM || err == EROFS;
  return false;
}

static void
wtg_ops_surprise (struct wtg_ops *o, uint64_t n, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static void
wtg_ops_surprise (struct wtg_ops *o, uint64_t n, const char *fmt, ...)
{
  char what[200];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  o->surprises++;
  fprintf (stderr, "wtrack-guest: ops: surprise at op %" PRIu64 ": %s\n", n, what);
  wtg_mark (o->run, "surprise op %" PRIu64 ": %s", n, what);
}

/* The file's MAP_SHARED mapping, made on demand over the whole size limit
 * (pages past EOF are never touched: they would raise SIGBUS). */
static int
wtg_ops_map (struct wtg_ops *o, struct wtg_ops_file *of)
{
  if (of->map)
    return 0;
  size_t len = (size_t) of->m.cap;
  void *p = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, of->f->fd, 0);
  if (p == MAP_FAILED)
    return wtg_fail (o->run, "mmap: %s (%zu bytes): %m", of->f->path, len);
  of->map = p;
  of->map_len = len;
  o->maps++;
  return 0;
}

static int
wtg_ops_direct_fd (struct wtg_ops *o, struct wtg_ops_file *of)
{
  if (of->dfd >= 0 || of->direct_refused)
    return 0;
  of->dfd = open (of->f->path, O_RDWR | O_DIRECT | O_CLOEXEC);
  if (of->dfd >= 0)
    return 0;
  if (errno == EINVAL) {        /* no O_DIRECT on this file system */
    of->direct_refused = true;
    return 0;
  }
  return wtg_fail (o->run, "open O_DIRECT: %s: %m", of->f->path);
}

/* lseek(2) to off, then write(2) at the file position until len bytes
 * are written. 0 or the errno. */
static int
wtg_ops_write_at (int fd, const unsigned char *data, uint64_t off, uint64_t len)
{
  if (lseek (fd, (off_t) off, SEEK_SET) < 0)
    return errno;
  for (size_t done = 0; done < len; ) {
    ssize_t n = write (fd, data + done, len - done);
    if (n < 0 && errno != EINTR)
      return errno;
    done += n > 0 ? (size_t) n : 0;
  }
  return 0;
}

/* pwritev(2) of the op's iovecs, each over its part of the bytes; a
 * short write goes on with pwrite(2) from where it stopped. */
static int
wtg_ops_pwritev (struct wtg_ops *o, int fd, const struct wtg_op *op)
{
  struct iovec iov[WTG_IOV_MAX];
  uint64_t at = 0;
  for (uint32_t i = 0; i < op->niov; i++) {
    iov[i] = (struct iovec) { .iov_base = o->data + at, .iov_len = op->iov[i] };
    at += op->iov[i];
  }
  ssize_t n;
  do
    n = pwritev (fd, iov, (int) op->niov, (off_t) op->off);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno;
  if ((uint64_t) n < op->len
      && wt_pwrite_full (fd, o->data + n, op->len - (uint64_t) n, (off_t) (op->off + (uint64_t) n)) < 0)
    return errno;
  return 0;
}

/* FIDEDUPERANGE of one destination range: 0 when the kernel ran it
 * (o->dedupe_differed when it found the bytes differing), or the errno
 * of the call or of the destination's status. */
static int
wtg_ops_dedupe (struct wtg_ops *o, int fd, const struct wtg_op *op)
{
  struct {
    struct file_dedupe_range r;
    struct file_dedupe_range_info info;
  } d;
  memset (&d, 0, sizeof d);
  d.r.src_offset = op->src_off;
  d.r.src_length = op->len;
  d.r.dest_count = 1;
  d.info.dest_fd = fd;
  d.info.dest_offset = op->off;
  o->dedupe_differed = false;
  if (ioctl (o->files[op->src_file - 1].f->fd, FIDEDUPERANGE, &d) < 0)
    return errno;
  if (d.info.status < 0)
    return -d.info.status;
  o->dedupe_differed = d.info.status == FILE_DEDUPE_RANGE_DIFFERS;
  return 0;
}

/* sync(2), then every clean page, dentry and inode dropped. */
static int
wtg_ops_drop_caches (void)
{
  sync ();
  int fd = open ("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  int err = write (fd, "3", 1) == 1 ? 0 : errno;
  close (fd);
  return err;
}

/* The system call(s) of one op. Returns 0 (done), or the errno it failed
 * with; -1 after wtg_fail (the workload's own failure). *applied: the call
 * changed the file as the model says (false for a no-op such as msync with
 * nothing mapped). */
static int
wtg_ops_call (struct wtg_ops *o, struct wtg_ops_file *of, const struct wtg_op *op)
{
  int fd = of->f->fd;
  bool keep = op->flags & WTG_OPF_KEEP_SIZE;
  switch (op->kind) {
  case WTG_OK_PWRITE:
    return wt_pwrite_full (fd, o->data, op->len, (off_t) op->off) < 0 ? errno : 0;
  case WTG_OK_WRITE:
    return wtg_ops_write_at (fd, o->data, op->off, op->len);
  case WTG_OK_PWRITEV:
    return wtg_ops_pwritev (o, fd, op);
  case WTG_OK_DWRITE:
    if (wtg_ops_direct_fd (o, of) < 0)
      return -1;
    if (of->dfd < 0)
      return EINVAL;
    if (op->flags & WTG_OPF_SEQUENTIAL)
      return wtg_ops_write_at (of->dfd, o->data, op->off, op->len);
    return wt_pwrite_full (of->dfd, o->data, op->len, (off_t) op->off) < 0 ? errno : 0;
  case WTG_OK_MWRITE: {
    bool past_eof = op->flags & WTG_OPF_PAST_EOF;
    uint64_t reach = wtg_mwrite_reach (of->m.size, op->off, op->len, o->page, past_eof);
    if (!reach)
      return 0;
    if (wtg_ops_map (o, of) < 0)
      return -1;
    if (op->off + reach > of->m.size) {
      o->beyond_eof_bytes += op->off + reach - (op->off > of->m.size ? op->off : of->m.size);
      o->past_eof_mwrites++;
    }
    return wtg_guarded_copy (of->map + op->off, o->data, reach) < 0 ? EFAULT : 0;
  }
  case WTG_OK_MSYNC:
    if (!of->map)
      return 0;
    return msync (of->map, of->map_len, op->flags & WTG_OPF_ASYNC ? MS_ASYNC : MS_SYNC) < 0
      ? errno : 0;
  case WTG_OK_MUNMAP:
    if (!of->map)
      return 0;
    if (munmap (of->map, of->map_len) < 0)
      return errno;
    of->map = NULL;
    return 0;
  case WTG_OK_TRUNCATE:
    return ftruncate (fd, (off_t) op->off) < 0 ? errno : 0;
  case WTG_OK_FALLOC:
    return fallocate (fd, keep ? FALLOC_FL_KEEP_SIZE : 0, (off_t) op->off,
                      (off_t) op->len) < 0 ? errno : 0;
  case WTG_OK_FPUNCH:
    return fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) op->off,
                      (off_t) op->len) < 0 ? errno : 0;
  case WTG_OK_FZERO:
    return fallocate (fd, FALLOC_FL_ZERO_RANGE | (keep ? FALLOC_FL_KEEP_SIZE : 0),
                      (off_t) op->off, (off_t) op->len) < 0 ? errno : 0;
  case WTG_OK_FCOLLAPSE:
    return fallocate (fd, FALLOC_FL_COLLAPSE_RANGE, (off_t) op->off, (off_t) op->len) < 0
      ? errno : 0;
  case WTG_OK_FINSERT:
    return fallocate (fd, FALLOC_FL_INSERT_RANGE, (off_t) op->off, (off_t) op->len) < 0
      ? errno : 0;
  case WTG_OK_COPY_RANGE: {
    /* as many calls as it takes, until the source ends (a return of 0) */
    int src = o->files[op->src_file - 1].f->fd;
    loff_t from = (loff_t) op->src_off, to = (loff_t) op->off;
    o->copied = 0;
    while (o->copied < op->len) {
      ssize_t n = copy_file_range (src, &from, fd, &to, op->len - o->copied, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return errno;
      if (n == 0)
        break;
      o->copied += (uint64_t) n;
    }
    return 0;
  }
  case WTG_OK_REFLINK: {
    struct file_clone_range r = {
      .src_fd = o->files[op->src_file - 1].f->fd, .src_offset = op->src_off,
      .src_length = op->len, .dest_offset = op->off,
    };
    return ioctl (fd, FICLONERANGE, &r) < 0 ? errno : 0;
  }
  case WTG_OK_DEDUPE:
    return wtg_ops_dedupe (o, fd, op);
  case WTG_OK_SYNCFS:
    return syncfs (fd) < 0 ? errno : 0;
  case WTG_OK_DROP_CACHES:
    return wtg_ops_drop_caches ();
  case WTG_OK_FSYNC:
    return fsync (fd) < 0 ? errno : 0;
  case WTG_OK_FDATASYNC:
    return fdatasync (fd) < 0 ? errno : 0;
  case WTG_OK_SYNC_RANGE:
    return sync_file_range (fd, (off_t) op->off, (off_t) op->len,
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE
                            | SYNC_FILE_RANGE_WAIT_AFTER) < 0 ? errno : 0;
  case WTG_OK_FADVISE: {
    int e = posix_fadvise (fd, (off_t) op->off, (off_t) op->len, POSIX_FADV_DONTNEED);
    return e;
  }
  default:
    return wtg_fail (o->run, "ops: op kind %" PRIu32 ": not built", op->kind);
  }
}

/* What a copy_range must have copied: the source's bytes from its offset,
 * up to the length or the source's end. A call that copied less (it may
 * stop short) is counted; the model takes what it copied. */
static uint64_t
wtg_ops_copy_expect (struct wtg_ops *o, const struct wtg_op *op, int *err, uint64_t n)
{
  const struct wtg_file_model *src = &o->files[op->src_file - 1].m;
  uint64_t avail = op->src_off < src->size ? src->size - op->src_off : 0;
  uint64_t want = avail < op->len ? avail : op->len;
  if (*err)
    return want;                /* a surprise: the model stays the truth */
  if (o->copied > want) {
    wtg_ops_surprise (o, n, "copy_range copied %" PRIu64 " bytes, the source holds %" PRIu64,
                      o->copied, want);
    return want;
  }
  o->short_copies += o->copied < want;
  return o->copied;
}

/* After an op: the file's size, and its bytes over the op's pages read
 * back through the page cache, against the model. */
static int
wtg_ops_verify (struct wtg_ops *o, struct wtg_ops_file *of, const struct wtg_op *op,
                uint64_t n, uint64_t old_size)
{
  struct stat st;
  if (fstat (of->f->fd, &st) < 0)
    return wtg_fail (o->run, "stat: %s: %m", of->f->path);
  if ((uint64_t) st.st_size != of->m.size) {
    wtg_ops_surprise (o, n, "f%" PRIu32 " is %" PRIu64 " bytes, the model %" PRIu64,
                      of->f->id, (uint64_t) st.st_size, of->m.size);
    return 0;
  }
  if (wtg_op_shape (op->kind) == WTG_SHAPE_NONE)
    return 0;
  /* the op's range, and what a size change exposed or cut */
  uint64_t lo = op->off, hi = op->off + (op->kind == WTG_OK_TRUNCATE ? 0 : op->len);
  if (of->m.size != old_size) {
    uint64_t a = old_size < of->m.size ? old_size : of->m.size;
    uint64_t b = old_size < of->m.size ? of->m.size : old_size;
    lo = lo < a ? lo : a;
    hi = hi > b ? hi : b;
  }
  uint64_t from = lo / o->page * o->page;
  uint64_t to = (hi + o->page - 1) / o->page * o->page;
  if (to > of->m.size)
    to = of->m.size;
  if (from >= to)
    return 0;
  ssize_t got = wt_pread_full (of->f->fd, o->back, to - from, (off_t) from);
  if (got < 0) {
    wtg_ops_surprise (o, n, "reading f%" PRIu32 " back at %" PRIu64 ": %s", of->f->id, from,
                      strerror (errno));
    return 0;
  }
  for (uint64_t i = 0; i < to - from; i++)
    if (i >= (uint64_t) got || o->back[i] != of->m.image[from + i]) {
      wtg_ops_surprise (o, n, "f%" PRIu32 " reads other bytes than the model at byte %"
                        PRIu64, of->f->id, from + i);
      break;
    }
  return 0;
}

/* The bytes a dedupe compares, as the kernel's generic_remap_checks
 * counts them: the length cut to the source's EOF; when both ranges end at
 * their files' EOFs, all of it, else whole blocks only. */
static uint64_t
wtg_ops_dedupe_compared (const struct wtg_ops *o, const struct wtg_op *op,
                         const struct wtg_file_model *src, const struct wtg_file_model *dst)
{
  if (op->src_off >= src->size)
    return 0;
  uint64_t len = op->len;
  if (len > src->size - op->src_off)
    len = src->size - op->src_off;
  if (op->src_off + len == src->size && op->off + len == dst->size)
    return len;
  return len / o->block * o->block;
}

/* A dedupe the kernel ran: when it found the ranges differing although
 * the model holds the same bytes over what the kernel compares, the page
 * cache holds other bytes than the model: a surprise. Differing bytes in
 * the model are the ordinary case, counted. */
static int
wtg_ops_dedupe_differs (struct wtg_ops *o, const struct wtg_op *op, uint64_t n)
{
  if (!o->dedupe_differed)
    return 0;
  o->dedupes_differing++;
  const struct wtg_file_model *src = &o->files[op->src_file - 1].m;
  const struct wtg_file_model *dst = &o->files[op->file - 1].m;
  uint64_t len = wtg_ops_dedupe_compared (o, op, src, dst);
  if (len && op->src_off + len <= src->size && op->off + len <= dst->size
      && memcmp (src->image + op->src_off, dst->image + op->off, len) == 0)
    wtg_ops_surprise (o, n, "dedupe found f%" PRIu32 " and f%" PRIu32
                      " differing where the model holds the same bytes", op->src_file, op->file);
  return 0;
}

static int
wtg_ops_one (struct wtg_ops *o, const struct wtg_op *op, uint64_t n)
{
  struct wtg_run *run = o->run;
  struct wtg_ops_file *of = &o->files[op->file - 1];
  char line[128];
  wtg_op_format (op, line, sizeof line);
  wtg_mark (run, "op %" PRIu64 " %s", n, line);
  if (wtg_op_writes_data (op->kind))
    wtg_fill_keyed (o->data, op->off, op->len, wtg_content_key (run->opt->seed, of->f->id, n));
  if (op->kind == WTG_OK_COPY_RANGE || op->kind == WTG_OK_REFLINK) {
    /* the source's bytes as the model has them before the copy (zeros
     * past its EOF: the image holds the size limit) */
    const struct wtg_file_model *src = &o->files[op->src_file - 1].m;
    memcpy (o->data, src->image + op->src_off, op->len);
  }
  /* a mapped write's entry: the bytes it stores in the file */
  uint64_t table_len = op->kind == WTG_OK_MWRITE
    ? wtg_mwrite_reach (of->m.size, op->off, op->len, o->page, false) : op->len;
  if (!wtg_op_fits (op, of->m.size, run->opt->size)) {
    o->skipped++;
    wtg_mark (run, "skipped op %" PRIu64 ": the file would pass the size limit", n);
    return 0;
  }
  uint32_t number = wtg_model_op (&run->model, of->f->id, wtg_ops_manifest_kind (op->kind),
                                  op->off, table_len);
  int err = wtg_ops_call (o, of, op);
  if (err < 0)
    return -1;
  if (err && wtg_ops_refusal (op->kind, err)) {
    o->refused[op->kind]++;
    wtg_mark (run, "refused op %" PRIu64 ": %s", n, strerror (err));
    return 0;
  }
  o->executed[op->kind]++;
  o->sequential_dwrites += op->kind == WTG_OK_DWRITE && (op->flags & WTG_OPF_SEQUENTIAL);
  if (op->kind == WTG_OK_DEDUPE && !err && wtg_ops_dedupe_differs (o, op, n) < 0)
    return -1;
  uint64_t old_size = of->m.size;
  struct wtg_op done = *op;
  if (op->kind == WTG_OK_COPY_RANGE)
    done.len = wtg_ops_copy_expect (o, op, &err, n);
  wtg_op_apply (&of->m, &done, o->data, number, o->page);
  wtg_op_meet_note (&o->meet, &done, old_size, of->m.size);
  of->f->size = of->m.size;
  if (err) {
    wtg_ops_surprise (o, n, "%s failed: %s", wtg_op_name (op->kind), strerror (err));
    return 0;
  }
  return wtg_ops_verify (o, of, op, n, old_size);
}

/* --ops-file's text, NUL-terminated (at most 16 MiB); -1 with err set. */
static int
wtg_ops_read_file (const char *path, char **text, char *err, size_t errlen)
{
  enum { WTG_OPS_FILE_MAX = 16 << 20 };
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0) {
    snprintf (err, errlen, "%s", strerror (errno));
    if (fd >= 0)
      close (fd);
    return -1;
  }
  if (st.st_size > WTG_OPS_FILE_MAX) {
    close (fd);
    snprintf (err, errlen, "larger than 16 MiB");
    return -1;
  }
  *text = malloc ((size_t) st.st_size + 1);
  ssize_t got = *text ? wt_pread_full (fd, *text, (size_t) st.st_size, 0) : -1;
  int saved = errno;
  close (fd);
  if (got < 0) {
    free (*text);
    snprintf (err, errlen, "%s", strerror (saved));
    return -1;
  }
  (*text)[got] = '\0';
  if (strlen (*text) != (size_t) got) {
    free (*text);
    snprintf (err, errlen, "holds a NUL byte: not a text file");
    return -1;
  }
  return 0;
}

int
wtg_ops_load_file (const char *path, const struct wtg_op_limits *lim,
                   struct wtg_op **ops, uint64_t *nops, char *err, size_t errlen)
{
  char *text = NULL;
  if (wtg_ops_read_file (path, &text, err, errlen) < 0)
    return -1;
  int rc = wtg_ops_parse_text (text, lim, ops, nops, err, errlen);
  free (text);
  return rc;
}

/* The op list: from --ops-file, or generated from the seed. */
static int
wtg_ops_list (struct wtg_run *run, uint64_t page, const uint32_t *weights,
              struct wtg_op **ops, uint64_t *nops)
{
  const struct wtg_options *opt = run->opt;
  if (!opt->ops_file) {
    struct wtg_rng rng;
    wtg_rng_init (&rng, opt->seed, "ops list");
    struct wtg_op_gen_params p = { .files = opt->files, .size_limit = opt->size,
                                   .page = page, .weights = weights };
    *nops = opt->ops;
    if (wtg_ops_generate (&rng, &p, opt->ops, ops) < 0)
      return wtg_fail (run, "malloc: %" PRIu64 " ops: out of memory", opt->ops);
    return 0;
  }
  char err[512];
  struct wtg_op_limits lim = { .files = opt->files, .size_limit = opt->size };
  if (wtg_ops_load_file (opt->ops_file, &lim, ops, nops, err, sizeof err) < 0)
    return wtg_fail (run, "--ops-file %s: %s", opt->ops_file, err);
  return 0;
}

static int
wtg_ops_files (struct wtg_ops *o)
{
  struct wtg_run *run = o->run;
  o->files = calloc (run->opt->files, sizeof *o->files);
  if (!o->files)
    return wtg_fail (run, "malloc: files: %m");
  for (uint32_t i = 0; i < run->opt->files; i++) {
    struct wtg_file *f = wtg_model_create_file (run, false);
    if (!f)
      return -1;
    f->size = 0;
    /* the image and sector table hold the size limit (a page multiple) */
    o->files[i] = (struct wtg_ops_file) {
      .f = f, .dfd = -1,
      .m = { .image = f->image, .sector_op = f->sector_op, .size = 0,
             .cap = run->opt->size },
    };
    o->nfiles++;
  }
  /* adding a file moves the model's table: point at it once it is whole */
  for (uint32_t i = 0; i < o->nfiles; i++)
    o->files[i].f = &run->model.files[i];
  struct statvfs vfs;
  o->block = o->page;
  if (o->nfiles && fstatvfs (o->files[0].f->fd, &vfs) == 0 && vfs.f_bsize)
    o->block = vfs.f_bsize;
  return 0;
}

/* RESULT pairs_A=B:N,... for each kind A whose pages a later op met
 * (doc/ops.md "How ops meet"), and chains_wmrm. */
static void
wtg_ops_result_pairs (struct wtg_ops *o)
{
  for (uint32_t a = 0; a < WTG_OK_COUNT; a++) {
    char line[1024] = "";
    size_t used = 0;
    for (uint32_t b = 0; b < WTG_OK_COUNT && used < sizeof line; b++)
      if (o->meet.count[a][b])
        used += (size_t) snprintf (line + used, sizeof line - used, "%s%s:%" PRIu64,
                                   used ? "," : "", wtg_op_name (b), o->meet.count[a][b]);
    if (used)
      wtg_extra (o->run, "pairs_%s=%s", wtg_op_name (a), line);
  }
  wtg_extra (o->run, "chains_wmrm=%" PRIu64, o->meet.chains);
}

static void
wtg_ops_result (struct wtg_ops *o, uint64_t nops)
{
  uint64_t refused = 0;
  wtg_extra (o->run, "op_list=%" PRIu64, nops);
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++) {
    wtg_extra (o->run, "ops_%s=%" PRIu64, wtg_op_name (k), o->executed[k]);
    refused += o->refused[k];
  }
  wtg_extra (o->run, "ops_refused=%" PRIu64, refused);
  for (uint32_t k = 0; k < WTG_OK_COUNT; k++)
    if (o->refused[k])
      wtg_extra (o->run, "refused_%s=%" PRIu64, wtg_op_name (k), o->refused[k]);
  wtg_ops_result_pairs (o);
  wtg_extra (o->run, "dwrites_sequential=%" PRIu64, o->sequential_dwrites);
  wtg_extra (o->run, "dedupes_differing=%" PRIu64, o->dedupes_differing);
  wtg_extra (o->run, "ops_skipped=%" PRIu64, o->skipped);
  wtg_extra (o->run, "short_copies=%" PRIu64, o->short_copies);
  wtg_extra (o->run, "surprises=%" PRIu64, o->surprises);
  wtg_extra (o->run, "maps=%" PRIu64, o->maps);
  wtg_extra (o->run, "mwrites_past_eof=%" PRIu64, o->past_eof_mwrites);
  wtg_extra (o->run, "past_eof_bytes=%" PRIu64, o->beyond_eof_bytes);
}

/* Mappings and O_DIRECT descriptors go before the final fsync; dirty
 * mapped pages stay in the page cache for it. */
static void
wtg_ops_close (struct wtg_ops *o)
{
  for (uint32_t i = 0; i < o->nfiles; i++) {
    struct wtg_ops_file *of = &o->files[i];
    if (of->map) {
      wtg_model_op (&o->run->model, of->f->id, WTMF_OP_MUNMAP, 0, of->map_len);
      munmap (of->map, of->map_len);
    }
    if (of->dfd >= 0)
      close (of->dfd);
  }
  free (o->files);
}

int
wtg_ops (struct wtg_run *run)
{
  struct wtg_ops o = { .run = run, .page = (uint64_t) sysconf (_SC_PAGESIZE) };
  const struct wtg_options *opt = run->opt;
  if (opt->size < 4 * o.page || opt->size % o.page)
    return wtg_fail (run, "ops: --size %" PRIu64 ": must be a multiple of the page size (%"
                     PRIu64 ") and at least 4 pages", opt->size, o.page);
  struct wtg_op *ops = NULL;
  uint64_t nops = 0;
  if (wtg_ops_list (run, o.page, opt->op_weights, &ops, &nops) < 0)
    return -1;
  if (posix_memalign ((void **) &o.data, o.page, opt->size)
      || posix_memalign ((void **) &o.back, o.page, opt->size)) {
    free (ops);
    free (o.data);
    return wtg_fail (run, "malloc: ops buffers: out of memory");
  }
  int rc = wtg_ops_files (&o);
  if (rc == 0 && wtg_op_meet_init (&o.meet, opt->files, opt->size, o.page) < 0)
    rc = wtg_fail (run, "malloc: ops page history: out of memory");
  if (rc == 0)
    wtg_mark (run, "phase ops %" PRIu64, nops);
  for (uint64_t i = 0; rc == 0 && i < nops; i++)
    rc = wtg_ops_one (&o, &ops[i], i + 1);
  if (rc == 0)
    wtg_mark (run, "phase ops done");
  wtg_ops_close (&o);
  wtg_ops_result (&o, nops);
  wtg_op_meet_free (&o.meet);
  free (ops);
  free (o.data);
  free (o.back);
  return rc;
}
