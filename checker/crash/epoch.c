/* An epoch's writes and the undo stack (crash/epoch.h). */
#include "crash/epoch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "lib/util.h"

/* The most bytes held in memory at once while applying or undoing. */
#define WTC_EPOCH_CHUNK (1u << 20)
/* An undo piece whose old bytes were all zero: nothing kept in the file. */
#define WTC_UNDO_ZERO UINT64_MAX

struct wtc_undo_piece {
  uint64_t offset, length;
  uint64_t at;                  /* its old bytes in the file, or WTC_UNDO_ZERO */
};

struct wtc_undo {
  int fd;
  char *path;                   /* for messages; the file is unlinked */
  uint64_t end;                 /* bytes used in the file */
  GArray *pieces;               /* struct wtc_undo_piece, oldest first */
  guint writes;
  unsigned char *buf;           /* WTC_EPOCH_CHUNK bytes */
  GPtrArray *warnings;          /* the caller's, or NULL */
};

GArray *
wtc_epoch_new (void)
{
  return g_array_new (false, false, sizeof (struct wtc_epoch_write));
}

void
wtc_epoch_add (GArray *epoch, const struct wtlog_record *rec)
{
  struct wtc_epoch_write w = {
    .seq = rec->seq, .offset = rec->offset, .length = rec->length,
    .data_at = rec->type == WTLOG_WRITE && rec->data
      ? rec->log_offset + WTLOG_FIXED_SIZE + 8 * rec->nhashes : 0,
    .in_image = wt_record_in_image (rec),
  };
  g_array_append_val (epoch, w);
}

struct wtc_undo *
wtc_undo_new (const char *dir, GPtrArray *warnings, GError **error)
{
  struct wtc_undo *u = g_new0 (struct wtc_undo, 1);
  u->warnings = warnings;
  u->path = g_build_filename (dir, "undo-XXXXXX", NULL);
  u->fd = g_mkstemp (u->path);
  if (u->fd < 0) {
    g_set_error (error, WTC_ERROR, 0, "create: %s: %s", u->path, g_strerror (errno));
    wtc_undo_free (u);
    return NULL;
  }
  unlink (u->path);
  u->pieces = g_array_new (false, false, sizeof (struct wtc_undo_piece));
  u->buf = g_malloc (WTC_EPOCH_CHUNK);
  return u;
}

void
wtc_undo_free (struct wtc_undo *u)
{
  if (!u)
    return;
  if (u->fd >= 0)
    close (u->fd);
  if (u->pieces)
    g_array_unref (u->pieces);
  g_free (u->path);
  g_free (u->buf);
  g_free (u);
}

guint
wtc_undo_writes (const struct wtc_undo *u)
{
  return u->writes;
}

void
wtc_undo_clear (struct wtc_undo *u)
{
  g_array_set_size (u->pieces, 0);
  u->writes = 0;
  u->end = 0;
  /* The space of the old bytes goes back to the file system. */
  if (ftruncate (u->fd, 0) == -1 && u->warnings)
    g_ptr_array_add (u->warnings, g_strdup_printf ("truncate: %s: %s", u->path,
                                                   g_strerror (errno)));
}

static bool
wtc_all_zero (const unsigned char *p, size_t n)
{
  return n == 0 || (p[0] == 0 && memcmp (p, p + 1, n - 1) == 0);
}

static bool
wtc_fd_pread (int fd, const char *name, void *buf, size_t len, uint64_t at,
              GError **error)
{
  ssize_t got = wt_pread_full (fd, buf, len, at);
  if (got == (ssize_t) len)
    return true;
  g_set_error (error, WTC_ERROR, 0, "read: %s at byte %" PRIu64 ": %s", name,
               got < 0 ? at : at + (uint64_t) got,
               got < 0 ? g_strerror (errno) : "unexpected end of file");
  return false;
}

static bool
wtc_fd_pwrite (int fd, const char *name, const void *buf, size_t len, uint64_t at,
               GError **error)
{
  if (wt_pwrite_full (fd, buf, len, at) == -1) {
    g_set_error (error, WTC_ERROR, 0, "write: %s at byte %" PRIu64 ": %s", name, at,
                 g_strerror (errno));
    return false;
  }
  return true;
}

/* How many bytes from offset (up to length) are a hole of the file t:
 * they need not be read to be undone. */
static uint64_t
wtc_undo_hole (struct wt_image *t, uint64_t offset, uint64_t length)
{
  if (t->blockdev)
    return 0;
  off_t data = lseek (t->fd, (off_t) offset, SEEK_DATA);
  if (data < 0)
    return errno == ENXIO ? length : 0;
  return MIN ((uint64_t) data - offset, length);
}

/* The old bytes of [offset, offset+length) of t, a chunk at a time. */
bool
wtc_undo_save (struct wtc_undo *u, struct wt_image *t, uint64_t offset,
               uint64_t length, GError **error)
{
  while (length > 0) {
    uint64_t hole = wtc_undo_hole (t, offset, length);
    if (hole) {
      struct wtc_undo_piece p = { offset, hole, WTC_UNDO_ZERO };
      g_array_append_val (u->pieces, p);
      offset += hole;
      length -= hole;
      continue;
    }
    size_t n = (size_t) MIN (length, (uint64_t) WTC_EPOCH_CHUNK);
    struct wtc_undo_piece p = { offset, n, WTC_UNDO_ZERO };
    if (!wtc_target_read (t, offset, u->buf, n, error))
      return false;
    if (!wtc_all_zero (u->buf, n)) {
      if (!wtc_fd_pwrite (u->fd, u->path, u->buf, n, u->end, error))
        return false;
      p.at = u->end;
      u->end += n;
    }
    g_array_append_val (u->pieces, p);
    offset += n;
    length -= n;
  }
  u->writes++;
  return true;
}

static bool
wtc_epoch_copy_data (struct wt_image *t, int log_fd, const struct wtc_epoch_write *w,
                     unsigned char *buf, GError **error)
{
  for (uint64_t done = 0; done < w->length;) {
    size_t n = (size_t) MIN (w->length - done, (uint64_t) WTC_EPOCH_CHUNK);
    if (!wtc_fd_pread (log_fd, "the log", buf, n, w->data_at + done, error)
        || !wtc_target_write (t, w->offset + done, buf, n, error))
      return false;
    done += n;
  }
  return true;
}

bool
wtc_epoch_apply (struct wt_image *t, int log_fd, const struct wtc_epoch_write *w,
                 struct wtc_undo *undo, GError **error)
{
  if (undo && !wtc_undo_save (undo, t, w->offset, w->length, error))
    return false;
  if (w->in_image) {
    char err[1024];
    /* Checked against its hashes when the walk first applied it. */
    if (wt_image_write_in_image (t, w->seq, w->offset, w->length, NULL, err,
                                 sizeof err) == 0)
      return true;
    g_set_error (error, WTC_ERROR, 0, "%s", err);
    return false;
  }
  if (!w->data_at)
    return wtc_target_zero (t, w->offset, w->length, error);
  g_autofree unsigned char *buf = g_malloc (MIN (MAX (w->length, 1),
                                                 (uint64_t) WTC_EPOCH_CHUNK));
  return wtc_epoch_copy_data (t, log_fd, w, buf, error);
}

bool
wtc_undo_all (struct wt_image *t, struct wtc_undo *u, GError **error)
{
  for (guint i = u->pieces->len; i-- > 0;) {
    const struct wtc_undo_piece *p = &g_array_index (u->pieces, struct wtc_undo_piece, i);
    if (p->at == WTC_UNDO_ZERO) {
      if (!wtc_target_zero (t, p->offset, p->length, error))
        return false;
      continue;
    }
    if (!wtc_fd_pread (u->fd, u->path, u->buf, p->length, p->at, error)
        || !wtc_target_write (t, p->offset, u->buf, p->length, error))
      return false;
  }
  wtc_undo_clear (u);
  return true;
}
