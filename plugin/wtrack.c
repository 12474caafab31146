/* nbdkit-wtrack-plugin: serves a disk image (and a channel image) and records
 * every request in writes.wtlog, so lost writes can be found afterwards.
 * See nbdkit-wtrack-plugin.pod and doc/formats.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "crc32c.h"
#include "faults.h"
#include "fileio.h"
#include "log.h"
#include "rangelock.h"
#include "sector-hash.h"
#include "store.h"
#include "wtlog.h"
#include "wtrack.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#ifndef WTP_VERSION
#define WTP_VERSION "0.1"
#endif

/* Hash arrays up to this many sectors (256 KiB of request) live on the
 * stack: no allocation on the hot path of ordinary requests. */
#define WTP_STACK_HASHES 512
#define WTP_ZERO_CHUNK (1u << 20)

struct wtp_export wtp_disk = {
  .what = "disk", .fd = -1, .log_id = WTLOG_EXPORT_DISK,
  .write_type = WTLOG_WRITE, .ranges = WTP_RANGE_LOCK_INIT,
};
struct wtp_export wtp_channel = {
  .what = "channel", .fd = -1, .log_id = WTLOG_EXPORT_CHANNEL,
  .write_type = WTLOG_CHANNEL, .ranges = WTP_RANGE_LOCK_INIT,
};

char *wtp_log_path;
static char *wtp_faults_path;
bool wtp_data;
static bool wtp_stage = true;           /* stage=on (the default) */
static int64_t wtp_channel_size = -1;   /* -1: the channel file's own size */
static bool wtp_ready;                  /* the log exists */
static uint32_t wtp_last_conn;

static const char wtp_zeroes[WTP_ZERO_CHUNK];

/* Fails the current request with err (also left in errno). */
static int
wtp_fail (int err)
{
  nbdkit_set_error (err);
  errno = err;
  return -1;
}

static int
wtp_config_path (const char *key, const char *value, char **out, bool exists)
{
  free (*out);
  *out = exists ? nbdkit_realpath (value) : nbdkit_absolute_path (value);
  if (!*out) {
    nbdkit_error ("%s: %s: cannot resolve the path", key, value);
    return -1;
  }
  return 0;
}

static int
wtp_config_channel_size (const char *value)
{
  wtp_channel_size = nbdkit_parse_size (value);
  if (wtp_channel_size == -1) {
    nbdkit_error ("channel-size: %s: not a size", value);
    return -1;
  }
  if (wtp_channel_size == 0 || wtp_channel_size % WT_SECTOR_SIZE) {
    nbdkit_error ("channel-size: %s: must be a positive multiple of %u bytes",
                  value, WT_SECTOR_SIZE);
    return -1;
  }
  return 0;
}

static int
wtp_config_bool (const char *key, const char *value, bool *out)
{
  int on = nbdkit_parse_bool (value);
  if (on == -1) {
    nbdkit_error ("%s: %s: expected on or off", key, value);
    return -1;
  }
  *out = on;
  return 0;
}

static int
wtp_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0)
    return wtp_config_path (key, value, &wtp_disk.path, true);
  if (strcmp (key, "log") == 0)
    return wtp_config_path (key, value, &wtp_log_path, false);
  if (strcmp (key, "channel") == 0)
    return wtp_config_path (key, value, &wtp_channel.path, false);
  if (strcmp (key, "faults") == 0)
    return wtp_config_path (key, value, &wtp_faults_path, false);
  if (strcmp (key, "channel-size") == 0)
    return wtp_config_channel_size (value);
  if (strcmp (key, "fault") == 0)
    return wtp_faults_add_rule (value);
  if (strcmp (key, "data") == 0)
    return wtp_config_bool (key, value, &wtp_data);
  if (strcmp (key, "stage") == 0)
    return wtp_config_bool (key, value, &wtp_stage);
  nbdkit_error ("unknown parameter: %s (see nbdkit wtrack --help)", key);
  return -1;
}

static int
wtp_config_complete (void)
{
  if (!wtp_disk.path) {
    nbdkit_error ("no disk image: give the file name (or file=DISK.IMG)");
    return -1;
  }
  if (!wtp_log_path) {
    nbdkit_error ("no log: give log=WRITES.WTLOG");
    return -1;
  }
  if (wtp_channel_size != -1 && !wtp_channel.path) {
    nbdkit_error ("channel-size given without channel=FILE");
    return -1;
  }
  return 0;
}

#define wtp_config_help \
  "[file=]DISK.IMG      (required) the disk image, the export \"\"\n" \
  "log=WRITES.WTLOG     (required) the write log, created (truncated)\n" \
  "data=on|off          keep write payloads in the log (default off)\n" \
  "stage=on|off         the log holds the writes while served, the image\n" \
  "                     is written at unload (default on); off: written as\n" \
  "                     requests come\n" \
  "channel=FILE         serve FILE as the export \"channel\"\n" \
  "channel-size=SIZE    create or extend FILE to SIZE (sparse)\n" \
  "fault=KIND:SEL...    inject faults: KIND vanish, lie, tear or eio;\n" \
  "                     SEL p=P lba=A-B nth=N every=N after=S count=N seed=S\n" \
  "faults=FILE          write the faults injected to FILE"

/* The disk opens read-write, or read-only when the image refuses writing
 * (a read-only file or file system): clients then cannot write at all. */
static int
wtp_open_disk (void)
{
  wtp_disk.fd = open (wtp_disk.path, O_RDWR | O_CLOEXEC);
  wtp_disk.writable = wtp_disk.fd >= 0;
  if (wtp_disk.fd == -1 && (errno == EACCES || errno == EPERM || errno == EROFS)) {
    nbdkit_debug ("open: disk: %s: %m: serving it read-only", wtp_disk.path);
    wtp_disk.fd = open (wtp_disk.path, O_RDONLY | O_CLOEXEC);
  }
  if (wtp_disk.fd == -1) {
    nbdkit_error ("open: disk: %s: %m", wtp_disk.path);
    return -1;
  }
  off_t size = lseek (wtp_disk.fd, 0, SEEK_END);
  if (size == -1) {
    nbdkit_error ("lseek: disk: %s: %m", wtp_disk.path);
    return -1;
  }
  wtp_disk.size = (uint64_t) size;
  return 0;
}

static int
wtp_open_channel (void)
{
  struct stat st;
  wtp_channel.fd = open (wtp_channel.path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (wtp_channel.fd == -1 || fstat (wtp_channel.fd, &st) == -1) {
    nbdkit_error ("open: channel: %s: %m", wtp_channel.path);
    return -1;
  }
  wtp_channel.writable = true;
  if (wtp_channel_size == -1) {
    if (st.st_size == 0) {
      nbdkit_error ("channel: %s: empty file: give channel-size=SIZE",
                    wtp_channel.path);
      return -1;
    }
    wtp_channel.size = (uint64_t) st.st_size;
    return 0;
  }
  if (st.st_size < wtp_channel_size
      && ftruncate (wtp_channel.fd, wtp_channel_size) == -1) {
    nbdkit_error ("ftruncate: channel: %s: %m", wtp_channel.path);
    return -1;
  }
  wtp_channel.size = (uint64_t) wtp_channel_size;
  return 0;
}

static int
wtp_get_ready (void)
{
  struct wtlog_header h;

  if (wtp_open_disk () == -1)
    return -1;
  if (wtp_channel.path && wtp_open_channel () == -1)
    return -1;
  wtp_store_choose (wtp_stage);
  if (wtp_store_open () == -1)
    return -1;
  wtlog_header_init (&h, wtp_disk.size, wtp_channel.path ? wtp_channel.size : 0,
                     wtp_data || wtp_store_mode,
                     "nbdkit-wtrack-plugin " WTP_VERSION);
  if (wtp_store_mode)
    h.flags |= WTLOG_H_STORE;
  if (wtp_log_create (wtp_log_path, &h) == -1)
    return -1;
  if (wtp_faults_path && wtp_faults_open (wtp_faults_path) == -1)
    return -1;
  wtp_ready = true;
  return 0;
}

/* Threads must start after nbdkit forks into the background: a fork keeps
 * only the thread that calls it. */
static int
wtp_after_fork (void)
{
  wtp_log_start_threads ();
  return 0;
}

/* nbdkit calls this after the last connection closed, where .after_fork's
 * threads are to be stopped (.unload runs in the middle of dlclose). */
static void
wtp_cleanup (void)
{
  wtp_log_stop_threads ();
}

/* nbdkit --dump-plugin: the build facts, as key=value lines. */
static void
wtp_dump_plugin (void)
{
  printf ("wtrack_version=%s\n", WTP_VERSION);
  printf ("wtrack_log_format_version=%d\n", WTLOG_VERSION);
  printf ("wtrack_sector_hash=%s\n", wt_sector_hash_kind ());
  printf ("wtrack_crc32c=%s\n", wt_crc32c_kind ());
}

static void
wtp_export_close (struct wtp_export *e)
{
  if (e->fd == -1)
    return;
  if (e->writable && fdatasync (e->fd) == -1)
    nbdkit_error ("fdatasync: %s: %s: %m", e->what, e->path);
  close (e->fd);
  e->fd = -1;
}

/* The final CLOSE (conn 0) marks the log complete; with the log as the
 * store it is written only once the image holds the log's writes, so a
 * closed log always means disk.img is the disk after the run. */
static void
wtp_unload (void)
{
  bool applied = !wtp_store_mode || (wtp_ready && wtp_store_apply ());
  bool closed = false;
  wtp_store_close ();
  if (wtp_ready && applied && !wtp_log_is_broken ()) {
    uint64_t now = wtp_log_now ();
    struct wtlog_record rec = { .type = WTLOG_CLOSE, .t_start = now,
                                .t_end = now };
    closed = wtp_log_append (&rec, NULL, NULL) == 0;
    if (!closed)
      nbdkit_error ("write: log: final close record: %m");
  }
  wtp_export_close (&wtp_disk);
  wtp_export_close (&wtp_channel);
  wtp_log_close ();
  /* Only a closed log: an unclosed one's bytes are the disk's only copy. */
  if (wtp_store_mode && !wtp_data && closed)
    wtp_store_strip ();
  wtp_faults_close ();
  free (wtp_disk.path);
  free (wtp_channel.path);
  free (wtp_log_path);
  free (wtp_faults_path);
}

static int
wtp_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  if (nbdkit_add_export (exports, "", "the disk") == -1)
    return -1;
  if (wtp_channel.path
      && nbdkit_add_export (exports, "channel", "the guest's report channel") == -1)
    return -1;
  return 0;
}

static struct wtp_export *
wtp_export_named (const char *name)
{
  if (strcmp (name, "") == 0)
    return &wtp_disk;
  if (strcmp (name, "channel") == 0 && wtp_channel.path)
    return &wtp_channel;
  return NULL;
}

static void *
wtp_open (int readonly)
{
  const char *name = nbdkit_export_name ();
  struct wtp_export *exp = wtp_export_named (name ?: "");
  if (!exp) {
    nbdkit_error ("open: unknown export: \"%s\" (exports: \"\"%s)", name,
                  wtp_channel.path ? " and \"channel\"" : "");
    return NULL;
  }
  struct wtp_handle *h = malloc (sizeof *h);
  if (!h) {
    nbdkit_error ("malloc: %m");
    return NULL;
  }
  h->exp = exp;
  h->conn = __atomic_add_fetch (&wtp_last_conn, 1, __ATOMIC_RELAXED);
  uint64_t now = wtp_log_now ();
  struct wtlog_record rec = {
    .type = WTLOG_OPEN, .conn = h->conn, .t_start = now, .t_end = now,
    .offset = exp->log_id, .length = exp->size,
  };
  if (wtp_log_append (&rec, NULL, NULL) == -1) {
    nbdkit_error ("open: %s: cannot record the connection in the log: %m",
                  exp->what);
    free (h);
    return NULL;
  }
  return h;
}

static void
wtp_close (void *handle)
{
  struct wtp_handle *h = handle;
  uint64_t now = wtp_log_now ();
  struct wtlog_record rec = {
    .type = WTLOG_CLOSE, .conn = h->conn, .t_start = now, .t_end = now,
    .offset = h->exp->log_id, .length = h->exp->size,
  };
  if (!wtp_log_is_broken () && wtp_log_append (&rec, NULL, NULL) == -1)
    nbdkit_error ("close: %s: cannot record the end of connection %" PRIu32
                  ": %m", h->exp->what, h->conn);
  wtp_faults_sync ();
  free (h);
}

static int64_t
wtp_get_size (void *handle)
{
  struct wtp_handle *h = handle;
  return (int64_t) h->exp->size;
}

static int
wtp_can_write (void *handle)
{
  struct wtp_handle *h = handle;
  return h->exp->writable;
}

static int
wtp_can_flush (void *handle)
{
  return 1;
}

static int
wtp_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

static int
wtp_can_multi_conn (void *handle)
{
  return 1;
}

/* ZERO and TRIM records describe the disk; on the channel nbdkit turns a
 * zero request into a write (logged as CHANNEL) and trims are not offered. */
static int
wtp_can_trim (void *handle)
{
  struct wtp_handle *h = handle;
  return h->exp == &wtp_disk;
}

static int
wtp_can_zero (void *handle)
{
  struct wtp_handle *h = handle;
  return h->exp == &wtp_disk;
}

static int
wtp_can_fast_zero (void *handle)
{
  struct wtp_handle *h = handle;
  return h->exp == &wtp_disk;
}

static int
wtp_can_extents (void *handle)
{
  struct wtp_handle *h = handle;
  /* The image's holes say nothing while the log is the store. */
  if (wtp_is_store (h->exp))
    return 0;
  off_t r = lseek (h->exp->fd, 0, SEEK_DATA);
  return r >= 0 || errno == ENXIO;
}

static int
wtp_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                uint32_t *maximum)
{
  *minimum = WT_SECTOR_SIZE;
  *preferred = 4096;
  *maximum = 32 * 1024 * 1024;
  return 0;
}

/* 0 or errno. */
static int
wtp_pwrite_all (int fd, const void *buf, size_t count, uint64_t offset)
{
  return wt_pwrite_full (fd, buf, count, offset) < 0 ? errno : 0;
}

static int
wtp_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
           uint32_t flags)
{
  struct wtp_handle *h = handle;
  int err = wtp_read_current (h->exp, buf, count, offset);
  if (err) {
    errno = err;
    nbdkit_error ("pread: %s: %s: %m", h->exp->what, h->exp->path);
    return wtp_fail (err);
  }
  return 0;
}

/* The hash of every sector the write touches, as it reads afterwards: whole
 * sectors from the request, edge sectors merged with their old content.
 * Called under the range lock.  0 or errno. */
static int
wtp_hash_after (struct wtp_export *e, const char *buf, uint64_t count,
                uint64_t offset, uint64_t *hashes)
{
  uint64_t first = offset / WT_SECTOR_SIZE;
  uint64_t n = wtlog_sectors_touched (offset, count);
  uint64_t end = offset + count;
  unsigned char sector[WT_SECTOR_SIZE];

  for (uint64_t i = 0; i < n; i++) {
    uint64_t at = (first + i) * WT_SECTOR_SIZE;
    if (at >= offset && at + WT_SECTOR_SIZE <= end) {
      hashes[i] = wt_sector_hash (buf + (at - offset));
      continue;
    }
    int err = wtp_read_current (e, sector, WT_SECTOR_SIZE, at);
    if (err)
      return err;
    uint64_t lo = at > offset ? at : offset;
    uint64_t hi = at + WT_SECTOR_SIZE < end ? at + WT_SECTOR_SIZE : end;
    memcpy (sector + (lo - at), buf + (lo - offset), hi - lo);
    hashes[i] = wt_sector_hash (sector);
  }
  return 0;
}

/* A torn write: only the sectors the fault keeps reach the image. */
static int
wtp_store_torn (int fd, const char *buf, uint64_t count, uint64_t offset,
                const struct wtp_fault *f)
{
  uint64_t end = offset + count;
  for (uint64_t i = 0; i < f->nsectors; i++) {
    if (!f->stored[i])
      continue;
    uint64_t at = (f->first_sector + i) * WT_SECTOR_SIZE;
    uint64_t lo = at > offset ? at : offset;
    uint64_t hi = at + WT_SECTOR_SIZE < end ? at + WT_SECTOR_SIZE : end;
    int err = wtp_pwrite_all (fd, buf + (lo - offset), hi - lo, lo);
    if (err)
      return err;
  }
  return 0;
}

/* Puts the request into the image as the fault (if any) says.  0 or errno. */
static int
wtp_store (struct wtp_export *exp, const char *buf, uint64_t count,
           uint64_t offset, const struct wtp_fault *f, bool fua)
{
  int err = 0;
  if (wtp_is_store (exp))
    return 0;                   /* the log's copy is the write */
  switch (f->kind) {
  case WTP_FAULT_NONE:
    err = wtp_pwrite_all (exp->fd, buf, count, offset);
    break;
  case WTP_FAULT_TEAR:
    err = wtp_store_torn (exp->fd, buf, count, offset, f);
    break;
  case WTP_FAULT_LIE:
  case WTP_FAULT_VANISH:
    return 0;
  case WTP_FAULT_EIO:
    return EIO;
  }
  if (!err && fua && fdatasync (exp->fd) == -1)
    err = errno;
  if (err) {
    errno = err;
    nbdkit_error ("write: %s: %s: %" PRIu64 "+%" PRIu64 ": %m", exp->what,
                  exp->path, offset, count);
  }
  return err;
}

/* The tail every request shares once its record is reserved: write the
 * record, wait for the records before it, make it durable if asked.
 * err is the request's own result (0 or errno). */
static int
wtp_finish (struct wtp_slot *slot, struct wtlog_record *rec,
            const uint64_t *hashes, const void *data, int err, bool durable)
{
  wtp_log_commit (slot, rec, hashes, data);
  if (durable && !err && wtp_log_sync () == -1)
    return wtp_fail (errno);
  return err ? wtp_fail (err) : 0;
}

/* With the log as the store: the record is copied, then the index points at
 * it while the range lock still orders overlapping requests (a later write's
 * edge sectors are read through the index); the wait for the records before
 * it happens outside the lock. */
static int
wtp_finish_stored (struct wtp_export *exp, struct wtp_range *range,
                   struct wtp_slot *slot, struct wtlog_record *rec,
                   const uint64_t *hashes, const void *data,
                   struct wtp_index_spare *spare, bool durable)
{
  uint64_t data_pos = wtp_log_copy_record (slot, rec, hashes, data);
  wtp_store_point (rec, data_pos, spare);
  wtp_range_release (&exp->ranges, range);
  wtp_log_wait (slot);
  if (durable && wtp_log_sync () == -1)
    return wtp_fail (errno);
  return 0;
}

/* A write to either export: hashes, image, record, in that order, the first
 * three under the range lock so overlapping writes reach the image and the
 * log in the same order. */
static int
wtp_write_recorded (struct wtp_handle *h, const char *buf, uint64_t count,
                    uint64_t offset, bool fua, uint64_t t_start,
                    struct wtp_fault *f)
{
  struct wtp_export *exp = h->exp;
  uint64_t first = offset / WT_SECTOR_SIZE;
  uint64_t n = wtlog_sectors_touched (offset, count);
  uint64_t stack_hashes[WTP_STACK_HASHES];
  uint64_t *hashes = n <= WTP_STACK_HASHES ? stack_hashes
    : malloc (n * sizeof *hashes);
  struct wtp_range range;
  struct wtp_slot slot;
  struct wtp_index_spare spare = { NULL };
  bool store = wtp_is_store (exp);

  if (!hashes
      || (store
          && wtp_store_spare (&spare, offset, count) == -1)) {
    if (hashes != stack_hashes)
      free (hashes);
    return wtp_fail (ENOMEM);
  }
  wtp_range_acquire (&exp->ranges, &range, first * WT_SECTOR_SIZE,
                     (first + n) * WT_SECTOR_SIZE);
  int err = wtp_hash_after (exp, buf, count, offset, hashes);
  if (err) {
    errno = err;
    nbdkit_error ("pread: %s: %s: edge sector of %" PRIu64 "+%" PRIu64 ": %m",
                  exp->what, exp->path, offset, count);
  }
  else
    err = wtp_store (exp, buf, count, offset, f, fua);
  struct wtlog_record rec = {
    .type = exp->write_type, .conn = h->conn, .t_start = t_start,
    .t_end = wtp_log_now (), .offset = offset, .length = count,
    .flags = (fua ? WTLOG_F_FUA : 0) | wtp_data_flag (),
  };
  if (err) {
    rec.flags = (rec.flags & WTLOG_F_FUA) | WTLOG_F_FAILED;
    rec.err = err;
  }
  if (f->kind == WTP_FAULT_VANISH) {
    f->after_seq = wtp_log_last_seq ();
    wtp_range_release (&exp->ranges, &range);
    wtp_faults_record (f, 0, offset, count);
    if (hashes != stack_hashes)
      free (hashes);
    return 0;
  }
  /* With the log as the store, the index is updated between the copy and
   * the range lock's release: the copy cannot happen in the reservation. */
  int reserved = store && !err ? wtp_log_reserve (&slot, &rec)
    : wtp_log_reserve_copy (&slot, &rec, hashes, buf);
  int r;
  if (reserved == 0 && store && !err)
    r = wtp_finish_stored (exp, &range, &slot, &rec, hashes, buf, &spare, fua);
  else {
    wtp_range_release (&exp->ranges, &range);
    r = reserved == -1 ? wtp_fail (errno)
      : wtp_finish (&slot, &rec, hashes, buf, err, fua);
  }
  wtp_index_spare_put (&spare);
  if (f->kind != WTP_FAULT_NONE)
    wtp_faults_record (f, reserved == -1 ? 0 : rec.seq, offset, count);
  if (hashes != stack_hashes)
    free (hashes);
  return r;
}

/* A request refused before it touches the image: logged as FAILED (no
 * payload), so the log still holds every request; fails with err. */
static int
wtp_refuse (struct wtp_handle *h, uint16_t type, uint16_t rflags,
            uint64_t count, uint64_t offset, uint64_t t_start, int err)
{
  struct wtlog_record rec = {
    .type = type, .flags = rflags | WTLOG_F_FAILED, .conn = h->conn,
    .err = err, .t_start = t_start, .t_end = wtp_log_now (),
    .offset = offset, .length = count,
  };
  if (wtp_log_append (&rec, NULL, NULL) == -1)
    return wtp_fail (errno);
  return wtp_fail (err);
}

static int
wtp_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  struct wtp_fault f = { .kind = WTP_FAULT_NONE };
  uint16_t fua = flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (count == 0)
    return 0;
  /* nbdkit passes at most 64 MiB, whose record fits; a larger write could
   * not be logged, so it must not reach the image either. */
  if (!wtlog_record_size_ok (wtlog_record_size (h->exp->write_type,
                                                wtp_data_flag (),
                                                offset, count)))
    return wtp_refuse (h, h->exp->write_type, fua, count, offset, t_start,
                       EINVAL);
  if (h->exp == &wtp_disk && wtp_faults_any ()
      && wtp_faults_decide (offset, count, t_start, &f) == -1)
    return wtp_fail (ENOMEM);
  return wtp_write_recorded (h, buf, count, offset, flags & NBDKIT_FLAG_FUA,
                             t_start, &f);
}

static bool
wtp_unsupported (int err)
{
  return err == EOPNOTSUPP || err == ENOTSUP || err == ENOSYS;
}

static int
wtp_write_zeroes (int fd, uint64_t offset, uint64_t count)
{
  while (count > 0) {
    size_t n = count < WTP_ZERO_CHUNK ? count : WTP_ZERO_CHUNK;
    int err = wtp_pwrite_all (fd, wtp_zeroes, n, offset);
    if (err)
      return err;
    offset += n;
    count -= n;
  }
  return 0;
}

/* Makes [offset, offset+count) read as zeroes: a hole when allowed, else a
 * zeroed range, else written zeroes (unless only fast zeroing will do).
 * 0 or errno. */
static int
wtp_zero_range (int fd, uint64_t offset, uint64_t count, bool may_trim,
                bool fast)
{
  if (count == 0)
    return 0;
  if (may_trim) {
    if (fallocate (fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                   (off_t) offset, (off_t) count) == 0)
      return 0;
    if (!wtp_unsupported (errno))
      return errno;
  }
  if (fallocate (fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                 (off_t) offset, (off_t) count) == 0)
    return 0;
  if (!wtp_unsupported (errno))
    return errno;
  if (fast)
    return ENOTSUP;
  return wtp_write_zeroes (fd, offset, count);
}

/* ZERO and TRIM of whole sectors: done and reserved under the range lock. */
static int
wtp_zero_recorded (struct wtp_handle *h, uint16_t type, uint16_t rflags,
                   uint64_t count, uint64_t offset, uint64_t t_start)
{
  struct wtp_export *exp = h->exp;
  bool fua = rflags & WTLOG_F_FUA;
  struct wtp_range range;
  struct wtp_slot slot;
  struct wtp_index_spare spare = { NULL };
  bool store = wtp_is_store (exp);
  int err = 0;

  if (store && wtp_store_spare (&spare, offset, count) == -1)
    return wtp_fail (ENOMEM);
  wtp_range_acquire (&exp->ranges, &range, offset, offset + count);
  if (!store)
    err = wtp_zero_range (exp->fd, offset, count,
                          type == WTLOG_TRIM || (rflags & WTLOG_F_MAY_TRIM),
                          rflags & WTLOG_F_FAST_ZERO);
  if (!store && !err && fua && fdatasync (exp->fd) == -1)
    err = errno;
  if (err && err != ENOTSUP) {
    errno = err;
    nbdkit_error ("%s: %s: %s: %" PRIu64 "+%" PRIu64 ": %m",
                  type == WTLOG_TRIM ? "trim" : "zero", exp->what, exp->path,
                  offset, count);
  }
  struct wtlog_record rec = {
    .type = type, .flags = rflags | (err ? WTLOG_F_FAILED : 0),
    .conn = h->conn, .err = err, .t_start = t_start, .t_end = wtp_log_now (),
    .offset = offset, .length = count,
  };
  int reserved = store ? wtp_log_reserve (&slot, &rec)
    : wtp_log_reserve_copy (&slot, &rec, NULL, NULL);
  int r;
  if (reserved == 0 && store)
    r = wtp_finish_stored (exp, &range, &slot, &rec, NULL, NULL, &spare, fua);
  else {
    wtp_range_release (&exp->ranges, &range);
    r = reserved == -1 ? wtp_fail (errno)
      : wtp_finish (&slot, &rec, NULL, NULL, err, fua);
  }
  wtp_index_spare_put (&spare);
  return r;
}

/* A zero that does not cover whole sectors: the partial sector at each
 * edge is written with zeroes and logged as a WRITE (so it gets its hash
 * like any partial write), the whole sectors between the edges are zeroed
 * and logged as one ZERO.  Memory and record sizes stay small for any
 * legal length (up to 4 GiB - 1): an edge is under one sector, and its
 * zeroes are static.  The pieces go in address order, each under its own
 * range lock, so each record matches what its piece did to the image.
 * FUA goes with the last piece: its image and log syncs cover the earlier
 * pieces too. */
static int
wtp_zero_unaligned (struct wtp_handle *h, uint16_t rflags, uint32_t count,
                    uint64_t offset, uint64_t t_start)
{
  struct wtp_fault none = { .kind = WTP_FAULT_NONE };
  uint64_t end = offset + count;
  uint64_t lo = (offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  uint64_t hi = end / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  bool fua = rflags & WTLOG_F_FUA;

  if (hi <= lo)                 /* no whole sector: under 1 KiB in all */
    return wtp_write_recorded (h, wtp_zeroes, count, offset, fua, t_start,
                               &none);
  bool tail = end > hi;
  if (offset < lo && wtp_write_recorded (h, wtp_zeroes, lo - offset, offset,
                                         false, t_start, &none) == -1)
    return -1;
  uint16_t middle_flags = tail ? rflags & ~WTLOG_F_FUA : rflags;
  if (wtp_zero_recorded (h, WTLOG_ZERO, middle_flags, hi - lo, lo,
                         t_start) == -1)
    return -1;
  if (tail)
    return wtp_write_recorded (h, wtp_zeroes, end - hi, hi, fua, t_start,
                               &none);
  return 0;
}

static uint16_t
wtp_record_flags (uint32_t flags)
{
  return (flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0)
    | (flags & NBDKIT_FLAG_MAY_TRIM ? WTLOG_F_MAY_TRIM : 0)
    | (flags & NBDKIT_FLAG_FAST_ZERO ? WTLOG_F_FAST_ZERO : 0);
}

static int
wtp_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  uint16_t rflags = wtp_record_flags (flags);

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (count == 0)
    return 0;
  if ((offset | count) % WT_SECTOR_SIZE == 0)
    return wtp_zero_recorded (h, WTLOG_ZERO, rflags, count, offset, t_start);
  /* Writing the edges is a write: refused as a fast zero must be. */
  if (flags & NBDKIT_FLAG_FAST_ZERO)
    return wtp_refuse (h, WTLOG_ZERO, rflags, count, offset, t_start, ENOTSUP);
  return wtp_zero_unaligned (h, rflags, count, offset, t_start);
}

/* A trim punches the whole sectors inside its range; the record holds that
 * shrunk range (length 0 when no whole sector is inside). */
static int
wtp_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  uint64_t lo = (offset + WT_SECTOR_SIZE - 1) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;
  uint64_t hi = (offset + count) / WT_SECTOR_SIZE * WT_SECTOR_SIZE;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  if (hi <= lo) {
    lo = offset;
    hi = offset;
  }
  return wtp_zero_recorded (h, WTLOG_TRIM, flags & NBDKIT_FLAG_FUA ? WTLOG_F_FUA : 0,
                            hi - lo, lo, t_start);
}

/* FLUSH: the image first, then a FLUSH record, then the log itself.  The
 * channel's flushes are not logged (FLUSH records describe the disk). */
static int
wtp_flush (void *handle, uint32_t flags)
{
  struct wtp_handle *h = handle;
  uint64_t t_start = wtp_log_now ();
  int err = 0;

  if (wtp_log_is_broken ())
    return wtp_fail (EIO);
  /* With the log as the store the image holds nothing new to sync. */
  if (!wtp_is_store (h->exp) && fdatasync (h->exp->fd) == -1) {
    err = errno;
    nbdkit_error ("fdatasync: %s: %s: %m", h->exp->what, h->exp->path);
  }
  if (h->exp == &wtp_disk) {
    struct wtlog_record rec = {
      .type = WTLOG_FLUSH, .flags = err ? WTLOG_F_FAILED : 0, .conn = h->conn,
      .err = err, .t_start = t_start, .t_end = wtp_log_now (),
    };
    if (wtp_log_append (&rec, NULL, NULL) == -1)
      return wtp_fail (errno);
  }
  if (err)
    return wtp_fail (err);
  wtp_faults_sync ();
  if (wtp_log_sync () == -1)
    return wtp_fail (errno);
  return 0;
}

static int
wtp_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
             struct nbdkit_extents *extents)
{
  struct wtp_handle *h = handle;
  int fd = h->exp->fd;
  uint64_t end = offset + count;
  bool one = flags & NBDKIT_FLAG_REQ_ONE;

  while (offset < end) {
    off_t data = lseek (fd, (off_t) offset, SEEK_DATA);
    if (data == -1 && errno != ENXIO) {
      nbdkit_error ("lseek: SEEK_DATA: %s: %s: %m", h->exp->what, h->exp->path);
      return -1;
    }
    uint64_t hole_end = data == -1 ? end : (uint64_t) data;
    if (hole_end > offset) {
      if (nbdkit_add_extent (extents, offset, hole_end - offset,
                             NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO) == -1)
        return -1;
      offset = hole_end;
      if (one)
        break;
      continue;
    }
    off_t hole = lseek (fd, (off_t) offset, SEEK_HOLE);
    if (hole == -1) {
      nbdkit_error ("lseek: SEEK_HOLE: %s: %s: %m", h->exp->what, h->exp->path);
      return -1;
    }
    if (nbdkit_add_extent (extents, offset, (uint64_t) hole - offset, 0) == -1)
      return -1;
    offset = (uint64_t) hole;
    if (one)
      break;
  }
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "wtrack",
  .longname = "nbdkit wtrack plugin",
  .version = WTP_VERSION,
  .description = "serve a disk image and record every request in a write log",
  .magic_config_key = "file",
  .config = wtp_config,
  .config_complete = wtp_config_complete,
  .config_help = wtp_config_help,
  .get_ready = wtp_get_ready,
  .after_fork = wtp_after_fork,
  .cleanup = wtp_cleanup,
  .unload = wtp_unload,
  .dump_plugin = wtp_dump_plugin,
  .list_exports = wtp_list_exports,
  .open = wtp_open,
  .close = wtp_close,
  .get_size = wtp_get_size,
  .block_size = wtp_block_size,
  .can_write = wtp_can_write,
  .can_flush = wtp_can_flush,
  .can_fua = wtp_can_fua,
  .can_multi_conn = wtp_can_multi_conn,
  .can_trim = wtp_can_trim,
  .can_zero = wtp_can_zero,
  .can_fast_zero = wtp_can_fast_zero,
  .can_extents = wtp_can_extents,
  .pread = wtp_pread,
  .pwrite = wtp_pwrite,
  .zero = wtp_zero,
  .trim = wtp_trim,
  .flush = wtp_flush,
  .extents = wtp_extents,
  .errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN (plugin)
