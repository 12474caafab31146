/* nbdkit-wtrack-plugin: serves a disk image (and a channel image) and records
 * every request in writes.wtlog, so lost writes can be found afterwards.
 * See nbdkit-wtrack-plugin.pod and doc/formats.md.
 * This file is the plugin: its struct, its configuration, its lifecycle
 * (get_ready, the threads, unload) and its connections (open, close, what
 * each export can do).  The requests are served in request.c, the log as
 * the disk's store is store.c, and the log itself log.c. */
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
#include "export.h"
#include "faults.h"
#include "log.h"
#include "owners.h"
#include "phase.h"
#include "rangelock.h"
#include "request.h"
#include "sector-hash.h"
#include "store.h"
#include "wtlog.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#ifndef WTP_VERSION
#define WTP_VERSION "0.1"
#endif


static struct wtp_export wtp_disk = {
  .what = "disk", .fd = -1, .log_id = WTLOG_EXPORT_DISK,
  .write_type = WTLOG_WRITE, .ranges = WTP_RANGE_LOCK_INIT,
};
static struct wtp_export wtp_channel = {
  .what = "channel", .fd = -1, .log_id = WTLOG_EXPORT_CHANNEL,
  .write_type = WTLOG_CHANNEL, .ranges = WTP_RANGE_LOCK_INIT,
};

static char *wtp_log_path;
static char *wtp_faults_path;
static bool wtp_data;
static bool wtp_stage = true;           /* stage=on (the default) */
static int64_t wtp_channel_size = -1;   /* -1: the channel file's own size */
static bool wtp_ready;                  /* the log exists */
static uint32_t wtp_last_conn;

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
  wtp_store_choose (&wtp_disk, wtp_stage, wtp_data);
  if (wtp_store_open () == -1
      || (wtp_store_mode && wtp_owners_open (&wtp_disk, wtp_data) == -1))
    return -1;
  wtlog_header_init (&h, wtp_disk.size, wtp_channel.path ? wtp_channel.size : 0,
                     wtp_data || wtp_store_mode,
                     "nbdkit-wtrack-plugin " WTP_VERSION);
  if (wtp_store_mode)
    h.flags |= WTLOG_H_STORE;
  if (wtp_store_queue_setup () == -1)
    return -1;
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
  struct timespec unload, phase;
  wtp_phase_start (&unload);
  bool applied = !wtp_store_mode || (wtp_ready && wtp_store_apply (wtp_log_path));
  bool closed = false;
  wtp_store_close ();
  wtp_owners_close ();
  if (wtp_ready && applied && !wtp_log_is_broken ()) {
    uint64_t now = wtp_log_now ();
    struct wtlog_record rec = { .type = WTLOG_CLOSE, .t_start = now,
                                .t_end = now };
    closed = wtp_log_append (&rec, NULL, NULL) == 0;
    if (!closed)
      nbdkit_error ("write: log: final close record: %m");
  }
  wtp_phase_start (&phase);
  wtp_export_close (&wtp_disk);
  wtp_export_close (&wtp_channel);
  wtp_phase_done ("exports close", &phase);
  wtp_phase_start (&phase);
  wtp_log_close ();
  wtp_phase_done ("log close", &phase);
  /* Only a closed log: an unclosed one's bytes are the disk's only copy. */
  if (wtp_store_mode && !wtp_data && closed)
    wtp_store_strip (wtp_log_path);
  wtp_faults_close ();
  wtp_phase_done ("unload", &unload);
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
  *maximum = WTP_MAX_WRITE;
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
