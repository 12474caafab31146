/* dm-log-writes into a wtrack log (interchange/interchange.h): a first
 * pass finds the disk's size and the MARKs' channel, the second writes the
 * records. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "channel.h"
#include "commands.h"
#include "fileio.h"
#include "interchange/dmlog-format.h"
#include "interchange/interchange.h"
#include "lib/cli.h"
#include "lib/util.h"
#include "sector-hash.h"
#include "wtlog.h"

#define WTC_IMPORT_DISK_CONN 1
#define WTC_IMPORT_CHANNEL_CONN 2
/* An entry's data is read and logged this many bytes at a time: a larger
 * entry becomes several WRITE records, each far inside the wtlog's
 * maximum record size, and memory stays at one piece. A multiple of every
 * sector size the reader accepts (at most 1 MiB). */
#define WTC_IMPORT_PIECE (8u << 20)

/* What a first pass over the entries found. */
struct wtc_import_scan {
  uint64_t entries;             /* sound entries, in order */
  uint64_t max_byte;            /* the end of the furthest range touched */
  uint64_t marks;
  uint64_t channel_bytes;       /* the MARK messages, encoded */
  bool bad;                     /* a bad entry stopped the scan */
  bool more;                    /* sound entries past the super block's count */
};

struct wtc_import {
  struct wtlog_writer *w;
  int channel_fd;
  const char *channel_path;
  uint64_t channel_pos;
  uint64_t mark_number;
  uint32_t ss;
  uint64_t *hashes;
  size_t hashes_cap;
  unsigned char *piece;         /* WTC_IMPORT_PIECE bytes of an entry's data */
  struct wtc_dmlog_reader *r;
  unsigned char *msg;
  uint64_t writes, flushes, trims;
};

static uint64_t
wtc_mark_message_size (uint64_t text_len)
{
  return wtch_encoded_size ((uint32_t) text_len);
}

static void
wtc_import_scan (struct wtc_dmlog_reader *r, struct wtc_import_scan *s,
                 GError **error)
{
  struct wtc_dmlog_entry e;
  uint64_t ss = wtc_dmlog_reader_sector_size (r);
  int rc;
  memset (s, 0, sizeof *s);
  while ((rc = wtc_dmlog_reader_next (r, &e, true, error)) == 0) {
    s->entries++;
    if (e.flags & WTC_DMLOG_MARK) {
      s->marks++;
      s->channel_bytes += wtc_mark_message_size (e.data_len);
    }
    else if (e.nr_sectors && (e.sector + e.nr_sectors) * ss > s->max_byte)
      s->max_byte = (e.sector + e.nr_sectors) * ss;
  }
  s->bad = rc == -1;
  s->more = !s->bad && wtc_dmlog_reader_more (r);
  wtc_dmlog_reader_rewind (r);
}

/* Records. */

static bool
wtc_import_append (struct wtc_import *im, struct wtlog_record *rec,
                   const uint64_t *hashes, const void *data, GError **error)
{
  if (wtlog_writer_append (im->w, rec, hashes, data) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: the wtrack log: %s", g_strerror (errno));
    return false;
  }
  return true;
}

static bool
wtc_import_simple (struct wtc_import *im, uint16_t type, uint16_t flags,
                   uint32_t conn, uint64_t offset, uint64_t length, GError **error)
{
  struct wtlog_record rec = {
    .type = type, .flags = flags, .conn = conn, .offset = offset, .length = length,
  };
  return wtc_import_append (im, &rec, NULL, NULL, error);
}

static uint64_t *
wtc_import_hashes (struct wtc_import *im, const void *data, uint64_t bytes)
{
  uint64_t n = bytes / WT_SECTOR_SIZE;
  if (n > im->hashes_cap) {
    g_free (im->hashes);
    im->hashes = g_new (uint64_t, n);
    im->hashes_cap = n;
  }
  wt_sector_hashes (data, n, im->hashes);
  return im->hashes;
}

/* A write entry as WRITE records of at most WTC_IMPORT_PIECE bytes each, in
 * order; each keeps the entry's FUA (a FUA write is durable as a whole). */
static bool
wtc_import_write (struct wtc_import *im, const struct wtc_dmlog_entry *e,
                  GError **error)
{
  if (!im->piece)
    im->piece = g_malloc (WTC_IMPORT_PIECE);
  im->writes++;
  for (uint64_t done = 0; done < e->data_bytes;) {
    size_t n = (size_t) MIN (e->data_bytes - done, (uint64_t) WTC_IMPORT_PIECE);
    struct wtlog_record rec = {
      .type = WTLOG_WRITE, .conn = WTC_IMPORT_DISK_CONN,
      .flags = WTLOG_F_DATA | ((e->flags & WTC_DMLOG_FUA) ? WTLOG_F_FUA : 0),
      .offset = e->sector * im->ss + done, .length = n,
    };
    if (!wtc_dmlog_reader_data (im->r, e, done, im->piece, n, error)
        || !wtc_import_append (im, &rec, wtc_import_hashes (im, im->piece, n),
                               im->piece, error))
      return false;
    done += n;
  }
  return true;
}

/* A MARK: a message in the channel, and the CHANNEL record of its write. */
static bool
wtc_import_mark (struct wtc_import *im, const struct wtc_dmlog_entry *e,
                 GError **error)
{
  uint64_t size = wtch_encode (im->msg, WTCH_MARK, 0, ++im->mark_number, 0,
                               e->mark, (uint32_t) e->data_len);
  if (wt_pwrite_full (im->channel_fd, im->msg, size, im->channel_pos) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: %s: %s", im->channel_path,
                 g_strerror (errno));
    return false;
  }
  struct wtlog_record rec = {
    .type = WTLOG_CHANNEL, .flags = WTLOG_F_DATA, .conn = WTC_IMPORT_CHANNEL_CONN,
    .offset = im->channel_pos, .length = size,
  };
  im->channel_pos += size;
  return wtc_import_append (im, &rec, wtc_import_hashes (im, im->msg, size),
                            im->msg, error);
}

static bool
wtc_import_entry (struct wtc_import *im, const struct wtc_dmlog_entry *e,
                  GError **error)
{
  uint16_t fua = (e->flags & WTC_DMLOG_FUA) ? WTLOG_F_FUA : 0;
  if (e->flags & WTC_DMLOG_MARK)
    return wtc_import_mark (im, e, error);
  /* FLUSH on an entry with data is a preflush: it comes before the write. */
  if (e->flags & WTC_DMLOG_FLUSH) {
    im->flushes++;
    if (!wtc_import_simple (im, WTLOG_FLUSH, 0, WTC_IMPORT_DISK_CONN, 0, 0, error))
      return false;
  }
  if (e->nr_sectors == 0)
    return true;
  if (e->flags & WTC_DMLOG_DISCARD) {
    im->trims++;
    return wtc_import_simple (im, WTLOG_TRIM, fua, WTC_IMPORT_DISK_CONN,
                              e->sector * im->ss, e->nr_sectors * im->ss, error);
  }
  return wtc_import_write (im, e, error);
}

static bool
wtc_import_entries (struct wtc_import *im, struct wtc_dmlog_reader *r,
                    uint64_t count, GError **error)
{
  struct wtc_dmlog_entry e;
  for (uint64_t i = 0; i < count; i++)
    if (wtc_dmlog_reader_next (r, &e, true, error) != 0
        || !wtc_import_entry (im, &e, error))
      return false;
  return true;
}

/* OPEN records first, CLOSE records last (conn 0: the log is complete). */
static bool
wtc_import_bracket (struct wtc_import *im, uint16_t type, const struct wtlog_header *h,
                    GError **error)
{
  bool ok = wtc_import_simple (im, type, 0, WTC_IMPORT_DISK_CONN, WTLOG_EXPORT_DISK,
                               h->disk_size, error);
  if (ok && h->channel_size)
    ok = wtc_import_simple (im, type, 0, WTC_IMPORT_CHANNEL_CONN, WTLOG_EXPORT_CHANNEL,
                            h->channel_size, error);
  if (ok && type == WTLOG_CLOSE)
    ok = wtc_import_simple (im, WTLOG_CLOSE, 0, 0, 0, 0, error);
  return ok;
}

static bool
wtc_import_disk_size (const struct wtc_import_request *o, const struct wtc_import_scan *s,
                      const char *in, uint64_t *size, GError **error)
{
  *size = s->max_byte;
  if (o->disk_size < 0)
    return true;
  if ((uint64_t) o->disk_size < s->max_byte) {
    g_set_error (error, WTC_ERROR, 0, "--disk-size %" PRId64 ": %s writes up to "
                 "byte %" PRIu64, o->disk_size, in, s->max_byte);
    return false;
  }
  *size = (uint64_t) o->disk_size;
  return true;
}

static bool
wtc_import_open_channel (struct wtc_import *im, uint64_t size, GError **error)
{
  im->channel_fd = open (im->channel_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (im->channel_fd < 0 || ftruncate (im->channel_fd, (off_t) size) == -1) {
    g_set_error (error, WTC_ERROR, 0, "open: %s: %s", im->channel_path,
                 g_strerror (errno));
    return false;
  }
  im->msg = g_malloc0 (wtc_mark_message_size (im->ss - WTC_DMLOG_ENTRY_SIZE));
  return true;
}

int
wtc_import_dmlog (const struct wtc_import_request *o)
{
  const char *in = o->in, *out = o->out;
  g_autoptr (GError) error = NULL;
  g_autoptr (GError) scan_error = NULL;
  g_autofree char *channel = o->channel ? g_strdup (o->channel)
    : g_strdup_printf ("%s.channel.bin", out);
  struct wtc_import_scan scan;
  struct wtlog_header h;
  char err[512];
  uint64_t disk_size;
  struct wtc_import im = { .channel_fd = -1, .channel_path = channel };

  struct wtc_dmlog_reader *r = wtc_dmlog_reader_open (in, &error);
  if (!r) {
    wtc_cli_error ("%s", error->message);
    return WT_EXIT_ERROR;
  }
  im.ss = wtc_dmlog_reader_sector_size (r);
  im.r = r;
  wtc_import_scan (r, &scan, &scan_error);
  if (scan.more)
    wtc_cli_warning ("%s holds sound entries past the %" PRIu64
                " its super block counts (written after its last update): they "
                "are not imported", in, scan.entries);
  bool ok = wtc_import_disk_size (o, &scan, in, &disk_size, &error)
    && (!scan.marks || wtc_import_open_channel (&im, scan.channel_bytes, &error));
  if (ok) {
    wtlog_header_init (&h, disk_size, scan.marks ? scan.channel_bytes : 0, true,
                       "wtrack import dm-log-writes");
    h.flags |= WTLOG_H_NOTIME;
    h.start_realtime_ns = h.start_monotonic_ns = 0;
    im.w = wtlog_writer_open (out, &h, err, sizeof err);
    if (!im.w) {
      g_set_error (&error, WTC_ERROR, 0, "%s", err);
      ok = false;
    }
  }
  ok = ok && wtc_import_bracket (&im, WTLOG_OPEN, &h, &error)
    && wtc_import_entries (&im, r, scan.entries, &error)
    && wtc_import_bracket (&im, WTLOG_CLOSE, &h, &error);
  if (im.w && wtlog_writer_close (im.w) == -1 && ok) {
    g_set_error (&error, WTC_ERROR, 0, "close: %s: %s", out, g_strerror (errno));
    ok = false;
  }
  if (im.channel_fd >= 0 && close (im.channel_fd) == -1 && ok) {
    g_set_error (&error, WTC_ERROR, 0, "close: %s: %s", channel, g_strerror (errno));
    ok = false;
  }
  if (!ok)
    wtc_cli_error ("%s", error->message);
  else if (scan.bad)
    wtc_cli_error ("%s (the %" PRIu64 " entries before it are imported)",
                scan_error->message, scan.entries);
  if (ok && o->verbose)
    wtc_cli_error ("%s: %" PRIu64 " entries: %" PRIu64 " writes, %" PRIu64
                " flushes, %" PRIu64 " discards, %" PRIu64 " marks%s%s; disk %" PRIu64
                " bytes", out, scan.entries, im.writes, im.flushes, im.trims,
                scan.marks, scan.marks ? " in " : "", scan.marks ? channel : "",
                disk_size);
  wtc_dmlog_reader_close (r);
  g_free (im.hashes);
  g_free (im.piece);
  g_free (im.msg);
  return ok && !scan.bad ? WT_EXIT_OK : WT_EXIT_ERROR;
}
